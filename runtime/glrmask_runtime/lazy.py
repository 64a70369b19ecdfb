"""Python views of an artifact's mapped arrays, built entry by entry on first use.

The matcher's hot paths index Python tuples, lists and dicts (a numpy scalar is slower to index
and to hash). Building those for every state at load costs about a microsecond per entry: hundreds of
milliseconds for a code grammar's artifact, most of it for states no request reaches. These views
build an entry on its first lookup and keep it, so a load costs the same whatever the artifact's
size, and a process holds only what its requests reached. A built entry is a plain dict lookup,
or, for an entry that holds a good part of its key space (`csr_lookups`), an int64 array over every
key: a root of the Parser DWA has an edge for nearly every LR state (sql.lark: 12,595 of 12,596),
and a dict of those took 1 ms to build on a request's first mask, the array 20 us (and 8 bytes a
key against about 80 an entry).
Lookups must use `view[i]` (`get` and iteration see only what was built).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import numpy as np

V = TypeVar("V")


class OnFirstUse(dict[int, V]):
    """i -> build(i), computed on the first `self[i]` and kept."""

    __slots__ = ("_build",)

    def __init__(self, build: Callable[[int], V]) -> None:
        super().__init__()
        self._build = build

    def __missing__(self, i: int) -> V:
        value = self[i] = self._build(i)
        return value


def flat(array: np.ndarray) -> memoryview:
    """A 1-D memoryview of `array` (no copy for a native-order array): indexing it, and `.tolist()`
    of its slices, give Python ints without numpy scalars. Its format is the native one (`memoryview`
    refuses an explicit byte order such as the artifact's little-endian `<i`)."""
    native = array.dtype.newbyteorder("=")
    same = array.view(native) if array.dtype.isnative else array.astype(native)
    return np.ascontiguousarray(same).reshape(-1).data


def table_rows(table: np.ndarray) -> OnFirstUse[tuple[int, ...]]:
    """Row i of a 2-D integer table as a tuple: as fast to index as a list, and the cyclic collector
    stops traversing a tuple of ints once it has met it, where it reads a list's every slot in each
    full collection (keywords3000 x cl100k after 74k steps: 12,208 lexer rows of 256, a third of a
    full collection's 110 ms)."""
    cells, width = flat(table), int(table.shape[1])
    return OnFirstUse(lambda i: tuple(cells[i * width:(i + 1) * width].tolist()))


def csr_slices(offsets: np.ndarray, items: np.ndarray, convert: Callable[[list[int]], V]) -> OnFirstUse[V]:
    """Entry i of a CSR encoding, items[offsets[i]:offsets[i + 1]], as `convert` of its list."""
    bounds, values = flat(offsets), flat(items)
    return OnFirstUse(lambda i: convert(values[bounds[i]:bounds[i + 1]].tolist()))


DENSE_MIN = 256    # entries with fewer keys stay dicts: cheap to build, and dict.get is the fastest lookup
DENSE_SHARE = 8    # ... and so do entries holding less than an eighth of the key space (smaller as dicts)


if TYPE_CHECKING:
    _Int64Array = array[int]
else:
    _Int64Array = array     # array.array takes no type argument at run time (Python 3.11)


class DenseLookup(_Int64Array):
    """An entry of `csr_lookups` as an int64 array over every key 0..n-1, the keys it lacks holding
    its fill value. `get(key, default)` is that array's item: `default` is not used, since callers
    pass the fill (the state's default edge, the empty row) as the value of a missing key."""

    __slots__ = ()

    def get(self, key: int, default: int | None = None) -> int:
        return self[key]


Lookup = dict[int, int] | DenseLookup


def csr_lookups(offsets: np.ndarray, keys: np.ndarray, values: np.ndarray, n_keys: int,
                fill: Callable[[int], int]) -> OnFirstUse[Lookup]:
    """Entry i of a CSR map with keys in [0, n_keys), keys[lo:hi] -> values[lo:hi] with lo, hi =
    offsets[i], offsets[i + 1]: a dict, or a `DenseLookup` filled with `fill(i)` where the entry
    holds at least `DENSE_MIN` keys and a `DENSE_SHARE`th of the key space (built with numpy)."""
    bounds, k, v = flat(offsets), flat(keys), flat(values)

    def build(i: int) -> Lookup:
        lo, hi = bounds[i], bounds[i + 1]
        if hi - lo >= DENSE_MIN and (hi - lo) * DENSE_SHARE >= n_keys:
            table = np.full(n_keys, fill(i), dtype="=i8")
            table[keys[lo:hi]] = values[lo:hi]
            dense = DenseLookup("q")
            dense.frombytes(table.tobytes())
            return dense
        return dict(zip(k[lo:hi].tolist(), v[lo:hi].tolist(), strict=True))
    return OnFirstUse(build)
