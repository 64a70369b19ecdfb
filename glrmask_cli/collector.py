"""The cyclic garbage collector's pace while a build runs (`paced`).

A build allocates millions of small containers (read-NFA nodes and edges, subsets, memo entries)
that live until their stage ends and are freed by reference counting. At CPython's default pace (a
young collection every 700 net allocations, a full one whenever the long-lived heap grew by a
quarter) the collector keeps traversing them: 5.0 of 35 s of the Parser DWA's splice and
determinization for python eval_input x cl100k, in 9,028 collections. While a build runs, the young
generation is collected every `YOUNG_THRESHOLD` allocations instead (38 collections, 0.9 s); the
collector still runs, so cyclic garbage is still freed. The previous thresholds come back when the
last build running in the process ends (builds may run on several threads). Forked workers inherit
the pace (`forks.py` forks inside a build).
"""

from __future__ import annotations

import functools
import gc
import threading
from typing import Callable, ParamSpec, TypeVar

YOUNG_THRESHOLD = 100_000

_P = ParamSpec("_P")
_R = TypeVar("_R")

_lock = threading.Lock()
_running = 0                                  # builds running in this process
_saved: tuple[int, int, int] = gc.get_threshold()   # the thresholds to restore when the last one ends


def paced(build: Callable[_P, _R]) -> Callable[_P, _R]:
    """`build` with the collector paced for a build while it runs."""
    @functools.wraps(build)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        _enter()
        try:
            return build(*args, **kwargs)
        finally:
            _leave()
    return run


def _enter() -> None:
    global _running, _saved
    with _lock:
        if not _running:
            _saved = gc.get_threshold()
            if _saved[0]:      # 0: automatic collection is off, and stays off
                gc.set_threshold(max(YOUNG_THRESHOLD, _saved[0]), *_saved[1:])
        _running += 1


def _leave() -> None:
    global _running
    with _lock:
        _running -= 1
        if not _running:
            gc.set_threshold(*_saved)
