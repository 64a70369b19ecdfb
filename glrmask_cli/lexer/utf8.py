"""Code-point ranges -> sequences of byte ranges whose concatenations are exactly their UTF-8 encodings.

Input: inclusive code-point ranges without surrogates. Output: a list of sequences, each a tuple of
(lo, hi) byte ranges, one per byte; the sequences' byte languages are disjoint and their union is
the UTF-8 encoding of the input set. Method: split at encoding-length boundaries, then wherever a
range does not cover whole blocks of continuation bytes (the classic scheme also used by RE2).
"""

from __future__ import annotations

ByteSeq = tuple[tuple[int, int], ...]

_LENGTH_LIMITS = (0x7F, 0x7FF, 0xFFFF, 0x10FFFF)


def encode(cp: int) -> bytes:
    return chr(cp).encode("utf-8")


def utf8_sequences(ranges) -> list[ByteSeq]:
    """All byte-range sequences for the code-point ranges `ranges` (in code-point order)."""
    out: list[ByteSeq] = []
    for lo, hi in ranges:
        start = lo
        for limit in _LENGTH_LIMITS:
            if start > hi:
                break
            if start <= limit:
                _split(start, min(hi, limit), out)
                start = limit + 1
    return out


def _split(lo: int, hi: int, out: list[ByteSeq]) -> None:
    """lo..hi have the same encoded length; emit aligned pieces."""
    n = len(encode(lo))
    for i in range(1, n):
        mask = (1 << (6 * i)) - 1
        if lo & ~mask != hi & ~mask:
            if lo & mask:
                _split(lo, lo | mask, out)
                _split((lo | mask) + 1, hi, out)
                return
            if hi & mask != mask:
                _split(lo, (hi & ~mask) - 1, out)
                _split(hi & ~mask, hi, out)
                return
    a, b = encode(lo), encode(hi)
    out.append(tuple(zip(a, b)))
