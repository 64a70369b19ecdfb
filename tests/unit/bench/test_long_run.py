"""bench/long_run_bench.py's parts: the full collections it counts are the collector's own, and
the caches it reports are the artifact's, each within its limit after masks and commits."""

from __future__ import annotations

import gc

from bench.long_run_bench import _cache_fill, _FullCollections
from devtools.builds import JSON_GRAMMAR, built


def test_full_collections_are_counted_and_young_ones_are_not():
    counted = _FullCollections()
    gc.callbacks.append(counted)
    try:
        gc.collect(0)
        gc.collect(1)
        assert counted.ms == []
        gc.collect()
        gc.collect(2)
    finally:
        gc.callbacks.remove(counted)
    assert len(counted.ms) == 2 and all(ms >= 0 for ms in counted.ms)


def test_every_bounded_cache_is_reported_within_its_limit():
    b = built(JSON_GRAMMAR, "gpt2")
    artifact = b.artifact
    matcher = artifact.matcher()
    for token in b.vocab.encode('{"a": [1, 2, {"b": null}]}'):
        matcher.mask()
        matcher.commit(token)
    fill = _cache_fill(artifact)
    assert set(fill) == {"interned_cells", "glr_steps", "scanner_runs", "row_combinations", "unpacked_rows",
                         "mask_memo"}
    assert fill["unpacked_rows"][0] >= 1          # mask() unpacked the rows it returned
    assert fill["interned_cells"][0] > 1
    assert all(0 <= entries <= limit for entries, limit in fill.values())
