"""Worker side of the benchmark: read a job, replay token sequences through one engine, write results.

Runs inside each engine's own venv (stdlib + numpy only; no `bench` import). Input: argv[1] = job
JSON path, argv[2] = result JSON path. Timing policy, the same for every engine: per step, the packed
bitmask fill and the commit are timed with perf_counter_ns; warm-up documents are replayed untimed
first; the garbage collector is disabled during timed loops. A document whose token is missing from
the mask, whose commit fails, or whose end mask lacks every EOS id is reported and not timed.
Replays: the timed documents are replayed `replays` times (whole passes, default 3); the first pass
gives the single-pass latencies, and each step's minimum over the passes gives the `*_min_ns` ones
(noise on a shared machine only ever adds time, so the minimum keeps what the work itself costs).
An engine that learns from the documents it replays (GLRMask's mask memo) defines `before_pass()`,
called before each timed pass, to forget it: every pass then does the same work, and no pass is
timed on what an earlier pass of the same documents taught it.
Compile memory: the peak RSS (VmHWM) of this process over the cold compile, reset first where the
kernel allows (/proc/self/clear_refs). Memory mode: build/load once, print `ready`, wait for a line
on stdin, print smaps_rollup, exit.
"""

from __future__ import annotations

import base64
import gc
import json
import os
import resource
import sys
import time
from typing import Any, Callable, Protocol

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


def peak_rss_kb() -> int | None:
    """This process's peak RSS so far (VmHWM, KiB), or None where /proc has no such line."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def reset_peak_rss() -> bool:
    """Start a new VmHWM window at the current RSS (`5` > /proc/self/clear_refs); False if refused."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def compile_timed(fn: Callable[[], object]) -> tuple[object, float, dict]:
    """(value, seconds, memory) of one compile: memory has the RSS before, the peak RSS during (KiB),
    whether the peak window could be reset first (else the peak counts from process start), and the
    largest peak RSS of the processes the compile started and ended (GLRMask's group workers; 0: none)."""
    before = memory_kb().get("rss")
    reset = reset_peak_rss()
    value, seconds = timed(fn)
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss     # KiB on Linux
    return value, seconds, {"rss_before_kb": before, "peak_rss_kb": peak_rss_kb(), "peak_reset": reset,
                            "children_peak_rss_kb": children}


def warm_wanted(job: dict, cold_s: float) -> bool:
    """Whether to time a second (warm) compile: not after a cold one longer than job['warm_max_s']."""
    return cold_s <= job.get("warm_max_s", float("inf"))


def _bit(row: np.ndarray, token_id: int) -> bool:
    return bool((int(row[token_id >> 5]) >> (token_id & 31)) & 1)


Timings = tuple[list[int], list[int], list[int]]          # (fills, commits, extras) of one replay


