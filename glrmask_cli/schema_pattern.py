"""A JSON Schema `pattern` as a regexp over JSON string content written without escapes.

JSON Schema matches `pattern` (ECMA-262 syntax, unanchored) against the decoded string. Strings
that a pattern constrains are written here without escape sequences, so their raw content is the
decoded string, and the content is the pattern's language intersected with the characters that
need no escaping (not `"`, `\\` or U+0000-U+001F): `content_regexp` rewrites the pattern's syntax
tree so that every character set excludes those (classes as Python's `re` reads them, below), and
an unanchored side becomes "any such characters" (anchors may stand at the ends of the pattern or of
its alternatives, `^a$|^b$`: those are spread out into a union). What cannot be rewritten exactly
(backreferences, lookarounds, other anchors, flags) raises `PatternUnsupported` with the reason.
"""

from __future__ import annotations

import functools
import re
import re._constants as C
import re._parser as sre_parse

import numpy as np

PLAIN_ANY = r'[^"\\\x00-\x1f]'
_FORBIDDEN = [(0x00, 0x1F), (0x22, 0x22), (0x5C, 0x5C), (0xD800, 0xDFFF)]   # and surrogates
_MAX_CODE = 0x10FFFF
# The classes follow Python's `re` (as the `jsonschema` validator does), not ECMA-262: \d, \w and
# \s are Unicode-aware, `.` excludes only "\n" (docs/json-schema.md).
_CLASS_OF = {C.CATEGORY_DIGIT: r"\d", C.CATEGORY_WORD: r"\w", C.CATEGORY_SPACE: r"\s"}
_NEGATED = {C.CATEGORY_NOT_DIGIT: C.CATEGORY_DIGIT, C.CATEGORY_NOT_WORD: C.CATEGORY_WORD,
            C.CATEGORY_NOT_SPACE: C.CATEGORY_SPACE}
_NEWLINE = [(0x0A, 0x0A)]


class PatternUnsupported(ValueError):
    """The pattern uses syntax that cannot be rewritten exactly."""


def content_regexp(pattern: str) -> str:
    """The regexp (Python/Lark syntax) of the JSON string contents, without escapes, whose text
    `pattern` matches somewhere (or wholly, where it is anchored with ^ and $)."""
    try:
        tree = sre_parse.parse(pattern)
    except re.error as e:
        raise PatternUnsupported(f"not a regular expression Python can read: {e}") from e
    return "(?:" + "|".join(_search(items) for items in _spread(list(tree))) + ")"


_STARTS = (C.AT_BEGINNING, C.AT_BEGINNING_STRING)
_ENDS = (C.AT_END, C.AT_END_STRING)      # "$" before a final newline too: content has none


def _search(items) -> str:
    """The contents in which the sequence `items` matches: anchors only at its two ends."""
    start = 0
    while start < len(items) and items[start][0] is C.AT and items[start][1] in _STARTS:
        start += 1
    end = len(items)
    while end > start and items[end - 1][0] is C.AT and items[end - 1][1] in _ENDS:
        end -= 1
    body = _sequence(items[start:end])
    return ("" if start else PLAIN_ANY + "*") + f"(?:{body})" + ("" if end < len(items) else PLAIN_ANY + "*")


MAX_ANCHORED_ALTERNATIVES = 64


def _spread(items) -> list[list]:
    """`items` as a union of sequences in which no group or alternation holds an anchor: those are
    spread out (`^a$|^b$` is `^a$` or `^b$`), so anchors can only stand at a sequence's ends."""
    out: list[list] = [[]]
    for op, av in items:
        if op is C.SUBPATTERN and not av[1] and not av[2] and _anchored(av[3]):
            options = _spread(list(av[3]))
        elif op is C.BRANCH and any(_anchored(alt) for alt in av[1]):
            options = [seq for alt in av[1] for seq in _spread(list(alt))]
        else:
            options = [[(op, av)]]
        out = [seq + option for seq in out for option in options]
        if len(out) > MAX_ANCHORED_ALTERNATIVES:
            raise PatternUnsupported("too many alternatives hold anchors")
    return out


