"""Character classes over all code points (vectorized DFA run vs `re` per code point), UTF-8 splitting."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from glrmask_cli.grammar import TerminalSpec
from glrmask_cli.lexer.dfa import EOF, START
from glrmask_cli.lexer.scanner import build_terminal_dfa
from glrmask_cli.lexer.utf8 import utf8_sequences

CODE_POINTS = np.array([c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF], dtype=np.int64)


def _encoded():
    enc = [chr(c).encode("utf-8") for c in CODE_POINTS.tolist()]
    lengths = np.array([len(e) for e in enc])
    table = np.zeros((len(enc), 4), np.int64)
    for k in range(4):
        table[:, k] = [e[k] if len(e) > k else 0 for e in enc]
    return table, lengths


def _dfa_accepts_each(dfa, table, lengths) -> np.ndarray:
    state = np.full(len(lengths), START, np.int64)
    for k in range(4):
        active = lengths > k
        state[active] = dfa.trans[state[active], table[active, k]]
    return dfa.close[state, EOF]


CLASSES = [r"\d", r"\w", r"\s", r".", r"[^\W\d]", r"(?i:k)", r"(?i:[a-z])", r"(?i:\u00df)", r"[^\s\"]",
           r"(?s:.)", r"(?i:[^a])", r"(?a:\w)", r"\D", r"(?i:\u0130)"]


@pytest.fixture(scope="module")
def encoded():
    return _encoded()


@pytest.mark.parametrize("pattern", CLASSES[:6])
def test_class_over_all_code_points(pattern, encoded):
    check_class(pattern, encoded)


@pytest.mark.slow
@pytest.mark.parametrize("pattern", CLASSES[6:])
def test_class_over_all_code_points_more(pattern, encoded):
    check_class(pattern, encoded)


def check_class(pattern, encoded):
    dfa = build_terminal_dfa(TerminalSpec("X", pattern, frozenset(), 0, False, "X"))
    got = _dfa_accepts_each(dfa, *encoded)
    judge = re.compile(pattern).fullmatch
    expected = np.fromiter((judge(chr(c)) is not None for c in CODE_POINTS.tolist()), bool, len(CODE_POINTS))
    bad = CODE_POINTS[got != expected]
    assert bad.size == 0, [hex(c) for c in bad[:10].tolist()]


def test_utf8_sequences_exact():
    rng = random.Random(7)
    edges = [0, 0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF]
    for _ in range(300):
        lo = rng.choice(edges + [rng.randint(0, 0x10FFFF)])
        hi = min(0x10FFFF, lo + rng.choice([0, 1, 63, 64, 4095, 70000]))
        ranges = [(a, b) for a, b in ((lo, min(hi, 0xD7FF)), (max(lo, 0xE000), hi)) if a <= b]
        seqs = utf8_sequences(ranges)
        for cp in {lo, hi, (lo + hi) // 2, rng.randint(lo, hi), max(0, lo - 1), min(0x10FFFF, hi + 1)}:
            if 0xD800 <= cp <= 0xDFFF:
                continue
            data = chr(cp).encode()
            hits = sum(len(s) == len(data) and all(a <= b <= c for (a, c), b in zip(s, data, strict=True))
                       for s in seqs)
            inside = any(a <= cp <= b for a, b in ranges)
            assert hits == (1 if inside else 0), (hex(lo), hex(hi), hex(cp))
