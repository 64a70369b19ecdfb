"""`_distinct_values` and `_distinct_columns` (the Terminal DWA's distinct outcome ids per block) are
numpy's unique with its inverse, whichever way they take (presence table, one number per column, sort)."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from glrmask_cli.terminal_dwa import _distinct_columns, _distinct_values


@given(st.lists(st.integers(-1, 50), max_size=200) | st.lists(st.integers(-1, 10**9), max_size=20),
       st.sampled_from([np.int32, np.int64]))
def test_same_as_numpy_unique(values, dtype):
    array = np.asarray(values, dtype=dtype)
    distinct, which = _distinct_values(array)
    expected, inverse = np.unique(array, return_inverse=True)
    assert distinct.dtype == expected.dtype
    assert distinct.tolist() == expected.tolist()
    assert which.tolist() == inverse.reshape(-1).tolist()


@given(st.integers(1, 4), st.integers(0, 60), st.sampled_from([3, 40, 10**6]), st.randoms())
def test_distinct_columns_same_as_numpy_unique(starts, classes, span, rnd):
    after = np.asarray([[rnd.randrange(-1, span) for _ in range(classes)] for _ in range(starts)], dtype=np.int32)
    columns, which = _distinct_columns(after)
    expected, inverse = np.unique(after, axis=1, return_inverse=True)
    assert columns == [tuple(column) for column in expected.T.tolist()]
    assert which.tolist() == inverse.reshape(-1).tolist()
