"""Stage 7 (execution): a layout's groups built on worker processes.

Each group's splice and subset construction reads the same inputs and writes nothing shared, so
`GroupBuilds` runs them on `jobs` processes forked from the build (they inherit the inputs without
copying them; forks.py has the plain map the other stages use). A task builds its group into a
`StatePool` of its own and returns that pool's states; the parent hashes them into the layout's pool
(`StatePool.absorb`) in the groups' order, so the artifact is byte-identical for any number of jobs.
With one job, or where processes cannot be forked, the tasks run in the build's own process,
through the same code.
"""

from __future__ import annotations

from concurrent.futures import Executor, Future
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable

from glrmask_cli.errors import WorkerLost
from glrmask_cli.forks import fork_pool, forks
from glrmask_cli.parser_dwa.determinize import Part, Signature
from glrmask_cli.parser_dwa.groups import Group

Built = tuple[list[Signature], Part]
Task = Callable[[Group, int], Built]

_TASK: Task | None = None     # the running GroupBuilds' task; forked workers inherit it


def _run(group: Group, max_states: int) -> Built:
    if _TASK is None:
        raise RuntimeError("a group task ran outside GroupBuilds")
    return _TASK(group, max_states)


class _Deferred(Future):
    """A task of `_InProcess`: it runs when its result is first asked for."""

    def __init__(self, call: Callable[[], Any]) -> None:
        super().__init__()
        self._call: Callable[[], Any] | None = call

    def result(self, timeout: float | None = None) -> Any:
        call, self._call = self._call, None
        if call is not None:
            try:
                self.set_result(call())
            except Exception as err:      # handed to whoever waits on the future, as a pool would
                self.set_exception(err)
        return super().result(timeout)


class _InProcess(Executor):
    """Runs each task in this process when its result is asked for (so a build holds one group's
    result at a time and reports progress as each is done)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        return _Deferred(lambda: fn(*args, **kwargs))


class GroupBuilds:
    """`with GroupBuilds(task, jobs) as builds: builds.submit(group, max_states)` -> a future of
    `task(group, max_states)`, run on one of `jobs` forked processes (in this process when `jobs`
    is 1 or fork is unavailable), read with `builds.result(future)`. One GroupBuilds runs at a time."""

    def __init__(self, task: Task, jobs: int) -> None:
        self._task = task
        self.jobs = jobs
        self._executor: Executor = fork_pool(jobs) if jobs > 1 and forks() else _InProcess()

    def __enter__(self) -> GroupBuilds:
        global _TASK
        if _TASK is not None:
            raise RuntimeError("GroupBuilds do not nest")
        _TASK = self._task
        return self

    def __exit__(self, *exc: object) -> None:
        global _TASK
        self._executor.shutdown(wait=True, cancel_futures=True)
        _TASK = None

    def submit(self, group: Group, max_states: int) -> Future:
        return self._executor.submit(_run, group, max_states)

    @staticmethod
    def result(future: Future) -> Built:
        """The task's result, or the exception it raised; WorkerLost if its process died."""
        try:
            return future.result()
        except BrokenProcessPool:
            raise WorkerLost("parser DWA") from None
