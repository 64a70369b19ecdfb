"""Run one engine's worker on one (workload, tokenizer) job, and the 8-process memory measurement.

Input: the engine name, the workload's peer grammar text and its documents as token id lists.
Output: the worker's result dict (per-step latencies, setup times, memory) or an `error` entry
(`timeout` says which limit stopped it: `build` or `run`). Policy: every engine runs as a subprocess
of its own venv's Python (ours: the project .venv), one at a time, single-threaded (thread-count env
vars set to 1), under a build budget and a run timeout. A missing peer venv is reported, not fatal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from bench.tokenizers import REPO

WORKERS = Path(__file__).resolve().parent / "workers"
VENVS = REPO / ".cache" / "bench"
SINGLE_THREAD = {"OMP_NUM_THREADS": "1", "RAYON_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                 "OPENBLAS_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}


@dataclass(frozen=True)
class EngineSpec:
    name: str
    venv: str | None          # folder under .cache/bench; None = the project's own Python
    worker: str

    def python(self) -> Path:
        if self.venv is None:
            return Path(sys.executable)
        return VENVS / self.venv / "bin" / "python"


ENGINES: dict[str, EngineSpec] = {
    "glrmask": EngineSpec("glrmask", None, "glrmask_worker.py"),
    "llguidance": EngineSpec("llguidance", "llguidance", "llguidance_worker.py"),
    "xgrammar": EngineSpec("xgrammar", "xgrammar", "xgrammar_worker.py"),
    "outlines": EngineSpec("outlines", "outlines", "outlines_worker.py"),
    "glrmask-rs": EngineSpec("glrmask-rs", "glrmask-rs", "glrmask_rs_worker.py"),
}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env.update(SINGLE_THREAD)
    env["PYTHONPATH"] = str(WORKERS)
    return env


def _write_job(job: dict) -> str:
    fd, path = tempfile.mkstemp(prefix=f"bench-{job['engine']}-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(job, f)
    return path


def run_worker(engine: str, job: dict, timeout_s: float, build_budget_s: float = float("inf")) -> dict:
    """Replay mode: one subprocess; returns its result, or {'error': ...} if it failed.

    A worker that has not reported `compiled` within `build_budget_s` is killed and reported as
    {'timeout': 'build', ...}; one that runs past `timeout_s` in all as {'timeout': 'run', ...}.
    `process_peak_rss_kb` is the subprocess's own peak RSS (wait4's ru_maxrss), compile and replay."""
    spec = ENGINES[engine]
    if not spec.python().exists():
        return {"error": f"venv {VENVS / str(spec.venv)} missing; run bench/setup_peers.sh"}
    job_path = _write_job({**job, "engine": engine, "mode": "replay"})
    out_path = job_path[:-5] + ".out.json"
    began = time.perf_counter()
    try:
        status, rusage, lines, why = _supervise([str(spec.python()), str(WORKERS / spec.worker), job_path, out_path],
                                                timeout_s, build_budget_s)
    finally:
        os.unlink(job_path)
    progress = [line for line in lines if line.startswith("[")]
    if why is not None:
        if os.path.exists(out_path):
            os.unlink(out_path)
        limit = build_budget_s if why == "build" else timeout_s
        what = "not compiled" if why == "build" else "not finished"
        return {"error": f"timeout: {what} after {limit:.0f} s (--{'build-budget' if why == 'build' else 'timeout'}); "
                         f"last progress: {progress[-1] if progress else 'none'}",
                "timeout": why, "limit_s": limit, "process_peak_rss_kb": rusage.ru_maxrss}
    code = os.waitstatus_to_exitcode(status)
    if code != 0 or not os.path.exists(out_path):
        tail = [line for line in lines if not line.startswith("[")][-3:]
        return {"error": f"worker exit {code}: {' | '.join(tail)}", "process_peak_rss_kb": rusage.ru_maxrss}
    with open(out_path, encoding="utf-8") as f:
        result = json.load(f)
    os.unlink(out_path)
    result["wall_s"] = time.perf_counter() - began
    result["process_peak_rss_kb"] = rusage.ru_maxrss
    return result


def _supervise(cmd: list[str], timeout_s: float, build_budget_s: float):
    """Run `cmd` (stdout and stderr into one pipe, read by a thread); kill it at the first limit passed.
    A build runs from the start to the first `] compiled in ` progress line, and later ones (a schema
    worker builds once per schema) from a `] compiling` line to the next `] compiled in `; each build
    gets `build_budget_s`.
    Returns (wait status, its rusage, its output lines, None | 'build' | 'run')."""
    proc = subprocess.Popen(cmd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    began = time.monotonic()
    build = {"since": began, "open": True}       # written by the reader thread, read by the loop below

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if "] compiled in " in line:
                build["open"] = False
            elif "] compiling" in line and not build["open"]:
                build.update(since=time.monotonic(), open=True)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    why = None
    while True:
        pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            break
        now = time.monotonic()
        if build["open"] and now - build["since"] > build_budget_s:
            why = "build"
        elif now - began > timeout_s:
            why = "run"
        if why is not None:
            proc.kill()
            _, status, rusage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.1)
    proc.returncode = os.waitstatus_to_exitcode(status)   # reaped here: Popen must not wait for it again
    reader.join(timeout=5)
    return status, rusage, lines, why


def run_memory(engine: str, job: dict, processes: int, timeout_s: float) -> dict:
    """Start `processes` workers that each load the same grammar/artifact; sum their RSS and PSS
    while all are alive (PSS splits shared pages among sharers, so mmapped tables count once)."""
    spec = ENGINES[engine]
    job_path = _write_job({**job, "engine": engine, "mode": "memory"})
    cmd = [str(spec.python()), str(WORKERS / spec.worker), job_path, os.devnull]
    procs = [subprocess.Popen(cmd, env=_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(processes)]
    try:
        deadline = time.monotonic() + timeout_s
        for p in procs:
            line = p.stdout.readline().strip()
            if line != "ready" or time.monotonic() > deadline:
                return {"error": f"a worker did not load: {line or p.stderr.read()[-300:]}"}
        for p in procs:           # all measure while all are alive (each then waits to be let go)
            p.stdin.write("go\n")
            p.stdin.flush()
        reports = [json.loads(p.stdout.readline()) for p in procs]
    finally:
        for p in procs:
            try:
                p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        os.unlink(job_path)
    loaded = [r["loaded"] for r in reports]
    return {"processes": processes, "rss_kb_sum": sum(m["rss"] for m in loaded),
            "pss_kb_sum": sum(m["pss"] for m in loaded),
            "pss_kb_per_process": [m["pss"] for m in loaded],
            "baseline_pss_kb_sum": sum(r["baseline"]["pss"] for r in reports),
            "added_pss_kb_sum": sum(r["loaded"]["pss"] - r["baseline"]["pss"] for r in reports)}
