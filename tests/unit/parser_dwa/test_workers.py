"""Group builds on worker processes: results come back in submission order whatever finishes first,
a task's exception reaches the caller, and a worker that dies is a one-line error."""

import os
import time

import pytest

from glrmask_cli.errors import LimitExceeded, WorkerLost
from glrmask_cli.parser_dwa.determinize import Part
from glrmask_cli.parser_dwa.groups import Group
from glrmask_cli.parser_dwa.workers import GroupBuilds


def _slow_first(group: Group, max_states: int):
    time.sleep(0.2 if max_states == 0 else 0.0)      # the first task finishes last
    if max_states == 3:
        raise LimitExceeded("max_dwa_states", 3, "parser DWA determinization")
    return [], Part(max_states, len(group.subtrees))


@pytest.mark.parametrize("jobs", [1, 2])
def test_results_and_errors_come_back_per_task(jobs):
    with GroupBuilds(_slow_first, jobs) as builds:
        futures = [builds.submit(Group(frozenset(range(k))), k) for k in range(5)]
        for k, future in enumerate(futures):
            if k == 3:
                with pytest.raises(LimitExceeded, match="max_dwa_states=3"):
                    builds.result(future)
            else:
                assert builds.result(future) == ([], Part(k, k))


def _die(group: Group, max_states: int):
    os._exit(3)


def test_a_worker_that_dies_is_a_clear_error():
    with GroupBuilds(_die, 2) as builds:
        future = builds.submit(Group(frozenset([1])), 10)
        with pytest.raises(WorkerLost, match="--jobs 1"):
            builds.result(future)


def test_one_job_runs_a_task_when_its_result_is_asked_for():
    """In-process builds hold one group's states at a time and report each as it is done."""
    ran = []

    def record(group: Group, max_states: int):
        ran.append(max_states)
        return [], Part(max_states, 0)

    with GroupBuilds(record, 1) as builds:
        futures = [builds.submit(Group(frozenset()), k) for k in range(3)]
        assert ran == []
        assert builds.result(futures[1]) == ([], Part(1, 0))
        assert ran == [1]

