"""Latency statistics: mean, p50, p90, p99, p99.9 and max of per-step nanosecond samples, in microseconds
(or of any samples at a given scale), and the documents with the slowest steps.

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


def summarize(samples: Sequence[float], unit: float = 1e3) -> dict[str, float] | None:
    """{count, mean, p50, p90, p99, p99.9, max} of the samples divided by `unit` (default: nanoseconds
    in microseconds; 1e-3: seconds in milliseconds); None if there are no samples."""
    if len(samples) == 0:
        return None
    values = np.sort(np.asarray(samples, dtype=np.float64)) / unit
    out = {"count": int(len(values)), "mean": float(values.mean())}
    for name, percent in PERCENTILES:
        out[name] = nearest_rank(values, percent)
    out["max"] = float(values[-1])
    return out


def slowest_steps(docs: list[dict], keep: int = 5) -> dict[str, list]:
    """The documents with the slowest single mask / commit step, in the first pass and in the per-step
    minimum over replays (`mask_min`, `commit_min`: slow every time, not by a neighbour's noise)."""
    out = {}
    for kind in ("mask", "commit", "mask_min", "commit_min"):
        found = [(d[f"slowest_{kind}"][1] / 1e3, d["id"], *d[f"slowest_{kind}"][::2])
                 for d in docs if d.get(f"slowest_{kind}")]
        out[kind] = [{"us": us, "doc": doc, "step": step, **({"token": rest[0]} if rest else {})}
                     for us, doc, step, *rest in sorted(found, reverse=True)[:keep]]
    return out


def ratio(peer: float | None, ours: float | None) -> float | None:
    """peer / ours, or None when either is missing or ours is zero."""
    if peer is None or ours is None or ours == 0:
        return None
    return peer / ours
