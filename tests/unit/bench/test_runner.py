"""bench.runner: a worker over the build budget or the run timeout is killed and reported as a timeout, with
its peak RSS; a finished one returns its result (fake workers, no engine)."""

from __future__ import annotations

import os
import time

import pytest

from bench import runner

SLOW_BUILD = "import time\ntime.sleep(30)\n"
SLOW_REPLAY = ("import sys, time\nprint('[fake] compiling', file=sys.stderr, flush=True)\n"
               "print('[fake] compiled in 0.1 s; warming up', file=sys.stderr, flush=True)\ntime.sleep(30)\n")
FINISHES = ("import json, sys\nbuf = bytearray(32 << 20)\n"
            "json.dump({'engine': 'fake', 'ok': len(buf)}, open(sys.argv[2], 'w'))\n")
FAILS = "import sys\nprint('boom: no grammar', file=sys.stderr)\nsys.exit(3)\n"


@pytest.fixture
def fake_engine(tmp_path, monkeypatch):
    def install(source: str) -> str:
        (tmp_path / "fake_worker.py").write_text(source)
        monkeypatch.setattr(runner, "WORKERS", tmp_path)
        monkeypatch.setitem(runner.ENGINES, "fake", runner.EngineSpec("fake", None, "fake_worker.py"))
        return "fake"
    return install


def test_build_over_budget_is_a_timeout(fake_engine) -> None:
    began = time.monotonic()
    out = runner.run_worker(fake_engine(SLOW_BUILD), {"documents": []}, timeout_s=60, build_budget_s=1)
    assert time.monotonic() - began < 20
    assert out["timeout"] == "build" and out["limit_s"] == 1 and "not compiled after 1 s" in out["error"]
    assert out["process_peak_rss_kb"] > 0


def test_run_past_timeout_after_compiling_is_a_run_timeout(fake_engine) -> None:
    out = runner.run_worker(fake_engine(SLOW_REPLAY), {"documents": []}, timeout_s=2, build_budget_s=1)
    assert out["timeout"] == "run" and "[fake] compiled in" in out["error"]


def test_finished_worker_returns_its_result_and_peak_rss(fake_engine) -> None:
    out = runner.run_worker(fake_engine(FINISHES), {"documents": []}, timeout_s=60, build_budget_s=30)
    assert out["ok"] == 32 << 20 and out["wall_s"] > 0
    assert out["process_peak_rss_kb"] >= 32 << 10


def test_failed_worker_reports_its_exit_and_last_lines(fake_engine) -> None:
    out = runner.run_worker(fake_engine(FAILS), {"documents": []}, timeout_s=60)
    assert out["error"] == "worker exit 3: boom: no grammar" and "timeout" not in out


def test_job_file_is_removed(fake_engine, monkeypatch) -> None:
    made = []
    original = runner._write_job

    def spy(job: dict) -> str:
        made.append(original(job))
        return made[-1]

    monkeypatch.setattr(runner, "_write_job", spy)
    runner.run_worker(fake_engine(FINISHES), {"documents": []}, timeout_s=60)
    assert made and not any(os.path.exists(p) for p in made)