def replay_document(engine: Engine, tokens: list[int], eos_ids: list[int], bitmask: np.ndarray,
                    extra: Callable | None = None) -> tuple[dict, Timings | None]:
    """Replay one document: (its status, its per-step latencies if it was accepted all the way).

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
            return {"status": "rejected", "step": step,
                    "reason": _why(engine, state, f"token {token} not in mask")}, None
        t2 = clock()
        ok = engine.commit(state, token)
        t3 = clock()
        if not ok:
            return {"status": "rejected", "step": step, "reason": _why(engine, state, f"commit({token}) failed")}, None
        commits.append(t3 - t2)
    t0 = clock()
    engine.fill(state, bitmask)
    fills.append(clock() - t0)
    if not any(_bit(row, e) for e in eos_ids):
        return {"status": "rejected", "step": len(tokens),
                "reason": _why(engine, state, "no EOS id in the final mask")}, None
    return {"status": "ok", "steps": len(tokens)}, (fills, commits, extras)


def _why(engine: Engine, state: object, reason: str) -> str:
    """The reason, with the engine's own explanation when it has one (e.g. llguidance's error state)."""
    explain = getattr(engine, "explain", None)
    detail = explain(state) if explain is not None else None
    return f"{reason} ({detail})" if detail else reason


def elementwise_min(runs: list[list[int]]) -> list[int]:
    """Per position, the smallest value over equally long runs (one step's minimum over its replays)."""
    if not runs:
        return []
    if len({len(r) for r in runs}) != 1:
        raise ValueError(f"replays of one document differ in length: {sorted({len(r) for r in runs})}")
    return [min(values) for values in zip(*runs, strict=True)]


def _slowest(values: list[int], tokens: list[int] | None = None) -> list[int] | None:
    if not values:
        return None
    at = max(range(len(values)), key=values.__getitem__)
    return [at, values[at]] + ([tokens[at]] if tokens is not None else [])


def progress(message: str) -> None:
    """One line on stderr: the harness shows the last one if the worker fails or times out."""
    print(f"[{job_name()}] {message}", file=sys.stderr, flush=True)


def job_name() -> str:
    return os.path.basename(sys.argv[0]).removesuffix("_worker.py")


def replay_all(engine: Engine, job: dict, extra: Callable | None = None) -> dict:
    """Warm up, then replay the documents `replays` times (whole passes) with the collector off.

    Pass 1 decides each document's verdict and gives the single-pass samples; later passes replay the
    accepted documents again, and each step keeps its minimum over the passes it got. The budget
    covers all passes: documents pass 1 does not reach are skipped; a later pass that runs out stops,
    and the documents it did not reach keep the minimum of fewer replays (counted in the result)."""
    eos = job["tokenizer"]["eos_ids"]
    width = (job["tokenizer"]["vocab_size"] + 31) // 32
    bitmask = np.zeros((1, width), dtype=np.int32)
    docs = job["documents"]
    replays = max(1, int(job.get("replays", 3)))
    for doc in docs[:job.get("warmup_docs", 3)]:
        replay_document(engine, doc["tokens"], eos, bitmask, extra)
    statuses: list[dict] = []
    runs: dict[int, list[Timings]] = {}                  # document index -> one Timings per pass
    deadline = time.monotonic() + job.get("budget_s", float("inf"))
    before_pass = getattr(engine, "before_pass", lambda: None)
    gc.collect()
    gc.disable()
    try:
        before_pass()
        for i, doc in enumerate(docs):
            if i % 50 == 0:
                progress(f"pass 1/{replays}: document {i}/{len(docs)}")
            if time.monotonic() > deadline:      # a very slow engine: report, do not wait forever
                statuses.append({"id": doc["id"], "status": "skipped", "step": 0,
                                 "reason": "time budget (--budget) used up"})
                continue
            status, timings = replay_document(engine, doc["tokens"], eos, bitmask, extra)
            statuses.append({"id": doc["id"], **status})
            if timings is not None:
                runs[i] = [timings]
        for replay in range(2, replays + 1):
            progress(f"pass {replay}/{replays}: {len(runs)} documents")
            before_pass()
            for i in sorted(runs):
                if time.monotonic() > deadline:
                    break
                status, timings = replay_document(engine, docs[i]["tokens"], eos, bitmask, extra)
                if timings is None:                # the same tokens, another verdict: say so, keep pass 1
                    statuses[i]["unstable"] = f"replay {replay}: {status['reason']}"
                    continue
                runs[i].append(timings)
            else:
                continue
            break
        floors = [timer_floor(sum(len(r[0][0]) for r in runs.values())) for _ in range(replays)]
    finally:
        gc.enable()
    out: dict[str, list[int]] = {key: [] for key in ("mask_ns", "commit_ns", "extra_ns",
                                                     "mask_min_ns", "commit_min_ns", "extra_min_ns")}
    for i, passes in sorted(runs.items()):
        first = passes[0]
        least = tuple(elementwise_min([p[k] for p in passes]) for k in range(3))
        for k, name in enumerate(("mask", "commit", "extra")):
            out[f"{name}_ns"].extend(first[k])
            out[f"{name}_min_ns"].extend(least[k])
        tokens = docs[i]["tokens"]
        statuses[i].update({"replays": len(passes), "slowest_mask": _slowest(first[0]),
                            "slowest_commit": _slowest(first[1], tokens),
                            "slowest_mask_min": _slowest(least[0]),
                            "slowest_commit_min": _slowest(least[1], tokens)})
    return {"documents": statuses, "replays": replays,
            "short_of_replays": sum(len(p) < replays for p in runs.values()),
            "floor_ns": floors[0], "floor_min_ns": elementwise_min(floors), **out}


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
    """Load once, compute one mask, report readiness, wait for the harness, report memory, then
    stay (holding what it loaded) until the harness lets go: a process that exits while the others
    measure would make their share of the pages they map together larger."""
    before = memory_kb()
    obj = build(job)
    touch(obj, np.zeros((1, (job["tokenizer"]["vocab_size"] + 31) // 32), dtype=np.int32))
    print("ready", flush=True)
    sys.stdin.readline()
    print(json.dumps({"baseline": before, "loaded": memory_kb()}), flush=True)
    sys.stdin.readline()


def run(make_engine: Callable[[dict], tuple[Engine, dict]], load_for_memory: Callable[[dict], object],
        touch: Callable[[object, np.ndarray], None], schemas: Callable[[dict], Any] | None = None) -> None:
    """Worker entry point: `replay` builds the engine and replays; `memory` only loads; `schemas` (the
    maskbench workload) compiles and replays schema after schema with `schemas(job)`, the engine's
    schema compiler (schema_common.py)."""
    job = load_job()
    if job["mode"] == "memory":
        memory_mode(job, load_for_memory, touch)
        return
    if job["mode"] == "schemas":
        if schemas is None:
            raise SystemExit(f"{job_name()}: no schema mode")
        import schema_common

        schema_common.run(job, schemas)
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
