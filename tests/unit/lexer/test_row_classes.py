"""`row_classes` (the lexer's minimization groups states by their rows with it) must put two rows
in one class exactly when they are equal, also when hashes collide."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from glrmask_cli.lexer import dfa
from glrmask_cli.lexer.dfa import row_classes


def same_partition(classes: np.ndarray, rows: np.ndarray) -> bool:
    expected = np.unique(rows, axis=0, return_inverse=True)[1].ravel()
    pairs = set(zip(classes.tolist(), expected.tolist()))
    return len(pairs) == len(set(classes.tolist())) == len(set(expected.tolist()))


@given(st.integers(1, 40), st.integers(1, 6), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_equal_rows_share_a_class_and_only_they(n_rows, n_cols, n_values, seed):
    rows = np.random.default_rng(seed).integers(-1, n_values, size=(n_rows, n_cols))
    classes = row_classes(rows)
    assert classes.min() == 0 and classes.max() == len(set(map(tuple, rows.tolist()))) - 1
    assert same_partition(classes, rows)


def test_colliding_hashes_fall_back_to_exact_grouping(monkeypatch):
    monkeypatch.setattr(dfa, "hash_weights", lambda n: np.zeros(n, dtype=np.uint64))   # every row hashes to 0
    rows = np.array([[1, 2], [2, 1], [1, 2], [0, 0]])
    assert same_partition(row_classes(rows), rows)


@pytest.mark.parametrize("shape", [(3, 5000), (0, 3)])
def test_wide_and_empty_arrays(shape):
    rows = np.zeros(shape, dtype=np.int64)
    assert same_partition(row_classes(rows), rows) if shape[0] else len(row_classes(rows)) == 0
