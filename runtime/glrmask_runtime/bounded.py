"""The runtime's bounded caches: once full, each insertion first evicts the oldest entry.

Emptying a full cache at once frees everything it held in the step that filled it: 256 kept masks
of 12.5 KB take 0.5-0.8 ms to free, a 16,384-entry memo several, a latency spike in one mask or
commit. Evicting one entry per insertion spreads that over the insertions (dicts keep insertion
order, so the first key is the oldest). Hot paths test `len(cache) >= limit` inline and call
`evict_oldest` only then; the others call `put`."""

from __future__ import annotations

from typing import Any


def evict_oldest(cache: dict[Any, Any]) -> None:
    """Remove the oldest entry. Matchers on other threads may share `cache`: an eviction one of
    them got to first is skipped."""
    try:
        del cache[next(iter(cache))]
    except (KeyError, RuntimeError, StopIteration):
        pass


def put(cache: dict[Any, Any], key: Any, value: Any, limit: int) -> None:
    """cache[key] = value, first evicting the oldest entry if `cache` holds `limit` or more."""
    if len(cache) >= limit:
        evict_oldest(cache)
    cache[key] = value
