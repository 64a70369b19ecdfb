"""Run one engine's worker in schema mode (the maskbench workload) over a list of schemas.

Input: the engine name and a job whose `schemas` each carry their instances' token ids. Output:
{setup, schemas: one line per schema in job order, wall_s, restarts} or an `error` entry. Policy: the
worker (runner's subprocess, limits and environment) writes one JSON line per schema; a schema still
compiling after the build budget has the worker killed, is recorded as `timeout`, and a new worker
goes on from the next schema (so does a worker that crashed on one, as `error`). `timeout_s` bounds
the whole run: schemas not reached by then are `not reached`. The replay budget is shared by all the
workers of the run.
"""

from __future__ import annotations

import json
import os
import time

from bench import runner


def _lines(path: str) -> list[dict]:
    """The complete JSON lines of a worker's output (a killed worker may leave half a line)."""
    if not os.path.exists(path):
        return []
    out = []
    with open(path, encoding="utf-8") as f:
        for text in f:
            try:
                out.append(json.loads(text))
            except json.JSONDecodeError:
                break
    os.unlink(path)
    return out


def _ended(status: int, why: str | None) -> str:
    return f"killed at the {why} limit" if why else f"worker exit {os.waitstatus_to_exitcode(status)}"


def _stopped(case: dict, status: str, error: str) -> dict:
    return {"name": case["name"], "status": status, "instances": len(case["documents"]), "error": error}


def run_schema_worker(engine: str, job: dict, timeout_s: float, build_budget_s: float) -> dict:
    """Compile and replay every schema of `job` with `engine`, restarting its worker past a schema that
    timed out or crashed it."""
    spec = runner.ENGINES[engine]
    if not spec.python().exists():
        return {"error": f"venv {runner.VENVS / str(spec.venv)} missing; run bench/setup_peers.sh"}
    cmd = [str(spec.python()), str(runner.WORKERS / spec.worker)]
    began = time.monotonic()
    pending, done, setup = list(job["schemas"]), [], None
    budget, restarts = job["budget_s"], -1
    while pending:
        left = timeout_s - (time.monotonic() - began)
        if left <= 0:
            done += [_stopped(case, "not reached", f"--timeout {timeout_s:.0f} s used up") for case in pending]
            break
        restarts += 1
        job_path = runner._write_job({**job, "schemas": pending, "budget_s": budget, "engine": engine,
                                      "mode": "schemas"})
        out_path = job_path[:-5] + ".out.jsonl"
        try:
            status, _, output, why = runner._supervise([*cmd, job_path, out_path], left, build_budget_s)
        finally:
            os.unlink(job_path)
        got = _lines(out_path)
        if not got or "setup" not in got[0]:
            tail = [line for line in output if not line.startswith("[")][-3:] or output[-1:]
            return {"error": f"{_ended(status, why)} before its first schema: {' | '.join(tail)}"}
        setup = setup or got[0]["setup"]
        done += got[1:]
        budget -= sum(line.get("replay_s", 0.0) for line in got[1:])
        pending = pending[len(got) - 1:]
        if not pending:
            break
        if why == "build":
            done.append(_stopped(pending.pop(0), "timeout", f"not compiled after {build_budget_s:.0f} s "
                                                            "(--build-budget)"))
        elif why == "run":
            done += [_stopped(case, "not reached", f"--timeout {timeout_s:.0f} s used up") for case in pending]
            break
        else:
            tail = [line for line in output if not line.startswith("[")][-2:]
            done.append(_stopped(pending.pop(0), "error", f"{_ended(status, why)}: {' | '.join(tail)}"))
    return {"setup": setup, "schemas": done, "restarts": max(0, restarts),
            "wall_s": time.monotonic() - began}
