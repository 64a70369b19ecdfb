"""`_equal_strings` (token classes: tokens grouped by their byte-class strings) groups exactly the
equal strings, numbered by first member, whether its hash separates them or collides (then it
checks and falls back to the strings themselves)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from glrmask_cli import terminal_dwa
from glrmask_cli.terminal_dwa import _equal_strings


def _reference(strings: list[bytes], chosen: list[int]) -> tuple[list[int], list[int]]:
    index: dict[bytes, int] = {}
    first: list[int] = []
    group = []
    for at, i in enumerate(chosen):
        if strings[i] not in index:
            index[strings[i]] = len(first)
            first.append(at)
        group.append(index[strings[i]])
    return group, first


_strings = st.lists(st.binary(min_size=0, max_size=6).map(lambda b: bytes(x % 3 for x in b)), max_size=60)


@pytest.mark.parametrize("base", [terminal_dwa._HASH_BASE, np.uint64(0)])   # 0: every hash collides
@given(strings=_strings, data=st.data())
def test_groups_equal_strings(base, strings, data):
    nonempty = [i for i, s in enumerate(strings) if s]
    chosen = data.draw(st.lists(st.sampled_from(nonempty), unique=True) if nonempty else st.just([]))
    lengths = np.asarray([len(s) for s in strings], dtype=np.int64)
    keys = np.frombuffer(b"".join(strings), dtype=np.uint8)
    saved = terminal_dwa._HASH_BASE
    terminal_dwa._HASH_BASE = base
    try:
        group, first = _equal_strings(keys, np.cumsum(lengths) - lengths, lengths, np.asarray(chosen, dtype=np.int64))
    finally:
        terminal_dwa._HASH_BASE = saved
    assert (group.tolist(), first.tolist()) == _reference(strings, chosen)
