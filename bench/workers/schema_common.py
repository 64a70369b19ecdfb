"""Schema mode of a worker (the maskbench workload): compile each JSON Schema, replay its valid instances.

Runs inside each engine's own venv (stdlib + numpy only; no `bench` import). Input: the job (argv[1])
with `schemas`: [{name, schema, documents: [{id, tokens}]}]. Output: JSON lines appended to argv[2],
first {"setup": ...}, then one line per schema as it finishes, so a worker killed at the build budget
(the harness restarts it on the next schema) or at its timeout loses only the schema it was on.
Per schema: the compile is timed with the tokenizer already loaded (`compile_s`; the tokenizer load is
`setup.tokenizer_s`); the first schema compiled in the process is marked `first_in_process` (it also
pays the first use of the compiler's code and imports). A refusal (the engine's `refusals`) or any
other exception is recorded with the first line of its message. The instances of a compiled schema go
through worker_common.replay_all (the same loop, replays, minimum and budget as the grammar
workloads); only the first compiled schema gets the job's warm-up replays, so every later schema's
first pass is its first encounter. The replay budget covers all schemas' replays (not their compiles).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Callable, Protocol, TextIO

import worker_common as wc


class SchemaCompiler(Protocol):
    """One engine's schema mode, its tokenizer loaded by the constructor. An engine whose compiler
    keeps a cache of built schemas adds `cached_compile_s(schema) -> float`: a repeat served from it."""

    version: str
    refusals: tuple[type[BaseException], ...]      # what the engine raises for a schema it does not take

    def compile(self, schema: object) -> object: ...
    def engine(self, compiled: object) -> tuple[wc.Engine, dict]: ...    # the replay engine, {artifact_bytes, ...}


def first_line(error: BaseException) -> str:
    """`Type: first line of the message` (at most 300 characters)."""
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"[:300]


def compile_schema(compiler: SchemaCompiler, case: dict) -> tuple[object | None, dict]:
    """(the compiled schema or None, its result line so far). The progress lines around the compile
    let the harness apply its build budget to each schema."""
    wc.progress(f"compiling {case['name']}")
    began = time.perf_counter()
    compiled, status, line = None, "compiled", {}
    try:
        compiled, seconds, memory = wc.compile_timed(lambda: compiler.compile(case["schema"]))
        line = {"compile_s": seconds, "compile_peak_rss_kb": memory["peak_rss_kb"]}
    except compiler.refusals as error:
        status, line = "refused", {"error": first_line(error)}
    except Exception as error:        # a crash is not a refusal: reported apart
        status, line = "error", {"error": first_line(error)}
    wc.progress(f"compiled in {time.perf_counter() - began:.2f} s ({status})")
    return compiled, {"name": case["name"], "status": status, "instances": len(case["documents"]), **line}


def compile_and_replay(compiler: SchemaCompiler, case: dict, job: dict, warmup: int, budget_s: float) -> dict:
    """One schema's result line: compile outcome, artifact, cached repeat, replayed instances (within
    `budget_s` seconds of replay)."""
    compiled, line = compile_schema(compiler, case)
    if compiled is None:
        return line
    engine, info = compiler.engine(compiled)
    cached = getattr(compiler, "cached_compile_s", None)
    if cached is not None and wc.warm_wanted(job, line["compile_s"]):
        line["cached_s"] = cached(case["schema"])
    began = time.monotonic()
    replay = wc.replay_all(engine, {"tokenizer": job["tokenizer"], "documents": case["documents"],
                                    "warmup_docs": warmup, "replays": job["replays"],
                                    "budget_s": max(0.0, budget_s)}, getattr(engine, "extra_timer", None))
    return {**line, **info, **replay, "replay_s": time.monotonic() - began}


def _emit(out: TextIO, line: dict) -> None:
    out.write(json.dumps(line) + "\n")
    out.flush()


def run(job: dict, make: Callable[[dict], SchemaCompiler]) -> None:
    """Load the tokenizer (timed), then compile and replay every schema of the job in order."""
    wc.progress("loading the tokenizer")
    began = time.perf_counter()
    compiler = make(job)
    tokenizer_s = time.perf_counter() - began
    replay_left = job.get("budget_s", float("inf"))     # the budget counts replay time, not compiles
    first = True            # no schema compiled yet in this process
    with open(sys.argv[2], "a", encoding="utf-8") as out:
        _emit(out, {"setup": {"version": compiler.version, "tokenizer_s": tokenizer_s}})
        for case in job["schemas"]:
            line = compile_and_replay(compiler, case, job, job.get("warmup_docs", 3) if first else 0, replay_left)
            replay_left -= line.get("replay_s", 0.0)
            if first and line["status"] == "compiled":
                line["first_in_process"], first = True, False
            _emit(out, line)