def _anchored(items) -> bool:
    """Does `items` hold an anchor outside repetitions (in a group or alternation, at any depth)?"""
    for op, av in items:
        if op is C.AT or op is C.SUBPATTERN and _anchored(av[3]) or op is C.BRANCH and any(map(_anchored, av[1])):
            return True
    return False


def _sequence(items) -> str:
    return "".join(_node(op, av) for op, av in items)


def _node(op, av) -> str:
    if op is C.LITERAL:
        return _char_class([(av, av)])
    if op is C.NOT_LITERAL:
        return _char_class(_complement([(av, av)]))
    if op is C.ANY:
        return _char_class(_complement(_NEWLINE))
    if op is C.IN:
        return _char_class(_class_ranges(av))
    if op is C.CATEGORY:
        return _char_class(_category(av))
    if op is C.BRANCH:
        return "(?:" + "|".join(_sequence(list(alt)) for alt in av[1]) + ")"
    if op is C.SUBPATTERN:
        group, add_flags, del_flags, sub = av
        if add_flags or del_flags:
            raise PatternUnsupported("inline flags are not supported")
        return "(?:" + _sequence(list(sub)) + ")"
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
        low, high, sub = av
        count = f"{{{low},{'' if high is C.MAXREPEAT else high}}}"
        return "(?:" + _sequence(list(sub)) + ")" + count
    if op is C.AT:
        raise PatternUnsupported("anchors or word boundaries inside the pattern are not supported")
    raise PatternUnsupported(f"{str(op).lower()} is not supported (backreferences, lookarounds)")


def _class_ranges(items) -> list[tuple[int, int]]:
    negate = bool(items) and items[0][0] is C.NEGATE
    ranges: list[tuple[int, int]] = []
    for op, av in items[int(negate):]:
        if op is C.LITERAL:
            ranges.append((av, av))
        elif op is C.RANGE:
            ranges.append(av)
        elif op is C.CATEGORY:
            ranges += _category(av)
        else:
            raise PatternUnsupported(f"{str(op).lower()} inside a character class is not supported")
    return _complement(ranges) if negate else ranges


def _category(name) -> list[tuple[int, int]]:
    if name in _CLASS_OF:
        return _python_class(name)
    if name in _NEGATED:
        return _complement(_python_class(_NEGATED[name]))
    raise PatternUnsupported(f"character class {name} is not supported")


@functools.cache
def _python_class(name) -> list[tuple[int, int]]:
    """The code points Python's `re` puts in \\d, \\w or \\s, as ranges: the class's runs in a string of
    every code point, found by `re` itself (one scan in C, once per process)."""
    runs = re.finditer(_CLASS_OF[name] + "+", _every_code_point())
    return [(match.start(), match.end() - 1) for match in runs]


def _every_code_point() -> str:
    """U+0000..U+10FFFF in order, surrogates included (Python strings may hold them; no class
    matches one)."""
    return np.arange(_MAX_CODE + 1, dtype="<u4").tobytes().decode("utf-32-le", "surrogatepass")


def _complement(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out, at = [], 0
    for low, high in sorted(ranges):
        if low > at:
            out.append((at, low - 1))
        at = max(at, high + 1)
    if at <= _MAX_CODE:
        out.append((at, _MAX_CODE))
    return out


def _char_class(ranges: list[tuple[int, int]]) -> str:
    """A class of `ranges` minus the characters JSON must escape (PatternUnsupported if none is left)."""
    allowed = _complement(_complement(ranges) + _FORBIDDEN)
    if not allowed:
        raise PatternUnsupported("the pattern needs a character that JSON writes escaped (\", \\ or a control)")
    parts = "".join(_escape(low) if low == high else f"{_escape(low)}-{_escape(high)}" for low, high in allowed)
    return f"[{parts}]"


def _escape(code: int) -> str:
    """A class member that survives lark's grammar loader, which turns \\u, \\U and \\x escapes
    into the characters themselves before the regexp is read (so `\\u005b` would open a class)."""
    if code > 0x7F:
        return f"\\U{code:08x}" if code > 0xFFFF else f"\\u{code:04x}"    # never special in a class
    char = chr(code)
    return "\\" + char if char in "\\]-^[" else char
