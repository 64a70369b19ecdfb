"""How a build reports progress: the pipeline calls `stage(name)` when a stage starts (names:
`pipeline.STAGES`); a long stage calls `total(n, unit)` (again if it learns of more work) and
`advance(k)` as it goes, and may call `note(text)` (e.g. "20,331 states"). The CLI renders a bar on
a terminal (cli.py); everything else gets `NO_PROGRESS`, which does nothing.

Stages report through a `Ticker`, which forwards at most every `interval` seconds (plus once at the
end), so a stage's loop pays a counter increment and a clock read per item, never a redraw.
"""

from __future__ import annotations

import time
from typing import Protocol


class Progress(Protocol):
    def stage(self, name: str) -> None:
        """A stage starts (the previous one, if any, is done)."""

    def total(self, n: int, unit: str) -> None:
        """The current stage has `n` items of work, counted in `unit` ("terminals")."""

    def advance(self, n: int = 1) -> None:
        """`n` more items of the current stage are done."""

    def note(self, text: str) -> None:
        """A short status shown after the count ("20,331 states")."""


class NoProgress:
    """Reports nothing."""

    def stage(self, name: str) -> None:
        pass

    def total(self, n: int, unit: str) -> None:
        pass

    def advance(self, n: int = 1) -> None:
        pass

    def note(self, text: str) -> None:
        pass


NO_PROGRESS: Progress = NoProgress()
INTERVAL = 0.1     # seconds between two forwarded counts


class Ticker:
    """A stage's view of `progress`: counts items and forwards them at most every `interval`
    seconds (default INTERVAL); `close()` forwards the rest. `total` and `note` are forwarded at once."""

    __slots__ = ("_progress", "_pending", "_last", "_interval", "_clock")

    def __init__(self, progress: Progress, total: int, unit: str, interval: float | None = None) -> None:
        self._progress = progress
        self._pending = 0
        self._clock = time.perf_counter
        self._last = self._clock()
        self._interval = INTERVAL if interval is None else interval
        progress.total(total, unit)

    def total(self, n: int, unit: str) -> None:
        self._progress.total(n, unit)

    def note(self, text: str) -> None:
        self._progress.note(text)

    def advance(self, n: int = 1) -> None:
        self._pending += n
        now = self._clock()
        if now - self._last >= self._interval:
            self._last = now
            self._progress.advance(self._pending)
            self._pending = 0

    def close(self) -> None:
        if self._pending:
            self._progress.advance(self._pending)
            self._pending = 0
