"""`_distinct_columns_by_block` (spelling out the closes: what tokens do from the hand-over STARTs,
per block of classes) is numpy's unique over each block's columns, with its inverse."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from glrmask_cli.terminal_dwa import _distinct_columns_by_block


@given(st.integers(1, 4), st.lists(st.integers(1, 12), min_size=1, max_size=6),
       st.sampled_from([3, 40, 10**6]), st.randoms())
def test_same_as_numpy_unique_per_block(starts, sizes, span, rnd):
    block_starts = np.concatenate([[0], np.cumsum(sizes)])
    after = np.asarray([[rnd.randrange(-1, span) for _ in range(int(block_starts[-1]))] for _ in range(starts)],
                       dtype=np.int32)
    found = _distinct_columns_by_block(after, block_starts)
    assert len(found) == len(sizes)
    for (columns, which), lo, hi in zip(found, block_starts[:-1], block_starts[1:]):
        expected, inverse = np.unique(after[:, lo:hi], axis=1, return_inverse=True)
        assert columns == [tuple(column) for column in expected.T.tolist()]
        assert which.tolist() == inverse.reshape(-1).tolist()
