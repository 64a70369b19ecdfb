"""`_by_first_occurrence` (a block's rows and reached states grouped) numbers equal items by their
first occurrence, the same on its dict path (few items) and its numpy path (many)."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from glrmask_cli.terminal_dwa import _FEW, _by_first_occurrence


def _reference(items: list) -> tuple[list[int], list[int]]:
    number: dict = {}
    group = [number.setdefault(item, len(number)) for item in items]
    return group, [group.index(g) for g in range(len(number))]


@given(values=st.lists(st.integers(-1, 3), max_size=3 * _FEW), width=st.integers(0, 3))
def test_groups_by_first_occurrence(values, width):
    if width:       # rows of `width` entries
        values = values[:len(values) - len(values) % width]
        items = np.asarray(values, dtype=np.int32).reshape(-1, width)
        expected = _reference([tuple(row) for row in items.tolist()])
    else:
        items = np.asarray(values, dtype=np.int64)
        expected = _reference(values)
    group, first = _by_first_occurrence(items)
    assert (group.tolist(), first.tolist()) == expected


def test_both_paths_on_either_side_of_the_dict_limit():
    rng = np.random.default_rng(0)
    for n in (0, 1, _FEW - 1, _FEW, _FEW + 1, 8 * _FEW):
        for items in (rng.integers(-1, 4, n), rng.integers(-1, 2, (n, 3)).astype(np.int32)):
            keys = items.tolist() if items.ndim == 1 else [tuple(row) for row in items.tolist()]
            group, first = _by_first_occurrence(items)
            assert (group.tolist(), first.tolist()) == _reference(keys), n
