"""Worker side of the benchmark: read a job, replay token sequences through one engine, write results.

Runs inside each engine's own venv (stdlib + numpy only; no `bench` import). Input: argv[1] = job
JSON path, argv[2] = result JSON path. Timing policy, the same for every engine: per step, the packed
bitmask fill and the commit are timed with perf_counter_ns; warm-up documents are replayed untimed
first; the garbage collector is disabled during timed loops. A document whose token is missing from
the mask, whose commit fails, or whose end mask lacks every EOS id is reported and not timed.
Memory mode: build/load once, print `ready`, wait for a line on stdin, print smaps_rollup, exit.
"""

from __future__ import annotations

import base64
import gc
import json
import os
import sys
import time
from typing import Callable, Protocol

import numpy as np


class Engine(Protocol):
    """What an engine adapter gives the replay loop (one instance per compiled grammar)."""

    version: str

    def new_state(self) -> object: ...
    def fill(self, state: object, bitmask: np.ndarray) -> None: ...          # bitmask: int32 (1, W)
    def commit(self, state: object, token_id: int) -> bool: ...


def load_job() -> dict:
    with open(sys.argv[1], encoding="utf-8") as f:
        return json.load(f)


def write_result(result: dict) -> None:
    tmp = sys.argv[2] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f)
    os.replace(tmp, sys.argv[2])


def read_ranks(path: str) -> dict[bytes, int]:
    """A .tiktoken file: `base64(token) rank` per line."""
    ranks = {}
    with open(path, "rb") as f:
        for line in f:
            if line.strip():
                token, rank = line.split()
                ranks[base64.b64decode(token)] = int(rank)
    return ranks


def id_to_bytes(tokenizer: dict) -> list[bytes | None]:
    """Token bytes by id; None for special ids and for holes in the id range."""
    table: list[bytes | None] = [None] * tokenizer["vocab_size"]
    for token, rank in read_ranks(tokenizer["file"]).items():
        table[rank] = token
    return table


def memory_kb() -> dict[str, int]:
    """RSS and PSS of this process in KiB (/proc/self/smaps_rollup)."""
    out = {}
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("Rss", "Pss", "Shared_Clean", "Private_Clean", "Private_Dirty"):
                out[key.lower()] = int(rest.split()[0])
    return out


def timed(fn: Callable[[], object]) -> tuple[object, float]:
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def _bit(row: np.ndarray, token_id: int) -> bool:
    return bool((int(row[token_id >> 5]) >> (token_id & 31)) & 1)


def replay_document(engine: Engine, tokens: list[int], eos_ids: list[int], bitmask: np.ndarray,
                    out: dict[str, list[int]], extra: Callable | None = None) -> dict:
    """Replay one document; if it is accepted, append its per-step latencies to `out`; return its status.

    `extra(state) -> ns`, if given, times one more call per step (ours: the bool mask())."""
    clock = time.perf_counter_ns
    state = engine.new_state()
    row = bitmask[0]
    fills: list[int] = []
    commits: list[int] = []
    extras: list[int] = []
    for step, token in enumerate(tokens):
        t0 = clock()
        engine.fill(state, bitmask)
        t1 = clock()
        fills.append(t1 - t0)
        if extra is not None:
            extras.append(extra(state))
        if not _bit(row, token):
            return {"status": "rejected", "step": step, "reason": f"token {token} not in mask"}
        t2 = clock()
        ok = engine.commit(state, token)
        t3 = clock()
        if not ok:
            return {"status": "rejected", "step": step, "reason": f"commit({token}) failed"}
        commits.append(t3 - t2)
    t0 = clock()
    engine.fill(state, bitmask)
    fills.append(clock() - t0)
    if not any(_bit(row, e) for e in eos_ids):
        return {"status": "rejected", "step": len(tokens), "reason": "no EOS id in the final mask"}
    out["mask_ns"].extend(fills)
    out["commit_ns"].extend(commits)
    out["extra_ns"].extend(extras)
    slow_mask, slow_commit = max(range(len(fills)), key=fills.__getitem__), None
    if commits:
        slow_commit = max(range(len(commits)), key=commits.__getitem__)
    return {"status": "ok", "steps": len(tokens),
            "slowest_mask": [slow_mask, fills[slow_mask]],
            "slowest_commit": None if slow_commit is None else [slow_commit, commits[slow_commit], tokens[slow_commit]]}


