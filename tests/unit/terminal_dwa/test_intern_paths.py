"""`_intern_paths` (the Terminal DWA's outcome per scanned row when the contextual lexer forks a
token's scan) equals the plain reading: a row's outcome is the sorted set of its live branches'
(node, final) paths, and outcomes not yet known are numbered in the order of their rows' first
branch."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from glrmask_cli.terminal_dwa import NO_OUTCOME, _intern_paths


def _reference(index: dict, n_rows: int, rows: list[int], nodes: list[int], finals: list[int]) -> list[int]:
    paths: dict[int, set] = {}
    first: dict[int, int] = {}
    for at, (row, node, final) in enumerate(zip(rows, nodes, finals)):
        paths.setdefault(row, set()).add((node, final))
        first.setdefault(row, at)
    ids = [NO_OUTCOME] * n_rows
    for row in sorted(paths, key=first.__getitem__):
        found = sorted(paths[row])
        key = found[0] if len(found) == 1 else tuple(found)
        ids[row] = index.setdefault(key, len(index))
    return ids


_branches = st.lists(st.tuples(st.integers(0, 30), st.integers(0, 4), st.integers(0, 3)), max_size=120)


@given(_branches, st.lists(st.tuples(st.integers(0, 4), st.integers(0, 3)), max_size=4))
def test_same_as_the_plain_reading(branches, known):
    n_rows = 31
    index = {pair: i for i, pair in enumerate(dict.fromkeys(known))}
    expected_index = dict(index)
    rows, nodes, finals = (list(column) for column in zip(*branches)) if branches else ([], [], [])
    expected = _reference(expected_index, n_rows, rows, nodes, finals)
    got = _intern_paths(index, n_rows, np.asarray(rows, dtype=np.int64), np.asarray(nodes, dtype=np.int32),
                        np.asarray(finals, dtype=np.int32))
    assert got.tolist() == expected
    assert index == expected_index
