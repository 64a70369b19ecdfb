"""`fork_map`: results come back in order whatever finishes first, an item's exception reaches the
caller, and a worker that dies is a one-line error."""

import os
import time

import pytest

from glrmask_cli.errors import UnsupportedFeature, WorkerLost
from glrmask_cli.forks import fork_map


def _square_slow_first(k: int) -> tuple[int, int]:
    time.sleep(0.2 if k == 0 else 0.0)      # the first item finishes last
    if k == 3:
        raise ValueError("three")
    return k * k, os.getpid()


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_map_yields_in_order_and_raises_the_item_error(jobs):
    results = fork_map(_square_slow_first, [0, 1, 2, 3, 4], jobs, "rows")
    done = [next(results) for _ in range(3)]
    assert [square for square, _ in done] == [0, 1, 4]
    assert ({pid for _, pid in done} == {os.getpid()}) == (jobs == 1)
    with pytest.raises(ValueError, match="three"):
        next(results)


def test_a_map_whose_worker_dies_is_a_clear_error():
    with pytest.raises(WorkerLost, match="rows: a worker process ended"):
        list(fork_map(_die_item, [1, 2], 2, "rows"))


def _die_item(k: int) -> int:
    os._exit(3)


def _bad_grammar(k: int) -> int:
    raise UnsupportedFeature("g.lark:3:1", "backreferences", terminal="T", hint="write it out")


def test_a_grammar_error_in_a_worker_reaches_the_caller_as_itself():
    """A context's lexer can fail on a worker; the build must say what lark-level problem it was,
    not that a worker died."""
    with pytest.raises(UnsupportedFeature) as caught:
        list(fork_map(_bad_grammar, [1, 2], 2, "lexer contexts"))
    assert str(caught.value) == "g.lark:3:1: terminal T: backreferences; write it out"
    assert caught.value.terminal == "T"


def _lost_worker(k: int) -> int:
    raise WorkerLost("parser DWA")


def test_a_worker_lost_inside_a_worker_reaches_the_caller_with_its_text():
    """A nested pool's lost worker (a group's build forks again) pickles to its own message."""
    with pytest.raises(WorkerLost) as caught:
        list(fork_map(_lost_worker, [1, 2], 2, "rows"))
    assert str(caught.value) == str(WorkerLost("parser DWA"))      # not the message wrapped in itself
    assert getattr(caught.value, "stage", None) == "parser DWA"