def progress(message: str) -> None:
    """One line on stderr: the harness shows the last one if the worker fails or times out."""
    print(f"[{job_name()}] {message}", file=sys.stderr, flush=True)


def job_name() -> str:
    return os.path.basename(sys.argv[0]).removesuffix("_worker.py")


def replay_all(engine: Engine, job: dict, extra: Callable | None = None) -> dict:
    """Warm up, then replay every document `repeat` times with the collector off."""
    eos = job["tokenizer"]["eos_ids"]
    width = (job["tokenizer"]["vocab_size"] + 31) // 32
    bitmask = np.zeros((1, width), dtype=np.int32)
    docs = job["documents"]
    for doc in docs[:job.get("warmup_docs", 3)]:
        replay_document(engine, doc["tokens"], eos, bitmask, {"mask_ns": [], "commit_ns": [], "extra_ns": []},
                        extra)
    out: dict[str, list[int]] = {"mask_ns": [], "commit_ns": [], "extra_ns": []}
    statuses = []
    deadline = time.monotonic() + job.get("budget_s", float("inf"))
    gc.collect()
    gc.disable()
    try:
        for repeat in range(job.get("repeat", 1)):
            for i, doc in enumerate(docs):
                if i % 50 == 0:
                    progress(f"pass {repeat + 1}: document {i}/{len(docs)}")
                if time.monotonic() > deadline:      # a very slow engine: report, do not wait forever
                    status = {"status": "skipped", "step": 0, "reason": "time budget (--budget) used up"}
                else:
                    status = replay_document(engine, doc["tokens"], eos, bitmask, out, extra)
                if repeat == 0:
                    statuses.append({"id": doc["id"], **status})
        out["floor_ns"] = timer_floor(len(out["mask_ns"]))
    finally:
        gc.enable()
    return {"documents": statuses, **out}


def timer_floor(samples: int) -> list[int]:
    """The same timing around an empty call: the clock's cost plus this machine's jitter."""
    clock = time.perf_counter_ns
    noop = _noop
    floor = []
    for _ in range(samples):
        t0 = clock()
        noop()
        floor.append(clock() - t0)
    return floor


def _noop() -> None:
    return None


def memory_mode(job: dict, build: Callable[[dict], object], touch: Callable[[object, np.ndarray], None]) -> None:
    """Load once, compute one mask, report readiness, wait for the harness, report memory, exit."""
    before = memory_kb()
    obj = build(job)
    touch(obj, np.zeros((1, (job["tokenizer"]["vocab_size"] + 31) // 32), dtype=np.int32))
    print("ready", flush=True)
    sys.stdin.readline()
    print(json.dumps({"baseline": before, "loaded": memory_kb()}), flush=True)


def run(make_engine: Callable[[dict], tuple[Engine, dict]], load_for_memory: Callable[[dict], object],
        touch: Callable[[object, np.ndarray], None]) -> None:
    """Worker entry point: `replay` builds the engine and replays; `memory` only loads."""
    job = load_job()
    if job["mode"] == "memory":
        memory_mode(job, load_for_memory, touch)
        return
    baseline = memory_kb()
    progress("compiling")
    engine, setup = make_engine(job)
    progress(f"compiled in {setup.get('compile_cold_s') or 0:.1f} s; warming up")
    loaded = memory_kb()
    result = {"engine": job["engine"], "version": engine.version, "setup": setup,
              "memory": {"baseline": baseline, "loaded": loaded}}
    result.update(replay_all(engine, job, getattr(engine, "extra_timer", None)))
    write_result(result)
