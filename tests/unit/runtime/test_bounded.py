"""The runtime's bounded caches (`bounded.BoundedCache`): the oldest entry goes first, the bound
holds however keys are put, and a cleared cache starts afresh."""

from __future__ import annotations

from glrmask_runtime.bounded import BoundedCache


def test_a_full_cache_evicts_the_oldest_one_per_insertion():
    cache: BoundedCache[int, str] = BoundedCache(3)
    for key in range(10):
        cache.put(key, str(key))
        assert len(cache) == min(key + 1, 3)
    assert [cache.get(key) for key in range(10)] == [None] * 7 + ["7", "8", "9"]
    assert 9 in cache and 6 not in cache


def test_many_evictions_keep_exactly_the_newest():
    """Far more insertions than the dict's own resizes would absorb: what is kept is always the
    last `limit` keys put."""
    cache: BoundedCache[int, int] = BoundedCache(1000)
    for key in range(50_000):
        cache.put(key, key)
    assert len(cache) == 1000
    assert all(cache.get(key) == key for key in range(49_000, 50_000)) and cache.get(48_999) is None


def test_a_key_put_twice_does_not_let_the_cache_grow_past_its_limit():
    """Two threads may compute and put the same key: its second insertion leaves a stale entry
    in the insertion order, which eviction skips over."""
    cache: BoundedCache[int, int] = BoundedCache(2)
    for key in (1, 1, 2, 3, 4, 4, 5):
        cache.put(key, key)
        assert len(cache) <= 2
    assert cache.get(5) == 5 and cache.get(4) == 4


def test_clear_empties_it_and_a_lowered_limit_takes_effect_at_the_next_insertion():
    cache: BoundedCache[int, int] = BoundedCache(5)
    for key in range(5):
        cache.put(key, key)
    cache.limit = 2
    cache.put(5, 5)
    assert len(cache) == 2 and cache.get(4) == 4 and cache.get(5) == 5
    cache.clear()
    assert len(cache) == 0 and cache.get(5) is None
    cache.put(6, 6)
    assert cache.get(6) == 6
