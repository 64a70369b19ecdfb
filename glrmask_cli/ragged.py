"""Index arithmetic over ragged arrays (CSR: the items of row i at offsets[i]:offsets[i + 1]).

One home for the idiom the stages use to gather many rows at once with numpy instead of a Python
loop per row.
"""

from __future__ import annotations

import numpy as np


def row_positions(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """starts[i], starts[i] + 1, ..., starts[i] + counts[i] - 1 for every i, concatenated in order:
    the flat positions of the rows beginning at `starts`, `counts` long."""
    ends = np.cumsum(counts)
    return np.repeat(starts - (ends - counts), counts) + np.arange(int(ends[-1]) if len(ends) else 0)


def positions_within(counts: np.ndarray) -> np.ndarray:
    """0, 1, ..., counts[i] - 1 for every i, concatenated in order: each item's index inside its row,
    for rows stored one after another."""
    return row_positions(np.zeros(len(counts), dtype=np.int64), counts)
