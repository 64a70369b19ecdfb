"""Proofs that two JSON Schemas share no instance, so that `oneOf` may be compiled as `anyOf`.

`Disjointness(resolve, strings).disjoint(a, b)` is True only when no JSON value is valid under both
`a` and `b`; False means "not proved". The proofs: the two admit no common JSON type (integer within
number); the values one lists (`enum`, `const`) all fail the other; for strings, the terminals the
two lower to (`strings`) share no text (their DFAs, as the lexer builds them, meet nowhere); for
objects, a property one requires has value schemas the two cannot both meet (recursively; one that
forbids the key meets none). `resolve` follows a `$ref`; keywords beside it are left out, which can
only widen a schema, so a proof stays sound.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from glrmask_cli.lexer.dfa import DEAD, EOF, START, determinize
from glrmask_cli.lexer.nfa import build_nfa
from glrmask_cli.lexer.syntax import parse_pattern

JSON_TYPES = frozenset({"null", "boolean", "number", "string", "array", "object"})
MAX_DEPTH = 32          # proofs look this deep through references and properties
Resolve = Callable[[Any], Any]


class Disjointness:
    """Proofs over one schema document: `resolve` follows a local $ref, `strings` gives the
    terminal regexp a schema's strings lower to (None where it cannot say)."""

    def __init__(self, resolve: Resolve, strings: Callable[[Mapping], str | None]) -> None:
        self.resolve = resolve
        self.strings = strings

    def disjoint(self, a: Any, b: Any, depth: int = 0) -> bool:
        """No instance is valid under both `a` and `b` (True: proved; False: not proved)."""
        a, b = self.resolve(a), self.resolve(b)
        if a is False or b is False:
            return True
        if not isinstance(a, Mapping) or not isinstance(b, Mapping) or depth > MAX_DEPTH:
            return False
        for x, y in ((a, b), (b, a)):
            if any(k in x and all(self.disjoint(o, y, depth + 1) for o in x[k]) for k in ("anyOf", "oneOf")):
                return True
            if any(self.disjoint(part, y, depth + 1) for part in x.get("allOf", [])):
                return True
        common = self.types(a, depth) & self.types(b, depth)
        return all(self.disjoint_as(t, a, b, depth) for t in common)

    def types(self, schema: Any, depth: int = 0) -> frozenset[str]:
        """The JSON types (integer counted as number) some instance of `schema` may have (a superset)."""
        schema = self.resolve(schema)
        if schema is False:
            return frozenset()
        if not isinstance(schema, Mapping) or depth > MAX_DEPTH:
            return JSON_TYPES
        out = JSON_TYPES
        if "type" in schema:
            names = [schema["type"]] if isinstance(schema["type"], str) else schema["type"]
            out &= {"number" if name == "integer" else name for name in names}
        listed = values(schema)
        if listed is not None:
            out &= {type_of(v) for v in listed}
        for key in ("anyOf", "oneOf"):
            if key in schema:
                out &= frozenset().union(*(self.types(o, depth + 1) for o in schema[key]))
        for part in schema.get("allOf", []):
            out &= self.types(part, depth + 1)
        return out

    def excludes(self, schema: Any, value: Any, depth: int = 0) -> bool:
        """`value` is proved invalid under `schema` (its type, `enum`/`const`, or, for an object, a
        required key it lacks or a member value its property schema excludes)."""
        schema = self.resolve(schema)
        if schema is False:
            return True
        if not isinstance(schema, Mapping) or depth > MAX_DEPTH:
            return False
        if type_of(value) not in self.types(schema, depth):
            return True
        listed = values(schema)
        if listed is not None and not any(equal(value, v) for v in listed):
            return True
        if isinstance(value, dict):
            if any(name not in value for name in schema.get("required", [])):
                return True
            return any(self.excludes(member_schema(schema, k), v, depth + 1) for k, v in value.items())
        return False

    def disjoint_as(self, kind: str, a: Mapping, b: Mapping, depth: int) -> bool:
        """No instance of JSON type `kind` is valid under both."""
        for x, y in ((a, b), (b, a)):
            listed = values(x)
            if listed is not None and all(self.excludes(y, v, depth + 1) for v in listed if type_of(v) == kind):
                return True
            if kind == "object" and any(self.disjoint(member_schema(x, name), member_schema(y, name), depth + 1)
                                        for name in x.get("required", [])):
                return True
        if kind != "string":
            return False
        left, right = self.strings(a), self.strings(b)
        return left is not None and right is not None and not meets(left, right)


def values(schema: Mapping) -> list | None:
    """The values `schema` lists (`const`, or `enum`), or None where it lists none."""
    if "const" in schema:
        return [schema["const"]]
    return list(schema["enum"]) if "enum" in schema else None


def type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "string" if isinstance(value, str) else "array" if isinstance(value, list) else "object"


def equal(x: Any, y: Any) -> bool:
    """JSON equality as JSON Schema's enum and const use it: 1 equals 1.0, true does not equal 1."""
    if isinstance(x, bool) or isinstance(y, bool):
        return isinstance(x, bool) and isinstance(y, bool) and x == y
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(equal(x[k], y[k]) for k in x)
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(map(equal, x, y))
    return type_of(x) == type_of(y) and x == y


def member_schema(schema: Mapping, name: str) -> Any:
    """What `schema` asks of the value of member `name` (at least: patterns may ask more)."""
    if name in schema.get("properties", {}):
        return schema["properties"][name]
    return True if "patternProperties" in schema else schema.get("additionalProperties", True)


def meets(*regexps: str) -> bool:
    """Do terminal regexps share a text? The product of their DFAs (as the lexer builds them)
    reaches a state where every one matches at the end of the text."""
    dfas = [determinize(build_nfa(parse_pattern(r))) for r in regexps]
    start = (START,) * len(dfas)
    seen, frontier = {start}, [start]
    while frontier:
        states = frontier.pop()
        if all(dfa.close[s, EOF] for dfa, s in zip(dfas, states)):
            return True
        moves = np.stack([dfa.trans[s] for dfa, s in zip(dfas, states)])        # (dfas, 256)
        for column in np.unique(moves[:, (moves != DEAD).all(axis=0)], axis=1).T:
            following = tuple(column.tolist())
            if following not in seen:
                seen.add(following)
                frontier.append(following)
    return False
