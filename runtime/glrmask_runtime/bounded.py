"""The runtime's bounded caches: when full, each insertion first evicts the oldest entry.

Emptying a full cache at once frees everything it held in the step that filled it: 256 kept masks
of 12.5 KB take 0.5-0.8 ms to free, a 16,384-entry memo several, a latency spike in one mask or
commit. Evicting one entry per insertion spreads that over the insertions (dicts keep insertion
order, so the first key is the oldest)."""

from __future__ import annotations

from typing import Any


def put(cache: dict[Any, Any], key: Any, value: Any, limit: int) -> None:
    """cache[key] = value, first evicting the oldest entry if `cache` holds `limit` or more. Matchers
    on other threads may share `cache`: an eviction one of them got to first is skipped."""
    if len(cache) >= limit:
        try:
            del cache[next(iter(cache))]
        except (KeyError, RuntimeError, StopIteration):
            pass
    cache[key] = value
