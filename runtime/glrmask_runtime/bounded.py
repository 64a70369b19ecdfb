"""The runtime's bounded caches: once full, each insertion first evicts the oldest entry.

Emptying a full cache at once frees everything it held in the step that filled it: 256 kept masks
of 12.5 KB take 0.5-0.8 ms to free, a 16,384-entry memo several, a latency spike in one mask or
commit. Evicting one entry per insertion spreads that over the insertions.

The oldest key comes from a queue of the insertions, not from the dict: a dict keeps the slots of
deleted entries until it is resized, so `next(iter(d))` after many evictions skips all of them
(about 50 us per eviction at 65,536 entries, on every new stack cell of a long-running server),
and an `OrderedDict` would make every probe 20-25 ns slower. Probes go to the dict itself (`get`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """A dict of at most `limit` entries (at least one), the oldest evicted per insertion once full.
    Matchers on other threads may share one: an eviction another thread got to first is skipped."""

    __slots__ = ("get", "limit", "_entries", "_order")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._entries: dict[K, V] = {}
        self._order: deque[K] = deque()        # keys in insertion order (evicted ones popped)
        self.get: Callable[[K], V | None] = self._entries.get     # the hot paths' probe: dict.get itself

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def put(self, key: K, value: V) -> None:
        """self[key] = value, first evicting the oldest entries while `limit` or more are kept."""
        entries, order = self._entries, self._order
        while len(entries) >= self.limit and order:
            try:
                entries.pop(order.popleft(), None)
            except IndexError:        # another thread emptied the queue first
                break
        entries[key] = value
        order.append(key)

    def clear(self) -> None:
        self._entries.clear()
        self._order.clear()
