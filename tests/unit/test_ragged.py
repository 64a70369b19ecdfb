import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from glrmask_cli.ragged import row_positions


@given(st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 5)), max_size=20))
def test_row_positions_are_each_rows_range_in_order(rows):
    """Rows of any length (empty ones included), overlapping or not, in the order given."""
    starts = np.asarray([start for start, _ in rows], dtype=np.int64)
    counts = np.asarray([count for _, count in rows], dtype=np.int64)
    expected = [p for start, count in rows for p in range(start, start + count)]
    assert row_positions(starts, counts).tolist() == expected
