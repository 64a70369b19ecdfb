"""Latency statistics: mean, p50, p90, p99, p99.9 and max of per-step nanosecond samples, in microseconds.

Percentiles use the nearest-rank definition (the smallest sample with at least p% of samples at or
below it), so every reported number is a measured step, never an interpolation. Ratios compare a
peer's number to GLRMask's (ratio > 1: GLRMask is faster / smaller).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

PERCENTILES = (("p50", 50.0), ("p90", 90.0), ("p99", 99.0), ("p99.9", 99.9))
STAT_KEYS = ("mean",) + tuple(name for name, _ in PERCENTILES) + ("max",)


def nearest_rank(sorted_values: np.ndarray, percent: float) -> float:
    """The nearest-rank percentile of an ascending array (percent in (0, 100])."""
    if not 0 < percent <= 100:
        raise ValueError(f"percent must be in (0, 100], got {percent}")
    rank = max(1, math.ceil(percent / 100 * len(sorted_values)))
    return float(sorted_values[rank - 1])


def summarize(samples_ns: Sequence[int]) -> dict[str, float] | None:
    """{count, mean, p50, p90, p99, p99.9, max} in microseconds; None if there are no samples."""
    if len(samples_ns) == 0:
        return None
    values = np.sort(np.asarray(samples_ns, dtype=np.float64)) / 1e3
    out = {"count": int(len(values)), "mean": float(values.mean())}
    for name, percent in PERCENTILES:
        out[name] = nearest_rank(values, percent)
    out["max"] = float(values[-1])
    return out


def ratio(peer: float | None, ours: float | None) -> float | None:
    """peer / ours, or None when either is missing or ours is zero."""
    if peer is None or ours is None or ours == 0:
        return None
    return peer / ours
