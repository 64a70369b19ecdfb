"""Regexps for JSON numbers under JSON Schema's numeric keywords (docs/json-schema.md).

`integer_range`: the JSON integers between two bounds. `number_range`: the numbers written in plain
decimal (no exponent) between two decimal bounds, each inclusive or exclusive, compared exactly.
`multiples`: the integers, or plain decimals, that are multiples of a `multipleOf` (an integer or
a power of ten such as 0.01). A terminal's regexp matches leftmost-first (as `re.match`, and the
lexer), so alternatives that could end a number early come after the ones that go on, or the
regexp ends in a one-byte lookahead that no digit may follow.
"""

from __future__ import annotations

import math
from decimal import Decimal

_ANY_FRACTION = r"(?:\.[0-9]+)?"
_INT = r"-?(?:0|[1-9][0-9]*)"
MAX_RESIDUE_REGEXP = 20_000      # the longest regexp `multiples` writes for an integer divisor


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


def number_range(low: Decimal | int | None, low_exclusive: bool, high: Decimal | int | None,
                 high_exclusive: bool) -> str | None:
    """A regexp for the JSON numbers in plain decimal (no exponent) between decimal bounds (None:
    open), each inclusive or exclusive; None if there are none. "-0" and "-0.0" are 0, as for jsonschema."""
    low = None if low is None else Decimal(low)
    high = None if high is None else Decimal(high)
    sides = []
    zero_below_high = high is None or high > 0 or (high == 0 and not high_exclusive)
    # magnitudes u of the numbers written without a minus: u >= 0 and low <= u <= high
    if zero_below_high:
        if low is None or low < 0:
            low_u, low_u_exclusive = Decimal(0), False
        else:
            low_u, low_u_exclusive = low, low_exclusive
        sides += _magnitudes(low_u, low_u_exclusive, high, high_exclusive)
    # with a minus, -u: low <= -u <= high, i.e. -high <= u <= -low
    if low is None or low < 0 or (low == 0 and not low_exclusive):
        low_u, low_u_exclusive = (Decimal(0), False) if high is None or zero_below_high else (-high, high_exclusive)
        negative = _magnitudes(low_u, low_u_exclusive, None if low is None else -low, low_exclusive)
        sides += [(width, "-" + regexp) for width, regexp in negative]
    alternatives = [regexp for _, regexp in sorted(sides, key=lambda a: -a[0])]
    return "(?:" + "|".join(alternatives) + ")" if alternatives else None


