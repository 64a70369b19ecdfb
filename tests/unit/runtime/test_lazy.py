"""The artifact's Python views built on first use (runtime/glrmask_runtime/lazy.py)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from glrmask_runtime.lazy import DENSE_MIN, DENSE_SHARE, DenseLookup, csr_lookups


@st.composite
def _csr_maps(draw):
    """A CSR map over keys [0, n_keys): per entry, sorted distinct keys (some entries hold most of
    them, so both forms of an entry are drawn) with values, and a fill value per entry."""
    n_keys = draw(st.integers(1, 3 * DENSE_MIN))
    entries = []
    for _ in range(draw(st.integers(1, 6))):
        share = draw(st.sampled_from([0.0, 0.1, 0.5, 1.0]))
        keys = sorted(draw(st.sets(st.integers(0, n_keys - 1), max_size=int(n_keys * share))))
        entries.append({k: draw(st.integers(-1, 10**6)) for k in keys})
    fills = draw(st.lists(st.integers(-1, 10**6), min_size=len(entries), max_size=len(entries)))
    return n_keys, entries, fills


@settings(max_examples=60, deadline=None)
@given(_csr_maps())
def test_lookups_answer_as_the_map_with_its_fill(case):
    """Every entry, dict or list, gives each key's value, and the entry's fill for a key it lacks:
    what a walk reads (`get(key, fill)`, or `get(key)` then the fill where it is None)."""
    n_keys, entries, fills = case
    offsets = np.cumsum([0] + [len(e) for e in entries]).astype(np.int32)
    keys = np.asarray([k for e in entries for k in e], dtype=np.int32)
    values = np.asarray([v for e in entries for v in e.values()], dtype=np.int32)
    view = csr_lookups(offsets, keys, values, n_keys, fills.__getitem__)
    for i, entry in enumerate(entries):
        lookup = view[i]
        dense = len(entry) >= DENSE_MIN and len(entry) * DENSE_SHARE >= n_keys
        assert isinstance(lookup, DenseLookup) == dense
        for key in range(n_keys):
            expected = entry.get(key, fills[i])
            assert lookup.get(key, fills[i]) == expected
            found = lookup.get(key)
            assert (fills[i] if found is None else found) == expected
