"""The example texts of lexer warnings (`_shortest_texts`): for every state reachable from the
starts, a text that leads there and is as short as any, printable ASCII preferred."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from glrmask_cli.lexer.dfa import DEAD, START
from glrmask_cli.lexer.scanner import _shortest_texts


def distances(trans: np.ndarray, starts: tuple[int, ...]) -> dict[int, int]:
    """Breadth-first distances, written plainly."""
    found = {s: 0 for s in starts}
    level = list(starts)
    while level:
        nxt = []
        for s in level:
            for t in trans[s].tolist():
                if t != DEAD and t not in found:
                    found[t] = found[s] + 1
                    nxt.append(t)
        level = nxt
    return found


@given(st.integers(2, 40), st.floats(0.005, 0.2), st.booleans(), st.integers(0, 2**32 - 1))
def test_each_reachable_state_gets_a_shortest_text_that_leads_there(n, density, two_starts, seed):
    rng = np.random.default_rng(seed)
    trans = rng.integers(0, n, size=(n, 256)) * (rng.random((n, 256)) < density)
    starts = (START, n - 1) if two_starts and n > 2 else (START,)
    texts = _shortest_texts(trans, starts)
    expected = distances(trans, starts)
    assert set(texts) == set(expected)
    for state, text in texts.items():
        assert len(text) == expected[state]
        assert any(_walk(trans, start, text) == state for start in starts), (state, text)


def _walk(trans: np.ndarray, state: int, text: bytes) -> int:
    for byte in text:
        state = int(trans[state, byte])
    return state


def test_printable_bytes_come_first():
    trans = np.zeros((4, 256), np.int64)
    trans[START, 0x01] = 2       # an unprintable byte and a printable one lead to state 2
    trans[START, ord("z")] = 2
    trans[2, 0x80] = 3
    assert _shortest_texts(trans) == {START: b"", 2: b"z", 3: b"z\x80"}