def multiples(divisor: Decimal, integers_only: bool) -> str | None:
    """A regexp for the JSON integers (`integers_only`) or plain decimals that are multiples of
    `divisor` (> 0), exactly in decimal; None where it is not written: a decimal divisor other than
    one over a power of ten (0.1, 0.01) for numbers, or a divisor whose residue automaton's regexp
    would be longer than MAX_RESIDUE_REGEXP (7, 9, 11, ...)."""
    places = max(0, -int(divisor.normalize().as_tuple().exponent))     # finite: an int
    scaled = int(divisor.scaleb(places))               # divisor = scaled / 10^places
    if integers_only:          # n / divisor = n * 10^places / scaled is whole iff n is a multiple of:
        whole = _residue_regexp(scaled // math.gcd(scaled, 10 ** places))
        return None if whole is None else f"-?{whole}(?![0-9])"
    if places == 0:
        whole = _residue_regexp(scaled)
        return None if whole is None else f"-?{whole}(?:\\.0+)?(?![0-9])"
    if scaled != 1:
        return None
    return f"{_INT}(?:\\.[0-9]{{1,{places}}}0*)?(?![0-9])"


def _residue_regexp(divisor: int) -> str | None:
    """A regexp for the decimal naturals (no leading zeros) divisible by `divisor`: the residue
    automaton (state: the value so far modulo divisor), minimized, then its states eliminated."""
    if divisor == 1:
        return "(?:0|[1-9][0-9]*)"
    # states: 0..divisor-1 residues after a leading non-zero digit, divisor = start, divisor + 1 = "0"
    start, zero = divisor, divisor + 1
    step = {r: {str(d): (10 * r + d) % divisor for d in range(10)} for r in range(divisor)}
    step[start] = {"0": zero} | {str(d): d % divisor for d in range(1, 10)}
    step[zero] = {}
    accepting = {0, zero}
    block = _minimal_blocks(step, accepting)
    merged: dict[int, dict[str, int]] = {}
    for state, moves in step.items():
        merged.setdefault(block[state], {d: block[t] for d, t in moves.items()})
    return _eliminate(merged, block[start], {block[s] for s in accepting})


def _minimal_blocks(step: dict[int, dict[str, int]], accepting: set[int]) -> dict[int, int]:
    """Moore's partition refinement: state -> block number (equivalent states share one)."""
    block = {s: int(s in accepting) for s in step}
    while True:
        signature = {s: (block[s], tuple(sorted((d, block[t]) for d, t in step[s].items()))) for s in step}
        numbers = {sig: k for k, sig in enumerate(sorted(set(signature.values()), key=repr))}
        refined = {s: numbers[signature[s]] for s in step}
        if len(set(refined.values())) == len(set(block.values())):
            return refined
        block = refined


def _eliminate(step: dict[int, dict[str, int]], start: int, accepting: set[int]) -> str | None:
    """The regexp of a DFA over digits (Brzozowski-McCluskey state elimination, the state whose
    removal writes the least first); None if it grows past MAX_RESIDUE_REGEXP."""
    final, initial = -1, -2
    edges: dict[tuple[int, int], str] = {(initial, start): ""}
    for state, moves in step.items():
        by_target: dict[int, list[str]] = {}
        for digit, target in moves.items():
            by_target.setdefault(target, []).append(digit)
        for target, digits in by_target.items():
            edges[state, target] = "[" + "".join(sorted(digits)) + "]"
        if state in accepting:
            edges[state, final] = ""

    def cost(state: int) -> int:
        loop = len(edges.get((state, state), ""))
        into = [len(r) for (s, t), r in edges.items() if t == state != s]
        out = [len(r) for (s, t), r in edges.items() if s == state != t]
        return sum(i + loop + o for i in into for o in out)

    remaining = set(step)
    while remaining:
        state = min(remaining, key=lambda s: (cost(s), s))
        remaining.remove(state)
        loop = edges.pop((state, state), None)
        star = f"(?:{loop})*" if loop is not None else ""
        into = [(s, r) for (s, t), r in edges.items() if t == state]
        out = [(t, r) for (s, t), r in edges.items() if s == state]
        for s, _ in into:
            del edges[s, state]
        for t, _ in out:
            del edges[state, t]
        for s, r_in in into:
            for t, r_out in out:
                path = r_in + star + r_out
                edges[s, t] = f"(?:{edges[s, t]}|{path})" if (s, t) in edges else path
                if len(edges[s, t]) > MAX_RESIDUE_REGEXP:
                    return None
    regexp = edges.get((initial, final))
    return None if regexp is None else f"(?:{regexp})"


def _split(value: Decimal) -> tuple[int, str]:
    """(integer part, fraction digits without trailing zeros) of a non-negative decimal."""
    whole, _, fraction = format(value, "f").partition(".")
    return int(whole), fraction.rstrip("0")


def _magnitudes(low: Decimal, low_exclusive: bool, high: Decimal | None,
                high_exclusive: bool) -> list[tuple[float, str]]:
    """(integer part's width, regexp) per alternative for the unsigned plain decimals u = I.F with
    low <= u <= high (0 <= low; high None: open), each bound inclusive or exclusive. Sorted widest
    first by the caller: leftmost-first matching must not end the number early."""
    if high is not None and (low > high or (low == high and (low_exclusive or high_exclusive))):
        return []
    low_int, low_digits = _split(low)
    lower = (low_digits, low_exclusive)
    high_int, upper = (None, None) if high is None else (_split(high)[0], (_split(high)[1], high_exclusive))
    if low_int == high_int:                     # one integer part: the fraction between both bounds
        fraction = _fraction(lower, upper)
        return [] if fraction is None else [(len(str(low_int)), f"{low_int}{fraction}")]
    out: list[tuple[float, str]] = []
    fraction = _fraction(lower, None)
    if fraction is not None:
        out.append((len(str(low_int)), f"{low_int}{fraction}"))
    first, last = low_int + 1, (None if high_int is None else high_int - 1)
    if last is None or first <= last:
        out += [(width, f"(?:{regexp}){_ANY_FRACTION}") for width, regexp in _naturals_by_width(first, last)]
    if high_int is not None:
        fraction = _fraction(("", False), upper)
        if fraction is not None:
            out.append((len(str(high_int)), f"{high_int}{fraction}"))
    return out


Digits = tuple[str, bool]       # a fraction bound: its digits (no trailing zeros), exclusive?


def _fraction(lower: Digits, upper: Digits | None) -> str | None:
    """The regexp of an optional JSON fraction `.F` whose value 0.F (0 without one) lies between
    the bounds (upper None: below 1); None if none does, "" if only no fraction does."""
    alternatives, empty = _digit_strings(lower, upper)
    if not alternatives:
        return "" if empty else None
    body = "\\.(?:" + "|".join(alternatives) + ")"
    return f"(?:{body})?" if empty else body


def _digit_strings(lower: Digits, upper: Digits | None) -> tuple[list[str], bool]:
    """Regexps for the non-empty digit strings F with lower <= 0.F <= upper, one per first digit
    (or run of first digits), each reading every digit that follows; and whether the empty string
    (0) is between the bounds."""
    low, low_exclusive = lower
    empty = low == "" and not low_exclusive and (upper is None or upper[0] != "" or not upper[1])
    if upper is not None and upper[0] == "":                       # at most 0: zeros only
        return (["0+"], True) if empty else ([], False)
    if low == "" and upper is None:
        return (["[0-9]*[1-9][0-9]*"], False) if low_exclusive else (["[0-9]+"], True)
    low_digit = int(low[0]) if low else 0
    high_digit = 9 if upper is None else int(upper[0][0])
    bounded_high = upper is not None and high_digit > low_digit
    alternatives = []
    rest_upper = (upper[0][1:], upper[1]) if upper is not None and high_digit == low_digit else None
    first = _then(str(low_digit), _digit_strings((low[1:], low_exclusive), rest_upper))
    if first is not None:
        alternatives.append(first)
    middle_low, middle_high = low_digit + 1, high_digit - 1 if bounded_high else high_digit
    if middle_low <= middle_high:
        digits = str(middle_low) if middle_low == middle_high else f"[{middle_low}-{middle_high}]"
        alternatives.append(digits + "[0-9]*")
    if bounded_high and upper is not None:
        last = _then(str(high_digit), _digit_strings(("", False), (upper[0][1:], upper[1])))
        if last is not None:
            alternatives.append(last)
    return alternatives, empty


def _then(digit: str, rest: tuple[list[str], bool]) -> str | None:
    """`digit` followed by one of `rest`'s digit strings (or nothing, where rest allows it)."""
    alternatives, empty = rest
    if not alternatives:
        return digit if empty else None
    return f"{digit}(?:{'|'.join(alternatives)})" + ("?" if empty else "")


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
