"""Terminal pattern (Python regex source + Lark flags) -> a small regex IR over code points.

Parsing is done by Python's own `re._parser`, so the accepted syntax is exactly `re`'s. Character
sets are resolved to sorted code-point ranges (surrogates removed: text is UTF-8) by asking `re`
itself, which makes `\\d \\w \\s`, `.` and case-insensitivity agree with Python by construction.
Rejected (SyntaxUnsupported): backreferences, anchors/boundaries, conditionals, possessive/atomic groups.
"""

from __future__ import annotations

import functools
import re
import re._compiler as sre_compile
import re._constants as C
import re._parser as sre_parse
from dataclasses import dataclass

MAX_CODEPOINT = 0x10FFFF
SURROGATES = (0xD800, 0xDFFF)
_FLAG_BITS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE, "u": re.UNICODE}

Ranges = tuple[tuple[int, int], ...]


class SyntaxUnsupported(Exception):
    """A construct the lexer cannot compile; the scanner turns it into UnsupportedFeature."""


@dataclass(frozen=True)
class Chars:
    ranges: Ranges            # sorted, disjoint, non-adjacent code-point ranges (inclusive)


@dataclass(frozen=True)
class Seq:
    items: tuple


@dataclass(frozen=True)
class Alt:
    items: tuple              # ordered: earlier alternatives have priority (leftmost-first)


@dataclass(frozen=True)
class Repeat:
    item: object
    min: int
    max: int | None           # None = unbounded
    lazy: bool


@dataclass(frozen=True)
class Look:
    ahead: bool               # True: lookahead, False: lookbehind
    negate: bool
    item: object


def parse_pattern(pattern: str, flags: frozenset[str] | str = frozenset()) -> object:
    """Parse `pattern` with Lark-style flags ("imsxu") into the IR (Chars/Seq/Alt/Repeat/Look)."""
    bits = 0
    for f in sorted(flags):
        if f not in _FLAG_BITS:
            raise SyntaxUnsupported(f"unknown regexp flag {f!r}")
        bits |= _FLAG_BITS[f]
    try:
        parsed = sre_parse.parse(pattern, bits)
    except re.error as e:
        raise SyntaxUnsupported(f"invalid regexp: {e}") from e
    return _convert(parsed, parsed.state.flags, parsed.state)


def _convert(sub, flags: int, state) -> object:
    items = [_convert_op(op, av, flags, state) for op, av in sub.data]
    return items[0] if len(items) == 1 else Seq(tuple(items))


def _convert_op(op, av, flags: int, state) -> object:
    if op in (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN):
        return Chars(charset_ranges(op, av, flags, state))
    if op is C.SUBPATTERN:
        _group, add, remove, body = av
        if add & (re.ASCII | re.LOCALE | re.UNICODE):     # as re._compiler._combine_flags
            flags &= ~(re.ASCII | re.LOCALE | re.UNICODE)
        return _convert(body, (flags | add) & ~remove, state)
    if op is C.BRANCH:
        return Alt(tuple(_convert(b, flags, state) for b in av[1]))
    if op in (C.MAX_REPEAT, C.MIN_REPEAT):
        lo, hi, body = av
        return Repeat(_convert(body, flags, state), lo, None if hi is C.MAXREPEAT else hi,
                      op is C.MIN_REPEAT)
    if op in (C.ASSERT, C.ASSERT_NOT):
        direction, body = av
        return Look(direction == 1, op is C.ASSERT_NOT, _convert(body, flags, state))
    names = {C.GROUPREF: "backreference", C.GROUPREF_EXISTS: "conditional group (?(...))",
             C.AT: "anchor or word boundary (^ $ \\A \\Z \\b \\B)",
             C.POSSESSIVE_REPEAT: "possessive quantifier", C.ATOMIC_GROUP: "atomic group (?>...)"}
    raise SyntaxUnsupported(f"{names.get(op, str(op).lower())} is not supported in a terminal")


def charset_ranges(op, av, flags: int, state) -> Ranges:
    """Code points matched by one single-character node, exactly as Python's `re` matches them."""
    if not flags & re.IGNORECASE:
        simple = _simple_ranges(op, av, flags)
        if simple is not None:
            return simple
    key = repr((op, av)) + f"/{flags & (re.IGNORECASE | re.DOTALL | re.ASCII | re.UNICODE)}"
    return _ranges_by_re(key, op, av, flags, state)


def _simple_ranges(op, av, flags: int) -> Ranges | None:
    if op is C.LITERAL:
        return _normalize([(av, av)])
    if op is C.NOT_LITERAL:
        return complement(_normalize([(av, av)]))
    if op is C.ANY:
        return ((0, MAX_CODEPOINT),) if flags & re.DOTALL else complement(((10, 10),))
    spans, negate = [], False
    for iop, iav in av:
        if iop is C.NEGATE:
            negate = True
        elif iop is C.LITERAL:
            spans.append((iav, iav))
        elif iop is C.RANGE:
            spans.append(iav)
        else:
            return None               # categories: let `re` decide
    ranges = _normalize(spans)
    return complement(ranges) if negate else ranges


@functools.lru_cache(maxsize=None)
def _all_code_points() -> str:
    return "".join(map(chr, range(MAX_CODEPOINT + 1)))


_RE_CACHE: dict[str, Ranges] = {}


def _ranges_by_re(key: str, op, av, flags: int, state) -> Ranges:
    """Run the node as `(?:node)+` over all code points in order: each match is one range."""
    if key in _RE_CACHE:
        return _RE_CACHE[key]
    state = sre_parse.State()          # its flags are OR-ed into the compile flags: set them exactly
    state.flags = flags & ~re.VERBOSE
    node = sre_parse.SubPattern(state, [(op, av)])
    plus = sre_parse.SubPattern(state, [(C.MAX_REPEAT, (1, C.MAXREPEAT, node))])
    compiled = sre_compile.compile(plus, flags & ~re.VERBOSE)
    ranges = _normalize([(m.start(), m.end() - 1) for m in compiled.finditer(_all_code_points())])
    _RE_CACHE[key] = ranges
    return ranges


def _normalize(spans) -> Ranges:
    """Sort, merge, and remove surrogates."""
    out: list[list[int]] = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    result = []
    for lo, hi in out:
        for a, b in ((lo, min(hi, SURROGATES[0] - 1)), (max(lo, SURROGATES[1] + 1), hi)):
            if a <= b:
                result.append((a, b))
    return tuple(result)


def complement(ranges: Ranges) -> Ranges:
    out, nxt = [], 0
    for lo, hi in ranges:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CODEPOINT:
        out.append((nxt, MAX_CODEPOINT))
    return _normalize(out)


def width(node) -> tuple[int, int | None]:
    """(min, max) length in characters of what `node` matches (max None = unbounded)."""
    if isinstance(node, Chars):
        return (1, 1) if node.ranges else (0, 0)
    if isinstance(node, Look):
        return (0, 0)
    if isinstance(node, Seq):
        lo = 0
        hi: int | None = 0
        for item in node.items:
            a, b = width(item)
            lo += a
            hi = None if hi is None or b is None else hi + b
        return lo, hi
    if isinstance(node, Alt):
        ws = [width(i) for i in node.items]
        his = [b for _, b in ws]
        return min(a for a, _ in ws), None if None in his else max(b for b in his if b is not None)
    a, b = width(node.item)
    repeated = None if node.max is None or b is None else b * node.max
    if node.max is None and b == 0:
        repeated = 0
    return a * node.min, repeated

