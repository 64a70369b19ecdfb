"""Work on processes forked from the build: they inherit its inputs without copying them, and only
each item and its result cross between processes. `fork_map` serves the stages whose work splits
into independent items (the contextual lexer's contexts, the row pool's lexer states); the Parser
DWA's groups have their own scheduler (parser_dwa/workers.py). Results come back in order, so what a
stage builds does not depend on the number of jobs.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterator, Sequence, TypeVar

from glrmask_cli.errors import WorkerLost

Item = TypeVar("Item")
Result = TypeVar("Result")
_MAPPED: Callable[[Any], Any] | None = None     # the running fork_map's function; forked workers inherit it


def available_jobs() -> int:
    """The CPUs this process may run on (the default number of jobs)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:       # not on every platform
        return max(1, os.cpu_count() or 1)


def forks() -> bool:
    """Whether this platform can fork processes."""
    return "fork" in multiprocessing.get_all_start_methods()


def fork_pool(jobs: int) -> ProcessPoolExecutor:
    """A pool of `jobs` processes forked from this one (callers check `forks()` first)."""
    return ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"))


def fork_map(fn: Callable[[Item], Result], items: Sequence[Item], jobs: int, stage: str) -> Iterator[Result]:
    """`fn(item)` for each item, in order, computed on `jobs` forked processes (in this process when
    `jobs` is 1, there is one item or fork is unavailable); each result is yielded as soon as it and
    those before it are done. WorkerLost (naming `stage`) if a process dies. One runs at a time."""
    global _MAPPED
    if jobs <= 1 or len(items) <= 1 or not forks():
        yield from map(fn, items)
        return
    if _MAPPED is not None:
        raise RuntimeError("fork_map does not nest")
    _MAPPED = fn
    try:
        with fork_pool(min(jobs, len(items))) as pool:
            yield from pool.map(_call_mapped, items)
    except BrokenProcessPool:
        raise WorkerLost(stage) from None
    finally:
        _MAPPED = None


def _call_mapped(item: Any) -> Any:
    if _MAPPED is None:
        raise RuntimeError("a mapped call ran outside fork_map")
    return _MAPPED(item)
