"""JSON Schema -> Lark grammar text, built then as any grammar (docs/json-schema.md).

`schema_to_lark(schema)` lowers a schema (a dict or a boolean) to one Lark grammar: a rule per
subschema (a `$ref` is one rule per target, so recursive schemas are recursive rules), strings,
numbers and object keys as terminals (regular languages), objects as their properties in schema
order. What the lowering cannot give exactly is an error naming the keyword and its JSON pointer
(`SchemaUnsupported`), never an approximation. Keywords with no say over validity (annotations,
vendor extensions) are ignored.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, Literal, NamedTuple

from glrmask_cli.errors import GrammarError
from glrmask_cli.schema_disjoint import Disjointness, equal, meets, type_of
from glrmask_cli.schema_numbers import integer_range, multiples, number_range
from glrmask_cli.schema_pattern import PLAIN_ANY, PatternUnsupported, content_regexp

Whitespace = Literal["flexible", "compact"]

# Validation keywords of JSON Schema (drafts 4 to 2020-12) that the lowering does not compile: an
# error, unless its value asks nothing (`_vacuous`). Every other keyword that is neither supported
# (below) nor one of these is an annotation (title, description, examples, vendor extensions such
# as x-...): the specification gives it no say over validity, so it is ignored.
UNSUPPORTED = frozenset({
    "propertyNames", "minProperties", "maxProperties",
    "dependencies", "dependentRequired", "dependentSchemas", "if", "then", "else", "uniqueItems",
    "contains", "minContains", "maxContains", "unevaluatedProperties", "unevaluatedItems",
    "$dynamicRef", "$recursiveRef", "$dynamicAnchor", "$recursiveAnchor",
})
_DEFS = frozenset({"$defs", "definitions"})
_NUMERIC = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"})
_BY_TYPE = {
    "object": frozenset({"properties", "required", "additionalProperties", "patternProperties"}),
    "array": frozenset({"items", "prefixItems", "minItems", "maxItems", "additionalItems"}),
    "string": frozenset({"minLength", "maxLength", "format", "pattern"}),
    "integer": _NUMERIC,
    "number": _NUMERIC,
    "boolean": frozenset(),
    "null": frozenset(),
}
_GENERAL = frozenset({"type", "enum", "const", "anyOf", "oneOf", "allOf", "not", "$ref"}) | _DEFS
_SUPPORTED = _GENERAL.union(*_BY_TYPE.values())
TYPES = tuple(_BY_TYPE)
MAX_REPEAT = 1000       # the most items minItems/maxItems spell out
MAX_PATTERN_PROPERTIES = 6      # patternProperties split other keys into 2^n regions, each checked
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")

_CHAR = r'(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})'
_INT = r"-?(?:0|[1-9][0-9]*)"
_NUMBER = _INT + r"(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
_YEAR = r"(?:[0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})"   # 0001-9999, as Python's dates
_FORMATS = {
    "date": _YEAR + r"-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])",
    "time": r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)(?:\.[0-9]+)?"
            r"(?:[zZ]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])",
    "uuid": r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    "ipv4": r"(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])",
}
_FORMATS["date-time"] = _FORMATS["date"] + "[tT]" + _FORMATS["time"]
_FORMATS["email"] = r'[^"\\\x00-\x1f]*@[^"\\\x00-\x1f]*'       # as jsonschema checks it: an @ somewhere


def _ipv6(ipv4: str) -> str:
    """RFC 4291 text forms, as Python's ipaddress reads them (and RFC 3986's IPv6address): 8 groups
    of 1-4 hex digits, the last two possibly an IPv4 address (`ipv4`), at most one "::" standing
    for one or more zero groups."""
    group = "[0-9a-fA-F]{1,4}"

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


_FORMATS["ipv6"] = _ipv6(_FORMATS["ipv4"])


def _uris() -> tuple[str, str]:
    """RFC 3986's URI and URI-reference, as the `rfc3986-validator` package (0.1.1, what
    `jsonschema` asserts `uri` and `uri-reference` with when `rfc3987` is absent) decides them:
    the ABNF, except that an IPv4 address inside an IPv6 literal may have leading zeros (each part
    1-3 digits of value at most 255) and IPvFuture's "v" is lower case only. (A dotted IPv4 host
    is a reg-name too, so it needs no alternative of its own.)"""
    pct = "%[0-9A-Fa-f]{2}"
    plain = r"A-Za-z0-9\-._~!$&'()*+,;="                  # unreserved and sub-delims
    pchar = f"(?:[{plain}:@]|{pct})"
    segment, segment_nz = pchar + "*", pchar + "+"
    abempty = f"(?:/{segment})*"
    octet = "(?:25[0-5]|2[0-4][0-9]|[01][0-9]{2}|[0-9]{1,2})"          # leading zeros allowed
    ipv4 = octet + r"(?:\." + octet + "){3}"
    ip_literal = rf"\[(?:{_ipv6(ipv4)}|v[0-9A-Fa-f]+\.[{plain}:]+)\]"        # IPv6address / IPvFuture
    authority = f"(?:(?:[{plain}:]|{pct})*@)?(?:{ip_literal}|(?:[{plain}]|{pct})*)(?::[0-9]*)?"
    tail = f"(?:\\?(?:[{plain}:@/?]|{pct})*)?(?:#(?:[{plain}:@/?]|{pct})*)?"      # query, fragment
    uri = f"[A-Za-z][A-Za-z0-9+.-]*:(?://{authority}{abempty}|/(?:{segment_nz}{abempty})?|{segment_nz}{abempty}|)"
    relative = f"(?://{authority}{abempty}|/(?:{segment_nz}{abempty})?|(?:[{plain}@]|{pct})+{abempty}|)"
    return uri + tail, f"(?:{uri}{tail}|{relative}{tail})"


_FORMATS["uri"], _FORMATS["uri-reference"] = _uris()


def _hostname() -> str:
    """RFC 1123 host names as the `fqdn` package (1.6.0, what `jsonschema` asserts `hostname` with,
    `min_labels=1`) decides them on ASCII text: labels of 1-63 letters, digits and hyphens, neither
    first nor last a hyphen, joined by dots; one final dot allowed; at most 253 characters but that
    dot; one label alone is a host name; either case. The length is a lookahead to the closing quote.
    Its minimal DFA has 23,814 states (a DFA of this language has no fewer; what that costs a build:
    docs/json-schema.md); the package's `re` (`\\d`, IGNORECASE) also takes Unicode's other
    decimal digits and ı, ſ, K (Kelvin), with which it is 323,039 states (the departure: ASCII only)."""
    alnum = "0-9A-Za-z"
    label = f"[{alnum}](?:[{alnum}-]{{0,61}}[{alnum}])?"
    return f'(?=[{alnum}.-]{{1,253}}\\.?")' + label + r"(?:\." + label + r")*\.?"


def _duration() -> str:
    """ISO 8601 durations as the `isoduration` package (20.11.0, what `jsonschema` asserts `duration`
    with, then asking for a final designator) parses them: an optional sign, `P`, then the date's
    values in the order Y, M, D, W (each at most once), then possibly `T` and the time's H, M, S (at
    least one). A value is what Python's `Decimal` reads, with `,` for `.`: a sign, digits with an
    optional fraction (`5.`, `.5`), an exponent. `W` follows only values equal to zero. Before `T`,
    after the last date designator, characters of numbers are dropped (`P1Y2T1H`), but a `T` after
    characters of numbers alone sends the rest to a date-time parser (`arrow`), which never ends in a
    designator (so invalid), unless they hold a `,` (`P1,5T1H` is valid). Values are read exactly:
    the package's decimal arithmetic (28 digits) raises at 10^1000000 and makes a value of at most
    5e-1000027 zero (the departure, docs)."""
    number = r"[+-]?(?:[0-9]+(?:[.,][0-9]*)?|[.,][0-9]+)(?:[eE][+-]?[0-9]+)?"
    zero = r"[+-]?(?:0+(?:[.,]0*)?|[.,]0+)(?:[eE][+-]?[0-9]+)?"
    y, m, d, w = (f"{number}{c}" for c in "YMDW")
    dated = f"(?:{y}(?:{m})?(?:{d})?|{m}(?:{d})?|{d}|(?:{zero}Y)?(?:{zero}M)?(?:{zero}D)?{w})"
    h, mi, s = (f"{number}{c}" for c in "HMS")
    timed = f"T(?:{h}(?:{mi})?(?:{s})?|{mi}(?:{s})?|{s})"
    dropped, with_comma = "[-+0-9.,eE]*", "[-+0-9.eE]*,[-+0-9.,eE]*"
    return f"[+-]?P(?:{dated}(?:{dropped}{timed})?|(?:{with_comma})?{timed})"


_FORMATS["duration"] = _duration()
_FORMATS["hostname"] = _hostname()


_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
                  "\t": "\\t"}


class SchemaUnsupported(GrammarError):
    """A schema keyword (or value) the lowering cannot compile exactly; `where` is its JSON pointer."""


class SchemaUnsatisfiable(SchemaUnsupported):
    """No value is valid here: a property or an option with it is left out, exactly; the whole
    schema so is refused (no output could ever be complete)."""


class _Negation(NamedTuple):
    """What a `not` takes away: whole JSON types, and listed values."""
    types: frozenset[str] = frozenset()
    values: tuple = ()

    def removes(self, value: Any) -> bool:
        return any(_is_type(value, t) for t in self.types) or any(equal(value, v) for v in self.values)


def schema_to_lark(schema: Any, whitespace: Whitespace = "flexible", strict: bool = False) -> str:
    """The Lark grammar (start rule `start`) whose language is the JSON texts `schema` accepts,
    minus the documented departures (docs/json-schema.md). `strict`: an object that declares
    properties or patternProperties but no additionalProperties takes no other keys, and an array
    with prefixItems (or a tuple `items`) and no items (additionalItems) after them no other items,
    as if each said false."""
    return _Lowering(schema, whitespace, strict).grammar()


def _pointer(path: tuple[str, ...]) -> str:
    return "#" + "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in path)


def _regex(pattern: str) -> str:
    """A Lark regexp terminal body for `pattern`. Lark's loader reads a backslash before a quote as
    the quote's escape (`\\\\"` would lose its backslash), so a quote after backslashes is written
    as the class `["]`."""
    pattern = re.sub(r'(\\+)"', lambda m: "\\" * (len(m.group(1)) // 2 * 2) + '["]', pattern)
    return "/" + pattern.replace("/", "\\/") + "/"


Part = tuple[Any, tuple[str, ...]]          # a subschema and its path, as merge() takes them


class _Lowering:
    def __init__(self, schema: Any, whitespace: Whitespace, strict: bool = False) -> None:
        self.root = schema
        # an absent additionalProperties (of an object declaring members), or items after a prefix: any, or none
        self.extra_default = not strict
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

    def no_value(self, path: tuple[str, ...], what: str = "no value is valid here") -> SchemaUnsatisfiable:
        return SchemaUnsatisfiable(_pointer(path), what, hint="docs/json-schema.md lists what is supported")

    def optional(self, lower: Callable[..., str], *args: Any) -> str | None:
        """lower(*args), or None where no value is valid there (the rules and terminals it added
        are taken back)."""
        sizes = [len(table) for table in (self.rules, self.terminals, self.by_pointer)]
        try:
            return lower(*args)
        except SchemaUnsatisfiable:
            for table, size in zip((self.rules, self.terminals, self.by_pointer), sizes):
                for key in list(table)[size:]:
                    del table[key]
            return None

    # -- subschemas --------------------------------------------------------------------------------

    def rule(self, node: Any, path: tuple[str, ...]) -> str:
        """A rule name whose language is `node`'s instances."""
        if node is True or isinstance(node, Mapping) and not _constraining(node):
            return self.any_value()
        if node is False:
            raise self.no_value(path, "the schema false accepts no instance")
        if not isinstance(node, Mapping):
            raise self.unsupported(path, f"a schema must be an object or a boolean, not {json.dumps(node)[:40]}")
        for key, value in node.items():
            if key in UNSUPPORTED and not _vacuous(key, value, node):
                raise self.unsupported(path + (key,), f"keyword {key!r} is not supported")
        if "$ref" in node:
            others = {k for k in node if k in _SUPPORTED} - _DEFS - {"$ref"}
            if others:
                raise self.unsupported(path + (sorted(others)[0],), "keywords beside $ref are not supported")
            return self.ref(node["$ref"], path + ("$ref",))
        if "allOf" in node:
            return self.rule(self.merge_all(node, path), path)
        if "anyOf" in node or "oneOf" in node:
            return self.union(node, path)
        negation = self.negation(node["not"], path + ("not",)) if "not" in node else _Negation()
        if "const" in node or "enum" in node:
            return self.listed(node, path, negation)
        types = node.get("type", list(TYPES))
        types = [types] if isinstance(types, str) else list(types)
        if "integer" in types and "number" in types:
            types.remove("integer")
        if "number" in types and "integer" in negation.types and "number" not in negation.types:
            raise self.unsupported(path + ("not",), "not over integers among numbers is not supported")
        alternatives = []
        for t in types:
            if t not in _BY_TYPE:
                raise self.unsupported(path + ("type",), f"unknown type {t!r}")
            if t not in negation.types:
                alternatives.append(self.optional(getattr(self, "lower_" + t), node, path, negation))
        if not any(alternatives):
            raise self.no_value(path)
        return self.new_rule(" | ".join(a for a in alternatives if a))

    def ref(self, ref: Any, path: tuple[str, ...]) -> str:
        if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
            raise self.unsupported(path, f"only JSON-pointer references within the document are supported, "
                                   f"not {ref!r}")
        if ref not in self.by_pointer:
            parts = _pointer_parts(ref)
            target = resolve_pointer(self.root, ref)
            if target is None:
                raise self.unsupported(path, f"reference {ref!r} points to nothing")
            name = self.by_pointer[ref] = f"r{len(self.by_pointer)}"
            self.rules[name] = ""                      # reserved: recursion refers to it
            self.rules[name] = self.rule(target, tuple(parts))
        return self.by_pointer[ref]

    def resolve(self, node: Any) -> Any:
        """`node`, or what its local `$ref` chain ends at (for proofs; keywords beside $ref left out)."""
        seen = set()
        while isinstance(node, Mapping) and isinstance(node.get("$ref"), str) and node["$ref"] not in seen:
            seen.add(node["$ref"])
            target = resolve_pointer(self.root, node["$ref"])
            if target is None:
                return node
            node = target
        return node

    def union(self, node: Mapping, path: tuple[str, ...]) -> str:
        """anyOf, or oneOf where no two options can share an instance (then it is anyOf); keywords
        beside it are merged into each option; an option no value meets is left out."""
        key = "anyOf" if "anyOf" in node else "oneOf"
        rest = {k: v for k, v in node.items() if k != key}
        options = [(option, path + (key, str(i))) for i, option in enumerate(node[key])]
        if _constraining(rest):        # (an option false stays false: rule() leaves it out)
            options = [(option if option is False else self.merge([(rest, path), (option, where)]), where)
                       for option, where in options]
        if key == "oneOf":
            self.check_disjoint(options)
        alternatives = [self.optional(self.rule, *option) for option in options]
        if not any(alternatives):
            raise self.no_value(path + (key,), "no option admits a value")
        return self.new_rule(" | ".join(a for a in alternatives if a))

    def merge_all(self, node: Mapping, path: tuple[str, ...]) -> dict:
        """allOf merged into one schema with the keywords beside it (`merge`)."""
        rest = {k: v for k, v in node.items() if k != "allOf"}
        return self.merge([(rest, path)] + [(part, path + ("allOf", str(i))) for i, part in enumerate(node["allOf"])])

    def merge(self, parts: list[Part]) -> dict:
        """Schemas that must all hold, merged into one: keys that only one part has, properties,
        patternProperties and required united; the same key with different values in two parts,
        or additionalProperties / items that would then reach members another part declares, is an
        error (a part that is false is `SchemaUnsatisfiable`)."""
        merged: dict[str, Any] = {}
        flat: list[Part] = []
        for part, path in parts:
            if part is True:
                continue
            if part is False:
                raise self.no_value(path, "the schema false accepts no instance")
            if not isinstance(part, Mapping) or "$ref" in part or "anyOf" in part or "oneOf" in part:
                raise self.unsupported(path, "allOf can merge only plain object schemas")
            part = self.merge_all(part, path) if "allOf" in part else part
            flat.append((part, path))
            for key, value in part.items():
                if key not in _SUPPORTED and key not in UNSUPPORTED:
                    continue            # an annotation (an unsupported keyword stays, for rule() to name)
                if key in ("properties", "patternProperties"):
                    united = dict(merged.get(key, {}))
                    for name, sub in value.items():
                        if name in united and united[name] != sub:
                            raise self.unsupported(path + (key, name), f"allOf gives this {key} entry two schemas")
                        united[name] = sub
                    merged[key] = united
                elif key == "required":
                    merged["required"] = list(dict.fromkeys(list(merged.get("required", [])) + list(value)))
                elif key in merged and merged[key] != value:
                    raise self.unsupported(path + (key,), f"allOf gives {key!r} two different values")
                else:
                    merged[key] = value
        for part, path in flat:
            self.check_reach(part, merged, path)
        return merged

    def check_reach(self, part: Mapping, merged: Mapping, path: tuple[str, ...]) -> None:
        """A part's additionalProperties applies to the keys outside its own properties and
        patterns, its items to the positions after its own prefix: merged, they must reach the same."""
        if not _asks_nothing(part.get("additionalProperties", True)):
            for key in ("properties", "patternProperties"):
                if not set(merged.get(key, {})) <= set(part.get(key, {})):
                    raise self.unsupported(path + ("additionalProperties",), "allOf: additionalProperties "
                                           f"would reach {key} that another part declares")
        for later, prefix in (("items", "prefixItems"), ("additionalItems", "items")):
            if not _asks_nothing(part.get(later, True)) and isinstance(merged.get(prefix, []), list) \
                    and part.get(prefix) != merged.get(prefix):
                raise self.unsupported(path + (later,), f"allOf: {later} would reach positions that another "
                                       f"part's {prefix} declares")

    def check_disjoint(self, options: list[Part]) -> None:
        """oneOf is compiled as anyOf only when no instance can match two options (schema_disjoint)."""
        proofs = Disjointness(self.resolve, self.strings_of)
        for (a, _), (b, path) in itertools.combinations(options, 2):
            if not proofs.disjoint(a, b):
                raise self.unsupported(path, "oneOf is supported only when no instance can match two of its "
                                       "options (then it equals anyOf); this one may overlap another")

    def strings_of(self, node: Mapping) -> str | None:
        """The terminal regexp of `node`'s strings, for proofs (None where it has none)."""
        try:
            return self.string_regex(node, ())[0]
        except SchemaUnsupported:
            return None

    def negation(self, inner: Any, path: tuple[str, ...]) -> _Negation:
        """What `not: inner` takes away, in the forms compiled exactly: JSON types, listed values."""
        if inner is False:
            return _Negation()
        if inner is True or isinstance(inner, Mapping) and not _constraining(inner):
            raise self.no_value(path, "not over every value leaves none")
        asserted = {k for k in inner if k in _SUPPORTED or k in UNSUPPORTED} if isinstance(inner, Mapping) else {""}
        if not asserted <= {"type", "enum", "const"}:
            raise self.unsupported(path, "not is supported over type, enum and const only")
        names = inner.get("type", list(TYPES))
        names = {names} if isinstance(names, str) else set(names)
        if "enum" in inner or "const" in inner:
            listed = [inner["const"]] if "const" in inner else list(inner["enum"])
            if "const" in inner and "enum" in inner:
                listed = [v for v in inner["enum"] if equal(v, inner["const"])]
            return _Negation(values=tuple(v for v in listed if any(_is_type(v, n) for n in names)))
        return _Negation(types=frozenset(names | ({"integer"} if "number" in names else set())))

    # -- literals ------------------------------------------------------------------------------------

    def listed(self, node: Mapping, path: tuple[str, ...], negation: _Negation) -> str:
        """enum / const: the values that meet the keywords beside them and no `not`."""
        values = [node["const"]] if "const" in node else list(node["enum"])
        kept = [v for v in values if not negation.removes(v) and self.valid_literal(v, node, path)]
        if not kept:
            raise self.no_value(path + ("enum" if "enum" in node else "const",))
        return self.new_rule(" | ".join(self.value_rule(v) for v in kept))

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

    def valid_literal(self, value: Any, node: Mapping, path: tuple[str, ...]) -> bool:
        """Does a listed value meet `type` and the keywords for its type beside it? A string or a
        number is matched against the terminal those keywords make; an object or an array with such
        keywords is an error."""
        t = node.get("type")
        names = TYPES if t is None else [t] if isinstance(t, str) else t
        if not any(_is_type(value, name) for name in names):
            return False
        kind = type_of(value)
        asks = sorted(_BY_TYPE["integer" if kind == "number" else kind] & set(node))
        if not asks:
            return True
        if kind == "string":
            return re.fullmatch(self.string_regex(node, path)[0], json.dumps(value, ensure_ascii=False)) is not None
        if kind == "number":
            return re.fullmatch(self.number_regex(node, path, False)[0], format(_decimal(value), "f")) is not None
        raise self.unsupported(path + (asks[0],), f"enum or const with {kind} values beside {asks[0]} is not supported")

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

    def lower_null(self, node: Mapping, path: tuple[str, ...], negation: _Negation) -> str:
        if negation.removes(None):
            raise self.no_value(path)
        return self.terminal("null", "lit")

    def lower_boolean(self, node: Mapping, path: tuple[str, ...], negation: _Negation) -> str:
        kept = [self.terminal(json.dumps(b), "lit") for b in (True, False) if not negation.removes(b)]
        if not kept:
            raise self.no_value(path)
        return self.new_rule(" | ".join(kept))

    def lower_number(self, node: Mapping, path: tuple[str, ...], negation: _Negation) -> str:
        self.check_not_listed(negation, "number", path)
        return self.terminal(*self.number_regex(node, path, False))

    def lower_integer(self, node: Mapping, path: tuple[str, ...], negation: _Negation) -> str:
        self.check_not_listed(negation, "number", path)
        return self.terminal(*self.number_regex(node, path, True))

    def check_not_listed(self, negation: _Negation, kind: str, path: tuple[str, ...]) -> None:
        if any(type_of(v) == kind for v in negation.values):
            raise self.unsupported(path + ("not",), f"not over listed {kind} values is not supported")

    def number_regex(self, node: Mapping, path: tuple[str, ...], integers: bool) -> tuple[str, str]:
        """(regexp, name hint) of the numbers (integers: the integers) meeting the bounds and
        multipleOf; bounded or divided numbers are written in plain decimal (docs)."""
        kind = "int" if integers else "number"
        bounds = {key: _decimal(self.bound(node, key, path)) for key in _BOUNDS if key in node}
        if "multipleOf" in node:
            return self.multiple_regex(node, path, integers, bool(bounds))
        if not bounds:
            return (_INT, kind) if integers else (_NUMBER, kind)
        low = max(((v, k == "exclusiveMinimum") for k, v in bounds.items() if k.endswith("inimum")), default=None)
        high = min(((v, k != "exclusiveMaximum") for k, v in bounds.items() if k.endswith("aximum")), default=None)
        if integers:       # the integers inside
            first = None if low is None else math.floor(low[0]) + 1 if low[1] else math.ceil(low[0])
            last = None if high is None else math.ceil(high[0]) - 1 if not high[1] else math.floor(high[0])
            if first is not None and last is not None and first > last:
                raise self.no_value(path, "no integer lies within these bounds")
            return integer_range(first, last), f"int {_span(first, last)}"
        pattern = number_range(low and low[0], bool(low and low[1]), high and high[0], bool(high and not high[1]))
        if pattern is None:
            raise self.no_value(path, "no number lies within these bounds")
        return pattern, "number " + _span(low and low[0], high and high[0])

    def multiple_regex(self, node: Mapping, path: tuple[str, ...], integers: bool, bounded: bool) -> tuple[str, str]:
        value = node["multipleOf"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or not math.isfinite(value):
            raise self.unsupported(path + ("multipleOf",), "multipleOf must be a number above 0")
        if bounded:
            raise self.unsupported(path + ("multipleOf",), "multipleOf together with minimum or maximum is "
                                   "not supported")
        pattern = multiples(_decimal(value), integers)
        if pattern is None:
            raise self.unsupported(path + ("multipleOf",), f"multipleOf {value} is supported on integers up to "
                                   "a regexp size (2-6, 8, 10, 15, 20, 25, ...) and on numbers for integers "
                                   "and 0.1, 0.01, ...")
        return pattern, f"{'int' if integers else 'number'} multiple of {value}"

    def bound(self, node: Mapping, key: str, path: tuple[str, ...]) -> int | float:
        """The value of a minimum/maximum keyword (numbers only: draft 4's boolean form is refused)."""
        value = node[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self.unsupported(path + (key,), f"{key} must be a finite number (draft 4's boolean form "
                                   "is not supported)")
        return value

    def lower_string(self, node: Mapping, path: tuple[str, ...], negation: _Negation) -> str:
        return self.terminal(*self.string_regex(node, path, tuple(v for v in negation.values if isinstance(v, str))))

    def string_regex(self, node: Mapping, path: tuple[str, ...], avoid: tuple[str, ...] = ()) -> tuple[str, str]:
        """(regexp, name hint) of the strings meeting the lengths, format and pattern, none of
        `avoid` (in any spelling). A format or a pattern is matched against the raw text, so such
        strings are written without escapes (docs); the others are intersected as lookaheads."""
        low, high = node.get("minLength", 0), node.get("maxLength")
        count = f"{{{low},{'' if high is None else high}}}"
        not_avoided = "(?!(?:" + "|".join(map(_spellings, avoid)) + ')")' if avoid else ""
        contents = []
        if "format" in node:
            if node["format"] not in _FORMATS:
                raise self.unsupported(path + ("format",), f"format {node['format']!r} is not supported")
            contents.append((_FORMATS[node["format"]], node["format"]))
        if "pattern" in node:
            contents.append((self.pattern_content(node["pattern"], path + ("pattern",)), "pattern"))
        if not contents:
            if (low, high) == (0, None):
                return '"' + not_avoided + _CHAR + '*"', "string"
            return '"' + not_avoided + _CHAR + count + '"', f"string {_span(low or None, high)} chars"
        if low or high is not None:
            contents.append((PLAIN_ANY + count, "lengths"))
        looks = "".join(f'(?={content}")' for content, _ in contents[1:])
        return '"' + not_avoided + looks + contents[0][0] + '"', contents[0][1]

    def pattern_content(self, pattern: Any, path: tuple[str, ...]) -> str:
        if not isinstance(pattern, str):
            raise self.unsupported(path, "a pattern must be a string")
        try:
            return content_regexp(pattern)
        except PatternUnsupported as e:
            raise self.unsupported(path, str(e)) from None

    def lower_array(self, node: Mapping, path: tuple[str, ...], negation: _Negation) -> str:
        self.check_not_listed(negation, "array", path)
        prefix, prefix_key = list(node.get("prefixItems", [])), "prefixItems"
        items, later = node.get("items", self.extra_default or not prefix), "items"
        if isinstance(items, list):                       # draft 4-7 tuple form
            prefix, prefix_key, items, later = items, "items", node.get("additionalItems", self.extra_default), \
                "additionalItems"
        elif "additionalItems" in node and isinstance(items, bool):
            raise self.unsupported(path + ("additionalItems",), "additionalItems beside a boolean items")
        # (additionalItems beside no items, or an items schema, asks nothing: the specification's reading)
        low, high = node.get("minItems", 0), node.get("maxItems")
        slots: list[str] = []
        for i, sub in enumerate(prefix):          # a position no value meets ends the array before it
            slot = self.optional(self.rule, sub, path + (prefix_key, str(i)))
            if slot is None:
                break
            slots.append(slot)
        closed = items is False or len(slots) < len(prefix)
        rest = None if closed else self.optional(self.rule, items, path + (later,))
        if rest is None:                          # the positions spelled out: no more than the slots
            count = len(slots) if high is None else min(high, len(slots))
        else:
            count = max(low, len(slots)) if high is None else high
        if count > MAX_REPEAT:
            raise self.unsupported(path + ("minItems" if high is None else "maxItems",),
                                   f"at most {MAX_REPEAT} items are spelled out")
        if low > count:
            raise self.no_value(path + ("minItems",), "more items are required than the schema allows")
        elements = slots[:count] if rest is None else slots[:count] + [rest] * (count - len(slots))
        tail = self.new_rule(f"(COMMA {rest})*", "a") if high is None and rest is not None else ""
        if not elements:
            return self.new_rule(f"LSQB [{rest} {tail}] RSQB" if tail else "LSQB RSQB", "a")
        # upto[k]: elements 0..k, left-nested (a right-nested chain kept a stack level per element)
        upto = [elements[0]]
        for k in range(1, count):
            upto.append(self.new_rule(f"{upto[k - 1]} COMMA {elements[k]}", "a"))
        ends = upto[max(low, 1) - 1:count - 1] + [f"{upto[count - 1]} {tail}".strip()]
        inside = self.new_rule(" | ".join(ends), "a")
        return self.new_rule(f"LSQB {inside} RSQB" if low > 0 else f"LSQB [{inside}] RSQB", "a")

    def lower_object(self, node: Mapping, path: tuple[str, ...], negation: _Negation) -> str:
        self.check_not_listed(negation, "object", path)
        props = node.get("properties", {})
        required = set(node.get("required", []))
        missing = sorted(required - set(props))
        if missing:
            raise self.unsupported(path + ("required",), f"required property {missing[0]!r} has no entry in "
                                   "properties (not supported)")
        members = []
        for name, sub in props.items():
            value = self.optional(self.member_value, name, sub, node, path)
            if value is None:
                if name in required:
                    raise self.no_value(path + ("properties", name), "a required property admits no value")
                continue
            members.append((name in required, self.new_rule(f"{self.literal(name)} COLON {value}", "p")))
        other = self.other_members(node, path)
        others = self.new_rule(f"(COMMA {other})*", "o") if other else ""
        # ready[i]: members before i decided (written or skipped), one at least written, the text
        # ending with its COMMA; the next key says which member comes (skipping one is a unit
        # reduction on that lookahead), so the stack stays as deep as one member however many are
        # written (a right-nested chain keeps a level per member, and a token like `}}` reads them all)
        n = len(members)
        required_at = [i for i, (is_required, _) in enumerate(members) if is_required]
        first_required = required_at[0] if required_at else n       # every member before it is optional
        last_required = required_at[-1] if required_at else -1      # and every member after this one
        ready: list[str | None] = [None]
        for i, (is_required, member) in enumerate(members):
            before = ready[i]
            ways = [f"{before} {member} COMMA"] if before else []
            ways += [f"{member} COMMA"] if i <= first_required else []
            ways += [before] if before and not is_required else []
            ready.append(self.new_rule(" | ".join(ways), "o") if ways else None)
        ends = []                                   # the list's last member: declared, or others
        for i, (_, member) in enumerate(members[max(last_required, 0):], max(last_required, 0)):
            ends += [f"{ready[i]} {member}"] if ready[i] else []
            ends += [member] if i <= first_required else []
        if other:
            ends += [f"{ready[n]} {other} {others}"] if ready[n] else []
            ends += [f"{other} {others}"] if not required_at else []
        body = self.new_rule(" | ".join(ends), "o") if ends else ""
        inside = f"[{body}]" if body and not required_at else body
        return self.new_rule(f"LBRACE {inside} RBRACE".replace("  ", " "), "obj")

    def member_value(self, name: str, sub: Any, node: Mapping, path: tuple[str, ...]) -> str:
        """The rule for a declared property's value: its schema, and those of the patterns its name
        matches (as `jsonschema` matches them: re.search)."""
        where = path + ("properties", name)
        parts: list[Part] = [(sub, where)]
        for pattern, schema in node.get("patternProperties", {}).items():
            self.pattern_content(pattern, path + ("patternProperties", pattern))      # refused here too
            if re.search(pattern, name):
                parts.append((schema, path + ("patternProperties", pattern)))
        return self.rule(sub if len(parts) == 1 else self.merge(parts), where)

    def other_members(self, node: Mapping, path: tuple[str, ...]) -> str | None:
        """The rule for one member whose key is not a declared property: with patternProperties, the
        keys are split into regions by the patterns they match (a region's value meets every schema
        of its patterns; no pattern: additionalProperties), written without escapes (docs)."""
        names = "|".join(re.escape(json.dumps(n, ensure_ascii=False)[1:-1]) for n in node.get("properties", {}))
        undeclared = f'(?!(?:{names})")' if names else ""
        # strict, an object that declares no members says nothing to close: it stays open, as `{}` does
        declares = "properties" in node or "patternProperties" in node
        extra: Part = (node.get("additionalProperties", self.extra_default or not declares),
                       path + ("additionalProperties",))
        patterns = node.get("patternProperties", {})
        if not patterns:
            value = self.optional(self.rule, *extra)
            key = '"' + undeclared + _CHAR + '*"'
            return None if value is None else self.new_rule(f"{self.terminal(key, 'key')} COLON {value}", "x")
        if len(patterns) > MAX_PATTERN_PROPERTIES:
            raise self.unsupported(path + ("patternProperties",), f"at most {MAX_PATTERN_PROPERTIES} patterns "
                                   "are supported")
        contents = [self.pattern_content(p, path + ("patternProperties", p)) for p in patterns]
        entries = [(schema, path + ("patternProperties", p)) for p, schema in patterns.items()]
        alternatives = []
        for chosen in itertools.product((True, False), repeat=len(patterns)):
            looks = "".join(("(?=" if c else "(?!") + content + '")' for content, c in zip(contents, chosen))
            key = '"' + undeclared + looks + PLAIN_ANY + '*"'
            parts = [entry for entry, c in zip(entries, chosen) if c] or [extra]
            if any(schema is False for schema, _ in parts) or not meets(key):
                continue
            value = self.optional(self.rule, *parts[0]) if len(parts) == 1 or all(
                schema == parts[0][0] for schema, _ in parts) else self.optional(self.merged_rule, parts)
            if value is not None:
                alternatives.append(f"{self.terminal(key, 'key')} COLON {value}")
        return self.new_rule(" | ".join(alternatives), "x") if alternatives else None

    def merged_rule(self, parts: list[Part]) -> str:
        return self.rule(self.merge(parts), parts[0][1])


def resolve_pointer(root: Any, ref: str) -> Any:
    """The subschema a reference within the document (`#` or `#/...`, a JSON pointer) points to, or
    None (another kind of reference, or nothing there)."""
    if ref != "#" and not ref.startswith("#/"):
        return None
    target: Any = root
    for part in _pointer_parts(ref):
        if isinstance(target, Mapping) and part in target:
            target = target[part]
        elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        else:
            return None
    return target


def _pointer_parts(ref: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in ref[2:].split("/")] if ref != "#" else []


def _spellings(text: str) -> str:
    """A regexp for every JSON spelling of the string `text` between its quotes: each character raw
    (where JSON allows it), as its short escape, or as \\u escapes (hex digits in either case)."""
    parts = []
    for char in text:
        forms = [re.escape(char)] if char not in '"\\' and ord(char) >= 0x20 else []
        if char in _SHORT_ESCAPES:
            forms.append(re.escape(_SHORT_ESCAPES[char]))
        code = ord(char)
        units = [code] if code < 0x10000 else [0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)]
        forms.append("".join(r"\\u" + "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in f"{unit:04x}")
                             for unit in units))
        parts.append("(?:" + "|".join(forms) + ")")
    return "".join(parts)


def _decimal(value: int | float) -> Decimal:
    """A JSON number as a decimal: an integer exactly, a float as its shortest spelling."""
    return Decimal(value) if isinstance(value, int) else Decimal(repr(value))


def _span(low: Any, high: Any) -> str:
    """Bounds as a terminal name says them: "0 to 150", "from 3", "to 40" (None: open)."""
    if low is not None and high is not None:
        return f"{low} to {high}"
    return f"from {low}" if low is not None else f"to {high}"


def _constraining(node: Mapping) -> bool:
    """Does `node` say anything about validity (beyond its definitions and annotations)?"""
    return any((k in _SUPPORTED or k in UNSUPPORTED) and k not in _DEFS for k in node)


def _asks_nothing(schema: Any) -> bool:
    return schema is True or isinstance(schema, Mapping) and not _constraining(schema)


def _vacuous(key: str, value: Any, node: Mapping) -> bool:
    """An unsupported keyword that asks nothing here: empty dependencies, uniqueItems false,
    minProperties 0, `if` without then/else, then/else without `if` (the specification's reading)."""
    if key in ("dependencies", "dependentRequired", "dependentSchemas"):
        return value == {}
    if key == "if":
        return "then" not in node and "else" not in node
    if key in ("then", "else"):
        return "if" not in node
    return (key, value) in (("uniqueItems", False), ("minProperties", 0))


def _is_type(value: Any, name: str) -> bool:
    return {"null": value is None, "boolean": isinstance(value, bool),
            "integer": isinstance(value, int) and not isinstance(value, bool) or
            isinstance(value, float) and value.is_integer(),
            "number": isinstance(value, (int, float)) and not isinstance(value, bool),
            "string": isinstance(value, str), "array": isinstance(value, list),
            "object": isinstance(value, dict)}.get(name, False)
