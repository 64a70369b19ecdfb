"""bench.stats: nearest-rank percentiles checked against the definition, by brute force."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.stats import PERCENTILES, nearest_rank, ratio, summarize


def by_definition(values: list[float], percent: float) -> float:
    """Smallest sample v such that at least percent% of the samples are <= v."""
    n = len(values)
    return min(v for v in values if sum(x <= v for x in values) * 100 >= percent * n)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10**9), min_size=1, max_size=300),
       st.sampled_from([p for _, p in PERCENTILES] + [0.1, 100.0]))
def test_nearest_rank_matches_definition(samples: list[int], percent: float) -> None:
    assert nearest_rank(np.sort(np.array(samples, dtype=np.float64)), percent) == by_definition(samples, percent)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10**7), min_size=1, max_size=500))
def test_summarize_is_in_microseconds_and_ordered(samples: list[int]) -> None:
    s = summarize(samples)
    assert s["count"] == len(samples)
    assert s["max"] == max(samples) / 1e3
    assert s["mean"] == pytest.approx(sum(samples) / len(samples) / 1e3)
    keys = [name for name, _ in PERCENTILES] + ["max"]
    assert [s[k] for k in keys] == sorted(s[k] for k in keys)
    for name, percent in PERCENTILES:
        assert s[name] == by_definition([x / 1e3 for x in samples], percent)


def test_summarize_empty_is_none() -> None:
    assert summarize([]) is None


def test_nearest_rank_rejects_bad_percent() -> None:
    with pytest.raises(ValueError, match="percent"):
        nearest_rank(np.array([1.0]), 0)


def test_ratio_handles_missing_and_zero() -> None:
    assert ratio(6.0, 3.0) == 2.0
    assert ratio(None, 3.0) is None and ratio(1.0, None) is None and ratio(1.0, 0.0) is None
