"""A build paces the cyclic garbage collector (glrmask_cli/collector.py) while it runs and leaves the
process's thresholds as it found them: after a build, after a failed one, and when the process had
automatic collection off."""

import gc
import threading

import pytest

from glrmask_cli.collector import YOUNG_THRESHOLD
from glrmask_cli.errors import GrammarError
from glrmask_cli.pipeline import compile_front_end
from glrmask_cli.progress import NoProgress


class _Thresholds(NoProgress):
    """Records the collector's thresholds as each stage starts."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, ...]] = []

    def stage(self, name: str) -> None:
        self.seen.append(gc.get_threshold())


@pytest.fixture
def thresholds():
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*before)


def _grammar(tmp_path, text='start: "a" NUMBER\n%import common.NUMBER\n'):
    path = tmp_path / "g.lark"
    path.write_text(text)
    return path


def test_a_build_paces_the_collector_and_restores_it(tmp_path, thresholds):
    progress = _Thresholds()
    compile_front_end(_grammar(tmp_path), progress=progress)
    assert progress.seen and all(seen == (YOUNG_THRESHOLD, 10, 10) for seen in progress.seen)
    assert gc.get_threshold() == (700, 10, 10)


def test_a_failed_build_restores_the_collector(tmp_path, thresholds):
    with pytest.raises(GrammarError):
        compile_front_end(_grammar(tmp_path, "start: missing\n"))
    assert gc.get_threshold() == (700, 10, 10)


def test_automatic_collection_left_off_stays_off(tmp_path, thresholds):
    gc.set_threshold(0, 10, 10)
    progress = _Thresholds()
    compile_front_end(_grammar(tmp_path), progress=progress)
    assert set(progress.seen) == {(0, 10, 10)}
    assert gc.get_threshold() == (0, 10, 10)


def test_builds_on_several_threads_restore_the_collector_when_the_last_ends(tmp_path, thresholds):
    inside, release = threading.Event(), threading.Event()

    class Waits(NoProgress):
        def stage(self, name: str) -> None:
            if name == "lexer":
                inside.set()
                release.wait(10)

    first = threading.Thread(target=compile_front_end, args=(_grammar(tmp_path),), kwargs={"progress": Waits()})
    first.start()
    assert inside.wait(10)
    compile_front_end(_grammar(tmp_path))          # ends while the first build still runs
    assert gc.get_threshold()[0] == YOUNG_THRESHOLD
    release.set()
    first.join(10)
    assert gc.get_threshold() == (700, 10, 10)
