"""JSON Schema -> Lark grammar text, built then as any grammar (docs/json-schema.md).

`schema_to_lark(schema)` lowers a schema (a dict or a boolean) to one Lark grammar: a rule per
subschema (a `$ref` is one rule per target, so recursive schemas are recursive rules), strings,
numbers and object keys as terminals (regular languages), objects as their properties in schema
order. What the lowering cannot give exactly is an error naming the keyword and its JSON pointer
(`SchemaUnsupported`), never an approximation. Keywords with no say over validity (annotations,
vendor extensions) are ignored.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, Literal

from glrmask_cli.errors import GrammarError
from glrmask_cli.schema_pattern import PatternUnsupported, content_regexp

Whitespace = Literal["flexible", "compact"]

# Validation keywords of JSON Schema (drafts 4 to 2020-12) that the lowering does not compile: an
# error. Every other keyword that is neither supported (below) nor one of these is an annotation
# (title, description, examples, vendor extensions such as x-...): the specification gives it no
# say over validity, so it is ignored.
UNSUPPORTED = frozenset({
    "not", "patternProperties", "propertyNames", "minProperties", "maxProperties",
    "dependencies", "dependentRequired", "dependentSchemas", "if", "then", "else", "uniqueItems",
    "contains", "minContains", "maxContains", "unevaluatedProperties", "unevaluatedItems", "multipleOf",
    "$dynamicRef", "$recursiveRef", "$dynamicAnchor", "$recursiveAnchor",
})
_DEFS = frozenset({"$defs", "definitions"})
_BY_TYPE = {
    "object": frozenset({"properties", "required", "additionalProperties"}),
    "array": frozenset({"items", "prefixItems", "minItems", "maxItems", "additionalItems"}),
    "string": frozenset({"minLength", "maxLength", "format", "pattern"}),
    "integer": frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}),
    "number": frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}),
    "boolean": frozenset(),
    "null": frozenset(),
}
_GENERAL = frozenset({"type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref"}) | _DEFS
_SUPPORTED = _GENERAL.union(*_BY_TYPE.values())
TYPES = tuple(_BY_TYPE)
MAX_REPEAT = 1000       # the most items minItems/maxItems spell out
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")

_CHAR = r'(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})'
_INT = r"-?(?:0|[1-9][0-9]*)"
_NUMBER = _INT + r"(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
_FORMATS = {
    "date": r"[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])",
    "time": r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)(?:\.[0-9]+)?"
            r"(?:[zZ]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])",
    "uuid": r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    "ipv4": r"(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])",
}
_FORMATS["date-time"] = _FORMATS["date"] + "[tT]" + _FORMATS["time"]
_FORMATS["email"] = r'[^"\\\x00-\x1f]*@[^"\\\x00-\x1f]*'       # as jsonschema checks it: an @ somewhere


def _ipv6() -> str:
    """RFC 4291 text forms, as Python's ipaddress reads them: 8 groups of 1-4 hex digits, the last
    two possibly an IPv4 address, at most one "::" standing for one or more zero groups."""
    group, ipv4 = "[0-9a-fA-F]{1,4}", _FORMATS["ipv4"]

    def run(n: int) -> str:        # n groups separated by ":"
        return "" if n == 0 else group + (f"(?::{group}){{{n - 1}}}" if n > 1 else "")

    def tail(units: int) -> list[str]:    # `units` 16-bit units after a "::" or at the end
        forms = [run(units)]
        if units == 2:
            forms.append(ipv4)
        elif units > 2:
            forms.append(run(units - 2) + ":" + ipv4)
        return forms

    forms = tail(8)
    for left in range(8):
        for right in range(8 - left):
            forms += [run(left) + "::" + form for form in tail(right)]
    return "(?:" + "|".join(dict.fromkeys(forms)) + ")"


_FORMATS["ipv6"] = _ipv6()


class SchemaUnsupported(GrammarError):
    """A schema keyword (or value) the lowering cannot compile exactly; `where` is its JSON pointer."""


def schema_to_lark(schema: Any, whitespace: Whitespace = "flexible") -> str:
    """The Lark grammar (start rule `start`) whose language is the JSON texts `schema` accepts,
    minus the documented departures (docs/json-schema.md)."""
    return _Lowering(schema, whitespace).grammar()


def _pointer(path: tuple[str, ...]) -> str:
    return "#" + "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in path)


def _regex(pattern: str) -> str:
    """A Lark regexp terminal body for `pattern`."""
    return "/" + pattern.replace("/", "\\/") + "/"


class _Lowering:
    def __init__(self, schema: Any, whitespace: Whitespace) -> None:
        self.root = schema
        self.rules: dict[str, str] = {}
        self.terminals: dict[str, str] = {}        # pattern -> terminal name
        self.by_pointer: dict[str, str] = {}
        ws = r"[ \t\n\r]*" if whitespace == "flexible" else ""
        for name, char, before, after in [("LBRACE", r"\{", "", ws), ("RBRACE", r"\}", ws, ""),
                                          ("LSQB", r"\[", "", ws), ("RSQB", r"\]", ws, ""),
                                          ("COMMA", ",", ws, ws), ("COLON", ":", ws, ws)]:
            self.terminals[before + char + after] = name

    def grammar(self) -> str:
        top = self.rule(self.root, ())
        lines = [f"start: {top}"]
        lines += [f"{name}: {body}" for name, body in self.rules.items()]
        lines += [f"{name}: {_regex(pattern)}" for pattern, name in self.terminals.items()]
        return "\n".join(lines) + "\n"

    # -- helpers -----------------------------------------------------------------------------------

    def terminal(self, pattern: str, hint: str) -> str:
        """The terminal for `pattern`, named after `hint` (what it is: messages name it), made unique."""
        if pattern not in self.terminals:
            base = re.sub(r"[^A-Z0-9]+", "_", hint.upper().replace("-", "M")).strip("_")[:32] or "T"
            base = base if base[0].isalpha() else "T_" + base
            taken = set(self.terminals.values())
            name, k = base, 2
            while name in taken:
                name, k = f"{base}_{k}", k + 1
            self.terminals[pattern] = name
        return self.terminals[pattern]

    def new_rule(self, body: str, hint: str = "s") -> str:
        if re.fullmatch(r"\w+", body):                # one symbol: no rule of its own
            return body
        name = f"{hint}{len(self.rules)}"
        self.rules[name] = body
        return name

    def unsupported(self, path: tuple[str, ...], what: str) -> SchemaUnsupported:
        return SchemaUnsupported(_pointer(path), what, hint="docs/json-schema.md lists what is supported")

    # -- subschemas --------------------------------------------------------------------------------

    def rule(self, node: Any, path: tuple[str, ...]) -> str:
        """A rule name whose language is `node`'s instances."""
        if node is True or isinstance(node, Mapping) and not _constraining(node):
            return self.any_value()
        if node is False:
            raise self.unsupported(path, "the schema false accepts no instance")
        if not isinstance(node, Mapping):
            raise self.unsupported(path, f"a schema must be an object or a boolean, not {json.dumps(node)[:40]}")
        for key in node:
            if key in UNSUPPORTED:
                raise self.unsupported(path + (key,), f"keyword {key!r} is not supported")
        if "$ref" in node:
            others = {k for k in node if k in _SUPPORTED} - _DEFS - {"$ref"}
            if others:
                raise self.unsupported(path + (sorted(others)[0],), "keywords beside $ref are not supported")
            return self.ref(node["$ref"], path + ("$ref",))
        if "allOf" in node:
            return self.rule(self.merge_all(node, path), path)
        alternatives = []
        if "anyOf" in node or "oneOf" in node:
            key = "anyOf" if "anyOf" in node else "oneOf"
            if key == "oneOf":
                self.check_disjoint(node[key], path + (key,))
            rest = {k: v for k, v in node.items() if k != key}
            for i, option in enumerate(node[key]):
                merged = self.merge_all({"allOf": [rest, option]}, path + (key, str(i))) if _constraining(rest) \
                    else option
                alternatives.append(self.rule(merged, path + (key, str(i))))
            return self.new_rule(" | ".join(alternatives))
        if "const" in node or "enum" in node:
            values = [node["const"]] if "const" in node else list(node["enum"])
            return self.new_rule(" | ".join(self.value_rule(v) for v in values if self.valid_literal(v, node)) or
                                 self.fail(path + ("enum",)))
        types = node.get("type", list(TYPES))
        types = [types] if isinstance(types, str) else list(types)
        if "integer" in types and "number" in types:
            types.remove("integer")
        for t in types:
            if t not in _BY_TYPE:
                raise self.unsupported(path + ("type",), f"unknown type {t!r}")
            alternatives.append(getattr(self, "lower_" + t)(node, path))
        return self.new_rule(" | ".join(alternatives))

    def fail(self, path: tuple[str, ...]) -> str:
        raise self.unsupported(path, "no value is valid here")

    def ref(self, ref: Any, path: tuple[str, ...]) -> str:
        if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
            raise self.unsupported(path, f"only JSON-pointer references within the document are supported, "
                                   f"not {ref!r}")
        if ref not in self.by_pointer:
            target: Any = self.root
            parts = [p.replace("~1", "/").replace("~0", "~") for p in ref[2:].split("/")] if ref != "#" else []
            for part in parts:
                if isinstance(target, Mapping) and part in target:
                    target = target[part]
                elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
                    target = target[int(part)]
                else:
                    raise self.unsupported(path, f"reference {ref!r} points to nothing")
            name = self.by_pointer[ref] = f"r{len(self.by_pointer)}"
            self.rules[name] = ""                      # reserved: recursion refers to it
            self.rules[name] = self.rule(target, tuple(parts))
        return self.by_pointer[ref]

    def merge_all(self, node: Mapping, path: tuple[str, ...]) -> dict:
        """allOf merged into one schema: keys that only one part has, properties and required united;
        the same key with different values in two parts is an error."""
        merged: dict[str, Any] = {k: v for k, v in node.items() if k != "allOf"}
        for i, part in enumerate(node.get("allOf", [])):
            if part is True:
                continue
            if not isinstance(part, Mapping) or "$ref" in part or "anyOf" in part or "oneOf" in part:
                raise self.unsupported(path + ("allOf", str(i)), "allOf can merge only plain object schemas")
            part = self.merge_all(part, path + ("allOf", str(i))) if "allOf" in part else part
            for key, value in part.items():
                if key not in _SUPPORTED and key not in UNSUPPORTED:
                    continue            # an annotation (an unsupported keyword stays, for rule() to name)
                if key == "properties":
                    props = dict(merged.get("properties", {}))
                    for name, sub in value.items():
                        if name in props and props[name] != sub:
                            raise self.unsupported(path + ("allOf", str(i), key, name),
                                                   "allOf gives this property two different schemas")
                        props[name] = sub
                    merged["properties"] = props
                elif key == "required":
                    merged["required"] = list(dict.fromkeys(list(merged.get("required", [])) + list(value)))
                elif key in merged and merged[key] != value:
                    raise self.unsupported(path + ("allOf", str(i), key), f"allOf gives {key!r} two different values")
                else:
                    merged[key] = value
        return merged

    def check_disjoint(self, options: Any, path: tuple[str, ...]) -> None:
        """oneOf is compiled as anyOf only when no instance can match two options: here, when each
        option admits one JSON type and no two admit the same (integer within number counts)."""
        seen: set[str] = set()
        for i, option in enumerate(options):
            t = option.get("type") if isinstance(option, Mapping) else None
            kinds = {"number"} if t in ("integer", "number") else {t} if isinstance(t, str) else None
            if kinds is None or kinds & seen:
                raise self.unsupported(path + (str(i),), "oneOf is supported only when its options have "
                                       "distinct single types (then it equals anyOf)")
            seen |= kinds

    # -- literals ------------------------------------------------------------------------------------

    def value_rule(self, value: Any) -> str:
        """Exactly `value`, spelled with the grammar's whitespace (an object's keys in its order)."""
        if isinstance(value, dict):
            members = " COMMA ".join(f"{self.literal(k)} COLON {self.value_rule(v)}" for k, v in value.items())
            return self.new_rule(f"LBRACE {members} RBRACE" if members else "LBRACE RBRACE", "c")
        if isinstance(value, list):
            items = " COMMA ".join(self.value_rule(v) for v in value)
            return self.new_rule(f"LSQB {items} RSQB" if items else "LSQB RSQB", "c")
        return self.literal(value)

    def literal(self, value: Any) -> str:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return self.terminal(re.escape(text), text if isinstance(value, (bool, type(None))) else f"lit {text}")

    def valid_literal(self, value: Any, node: Mapping) -> bool:
        t = node.get("type")
        if t is None:
            return True
        names = [t] if isinstance(t, str) else t
        return any(_is_type(value, name) for name in names)

    # -- types ---------------------------------------------------------------------------------------

    def any_value(self) -> str:
        if "value" not in self.rules:
            self.rules["value"] = ""
            obj = "LBRACE [member (COMMA member)*] RBRACE"
            self.rules["value"] = " | ".join([
                "object", "array", self.terminal('"' + _CHAR + '*"', "string"),
                self.terminal(_NUMBER, "number"), self.terminal("true", "lit"), self.terminal("false", "lit"),
                self.terminal("null", "lit")])
            self.rules["object"] = obj
            self.rules["member"] = self.terminal('"' + _CHAR + '*"', "string") + " COLON value"
            self.rules["array"] = "LSQB [value (COMMA value)*] RSQB"
        return "value"

    def lower_null(self, node: Mapping, path: tuple[str, ...]) -> str:
        return self.terminal("null", "lit")

    def lower_boolean(self, node: Mapping, path: tuple[str, ...]) -> str:
        return self.new_rule(f'{self.terminal("true", "lit")} | {self.terminal("false", "lit")}')

    def lower_number(self, node: Mapping, path: tuple[str, ...]) -> str:
        bounds = {key: self.bound(node, key, path) for key in _BOUNDS if key in node}
        if not bounds:
            return self.terminal(_NUMBER, "number")
        for key, value in bounds.items():
            if value != int(value):
                raise self.unsupported(path + (key,), f"{key} on a number is supported at integer values only")
        low = max(((int(v), k == "exclusiveMinimum") for k, v in bounds.items() if k.endswith("inimum")), default=None)
        high = min(((int(v), k != "exclusiveMaximum") for k, v in bounds.items() if k.endswith("aximum")),
                   default=None)
        pattern = number_range(low[0] if low else None, bool(low and low[1]),
                               high[0] if high else None, bool(high and not high[1]))
        if pattern is None:
            raise self.unsupported(path, "no number lies within these bounds")
        return self.terminal(pattern, "number " + _span(low and low[0], high and high[0]))

    def bound(self, node: Mapping, key: str, path: tuple[str, ...]) -> int | float:
        """The value of a minimum/maximum keyword (numbers only: draft 4's boolean form is refused)."""
        value = node[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self.unsupported(path + (key,), f"{key} must be a finite number (draft 4's boolean form "
                                   "is not supported)")
        return value

    def lower_integer(self, node: Mapping, path: tuple[str, ...]) -> str:
        low, high = -float("inf"), float("inf")
        edges = {"minimum": math.ceil, "exclusiveMinimum": lambda v: math.floor(v) + 1,
                 "maximum": math.floor, "exclusiveMaximum": lambda v: math.ceil(v) - 1}   # the integers inside
        for key, edge_of in edges.items():
            if key in node:
                edge = edge_of(self.bound(node, key, path))
                if key.endswith("inimum"):
                    low = max(low, edge)
                else:
                    high = min(high, edge)
        if low > high:
            raise self.unsupported(path, "no integer lies within these bounds")
        if low == -float("inf") and high == float("inf"):
            return self.terminal(_INT, "int")
        lo, hi = None if low == -float("inf") else int(low), None if high == float("inf") else int(high)
        return self.terminal(integer_range(lo, hi), "int " + _span(lo, hi))

    def lower_string(self, node: Mapping, path: tuple[str, ...]) -> str:
        low, high = node.get("minLength", 0), node.get("maxLength")
        fmt = node.get("format")
        if "pattern" in node:
            if fmt is not None or low or high is not None:
                raise self.unsupported(path + ("pattern",), "a pattern together with lengths or a format is "
                                       "not supported")
            try:
                return self.terminal('"' + content_regexp(node["pattern"]) + '"', "pattern")
            except PatternUnsupported as e:
                raise self.unsupported(path + ("pattern",), str(e)) from None
        if fmt is not None:
            if fmt not in _FORMATS:
                raise self.unsupported(path + ("format",), f"format {fmt!r} is not supported")
            if low or high is not None:
                raise self.unsupported(path + ("minLength",), "lengths together with a format are not supported")
            return self.terminal('"' + _FORMATS[fmt] + '"', fmt)
        if (low, high) == (0, None):
            return self.terminal('"' + _CHAR + '*"', "string")
        count = f"{{{low},{'' if high is None else high}}}"
        return self.terminal('"' + _CHAR + count + '"', f"string {_span(low or None, high)} chars")

    def lower_array(self, node: Mapping, path: tuple[str, ...]) -> str:
        items = node.get("items", True)
        prefix = list(node.get("prefixItems", []))
        if isinstance(items, list):                       # draft 4-7 tuple form
            prefix, items = items, node.get("additionalItems", True)
        elif "additionalItems" in node:
            raise self.unsupported(path + ("additionalItems",), "additionalItems without an items list")
        low, high = node.get("minItems", 0), node.get("maxItems")
        slots = [self.rule(sub, path + ("prefixItems", str(i))) for i, sub in enumerate(prefix)]
        rest = None if items is False else self.rule(items, path + ("items",))
        count = max(low, len(slots)) if high is None else high if rest is not None else min(high, len(slots))
        if count > MAX_REPEAT:
            raise self.unsupported(path + ("minItems" if high is None else "maxItems",),
                                   f"at most {MAX_REPEAT} items are spelled out")
        if rest is None and low > len(slots):
            raise self.unsupported(path + ("minItems",), "more items are required than the schema allows")
        elements = [slots[k] if k < len(slots) else rest for k in range(count)]
        # following[k]: the elements from k on, after element k - 1 (each starts with a comma)
        following = self.new_rule(f"(COMMA {rest})*", "a") if high is None and rest is not None else None
        for k in range(count - 1, 0, -1):
            then = f"COMMA {elements[k]} {following or ''}".strip()
            following = self.new_rule(then if k < low else f"[{then}]", "a")
        if not elements:
            return self.new_rule("LSQB RSQB" if following is None else f"LSQB [{rest} {following}] RSQB", "a")
        inside = f"{elements[0]} {following or ''}".strip()
        return self.new_rule(f"LSQB {inside} RSQB" if low > 0 else f"LSQB [{inside}] RSQB", "a")

    def lower_object(self, node: Mapping, path: tuple[str, ...]) -> str:
        props = node.get("properties", {})
        required = set(node.get("required", []))
        extra = node.get("additionalProperties", True)
        missing = sorted(required - set(props))
        if missing:
            raise self.unsupported(path + ("required",), f"required property {missing[0]!r} has no entry in "
                                   "properties (not supported)")
        members = []
        for name, sub in props.items():
            if sub is False:
                if name in required:
                    raise self.unsupported(path + ("properties", name), "a required property with schema false")
                continue
            value = self.rule(sub, path + ("properties", name))
            members.append((name in required, self.new_rule(f"{self.literal(name)} COLON {value}", "p")))
        other = None
        if extra is not False:       # any other key (not one of the properties) with a value of `extra`
            names = "|".join(re.escape(json.dumps(n, ensure_ascii=False)[1:-1]) for n in props)
            key = self.terminal('"' + (f'(?!(?:{names})")' if names else "") + _CHAR + '*"', "key")
            other = self.new_rule(f"{key} COLON {self.rule(extra, path + ('additionalProperties',))}", "x")
        # after: the members from i on, one already written; first: from i on, none written yet
        after = self.new_rule(f"(COMMA {other})*", "o") if other else None
        first = self.new_rule(f"[{other} (COMMA {other})*]", "o") if other else None
        for i in range(len(members) - 1, -1, -1):
            is_required, member = members[i]
            now = f"{member} {after or ''}".strip()
            first = self.new_rule(now if is_required else f"{now} | {first}" if first else f"[{now}]", "o")
            if i:
                later = f"COMMA {member} {after or ''}".strip()
                after = self.new_rule(later if is_required else f"{later} | {after}" if after else f"[{later}]", "o")
        return self.new_rule(f"LBRACE {first or ''} RBRACE".replace("  ", " "), "obj")


def _span(low: int | None, high: int | None) -> str:
    """Bounds as a terminal name says them: "0 to 150", "from 3", "to 40" (None: open)."""
    if low is not None and high is not None:
        return f"{low} to {high}"
    return f"from {low}" if low is not None else f"to {high}"


def _constraining(node: Mapping) -> bool:
    """Does `node` say anything about validity (beyond its definitions and annotations)?"""
    return any((k in _SUPPORTED or k in UNSUPPORTED) and k not in _DEFS for k in node)


def _is_type(value: Any, name: str) -> bool:
    return {"null": value is None, "boolean": isinstance(value, bool),
            "integer": isinstance(value, int) and not isinstance(value, bool) or
            isinstance(value, float) and value.is_integer(),
            "number": isinstance(value, (int, float)) and not isinstance(value, bool),
            "string": isinstance(value, str), "array": isinstance(value, list),
            "object": isinstance(value, dict)}.get(name, False)


def integer_range(low: int | None, high: int | None) -> str:
    """A regexp for the JSON integers in [low, high] (either side may be open), no leading zeros."""
    parts = []
    if low is None or low < 0:                               # negatives: -n for n in [max(1,-high), -low]
        neg_low = 1 if high is None or high >= 0 else -high
        neg_high = None if low is None else -low
        if neg_high is None or neg_low <= neg_high:
            parts.append("-(?:" + _naturals(neg_low, neg_high) + ")")
    if high is None or high >= 0:
        lo = 0 if low is None or low < 0 else low
        parts.append(_naturals(lo, high))
    return "(?:" + "|".join(parts) + ")"


def number_range(low: int | None, low_exclusive: bool, high: int | None, high_exclusive: bool) -> str | None:
    """A regexp for the JSON numbers in plain decimal (no exponent) between integer bounds (None: open),
    each inclusive or exclusive; None if there are none. "-0" and "-0.0" are 0, as for jsonschema."""
    sides = []
    # magnitudes u = I + f of the numbers written without a minus: u >= 0 and low <= u <= high
    if high is None or high > 0 or (high == 0 and not high_exclusive):
        if low is None or low < 0:
            low_u, low_u_exclusive = 0, False
        else:
            low_u, low_u_exclusive = low, low_exclusive
        sides.append(_magnitudes(low_u, low_u_exclusive, high, high_exclusive))
    # with a minus, -u: low <= -u <= high, i.e. -high <= u <= -low
    if low is None or low < 0 or (low == 0 and not low_exclusive):
        if high is None or high > 0 or (high == 0 and not high_exclusive):
            low_u, low_u_exclusive = 0, False
        else:
            low_u, low_u_exclusive = -high, high_exclusive
        negative = _magnitudes(low_u, low_u_exclusive, None if low is None else -low, low_exclusive)
        sides.append([(width, "-" + regexp) for width, regexp in negative])
    alternatives = [regexp for _, regexp in sorted((a for side in sides for a in side), key=lambda a: -a[0])]
    return "(?:" + "|".join(alternatives) + ")" if alternatives else None


_ANY_FRACTION = r"(?:\.[0-9]+)?"


def _magnitudes(low: int, low_exclusive: bool, high: int | None, high_exclusive: bool) -> list[tuple[float, str]]:
    """(integer part's width, regexp) per alternative for the unsigned plain decimals u = I.F with
    low <= u <= high (0 <= low; high None: open), each bound inclusive or exclusive. Sorted widest
    first by the caller: leftmost-first matching must not end the number early."""
    # I.F >= low iff I >= low; > low iff I > low, or I == low with a fraction not all zeros;
    # I.F <= high iff I < high, or I == high with no fraction or zeros; < high iff I < high
    out: list[tuple[float, str]] = []
    first, last = (low + 1 if low_exclusive else low), (None if high is None else high - 1)
    if last is None or first <= last:
        out += [(width, f"(?:{regexp}){_ANY_FRACTION}") for width, regexp in _naturals_by_width(first, last)]
    if high is not None and not high_exclusive and (high > low or (high == low and not low_exclusive)):
        out.append((len(str(high)), f"{high}(?:\\.0+)?"))
    if low_exclusive and (high is None or low < high):
        out.append((len(str(low)), f"{low}\\.[0-9]*[1-9][0-9]*"))
    return out


def _naturals(low: int, high: int | None) -> str:
    """Regexp for the decimal naturals in [low, high] (high None: unbounded)."""
    return "|".join(regexp for _, regexp in _naturals_by_width(low, high))


def _naturals_by_width(low: int, high: int | None) -> list[tuple[float, str]]:
    """(width, regexp) alternatives for the decimal naturals in [low, high] (high None: unbounded),
    widest first: a terminal's regexp matches leftmost-first (as lark's re.match), so a shorter
    alternative listed first would end the number early."""
    if high is None:
        width = len(str(low))
        return [(math.inf, f"[1-9][0-9]{{{width},}}")] + _naturals_by_width(low, 10 ** width - 1)
    alternatives: list[tuple[float, str]] = []
    for width in range(len(str(high)), len(str(low)) - 1, -1):
        lo = max(low, 10 ** (width - 1) if width > 1 else 0)
        hi = min(high, 10 ** width - 1)
        if lo <= hi:
            alternatives += [(width, regexp) for regexp in _same_width(str(lo), str(hi))]
    return alternatives


def _same_width(lo: str, hi: str) -> list[str]:
    """Regexps (no anchors) for the digit strings of lo's width between lo and hi."""
    if len(lo) == 1:
        return [f"[{lo}-{hi}]" if lo != hi else lo]
    if lo[0] == hi[0]:
        return [lo[0] + "(?:" + "|".join(_same_width(lo[1:], hi[1:])) + ")"]
    out = []
    rest = len(lo) - 1
    if lo[1:] == "0" * rest:
        start = lo[0]
    else:
        out.append(lo[0] + "(?:" + "|".join(_same_width(lo[1:], "9" * rest)) + ")")
        start = str(int(lo[0]) + 1)
    if hi[1:] == "9" * rest:
        end = hi[0]
    else:
        end = str(int(hi[0]) - 1)
    if int(start) <= int(end):
        out.append(f"[{start}-{end}][0-9]{{{rest}}}")
    if hi[1:] != "9" * rest:
        out.append(hi[0] + "(?:" + "|".join(_same_width("0" * rest, hi[1:])) + ")")
    return out
