"""Long-run benchmark (not a test): GLRMask in one process that has served many requests.

The main tables replay 40 documents with every cache emptied before each pass, so they time the
work a step does, not what a process that has been serving for hours pays: caches that have
filled and evict on every insertion, and the cyclic collector traversing what the process keeps.
Here every document of a workload is replayed once, in order, in a fresh process, nothing forgotten
(x cl100k_base); per step, `fill_bitmask` and `commit` of the second half of the steps (the caches
warm), the full collections of the cyclic collector during the whole replay (count, longest), and
how full each bounded cache is at the end. Run: `python -m bench.long_run_bench [workload ...]`.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import time
from pathlib import Path

import glrmask_cli
import glrmask_runtime
from bench.stats import summarize
from bench.workloads import workload
from glrmask_cli.api import tokenizer_vocabulary
from glrmask_runtime.errors import TokenRejected

WORKLOADS = ("json", "sql", "keywords1000")
TOKENIZER = "cl100k_base"
_REPO = Path(__file__).resolve().parent.parent


class _FullCollections:
    """The durations of the cyclic collector's full collections while it is installed (ms)."""

    def __init__(self) -> None:
        self.ms: list[float] = []
        self._began = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            self._began = time.perf_counter()
        else:
            self.ms.append((time.perf_counter() - self._began) * 1e3)


def _cache_fill(artifact: glrmask_runtime.Artifact) -> dict[str, list[int]]:
    """(entries, limit) of each bounded cache of the artifact."""
    recognizer = artifact.recognizer
    parser = recognizer.parser
    scanner = getattr(recognizer, "scanner", None) or recognizer.basic.scanner
    caches = {"interned_cells": parser._interned, "glr_steps": parser._steps, "scanner_runs": scanner._runs,
              "row_combinations": artifact.combined_masks, "unpacked_rows": artifact._bool_rows,
              "mask_memo": artifact.mask_memo}
    return {name: [len(cache), cache.limit] for name, cache in caches.items()}


def replay(name: str) -> dict:
    """Every document of workload `name`, once, in this process; see the module docstring."""
    wl = workload(name)
    artifact = glrmask_cli.compile_grammar(wl.grammar_path, tokenizer=TOKENIZER, start=wl.start,
                                           lexer=wl.lexer).load()
    vocab = tokenizer_vocabulary(TOKENIZER)
    documents = [vocab.encode(doc.text.decode("utf-8")) for doc in wl.documents()]
    bitmask = glrmask_runtime.allocate_bitmask(1, artifact.vocab_size)
    clock = time.perf_counter_ns
    fills: list[int] = []
    commits: list[int] = []
    rejected = 0
    collections = _FullCollections()
    gc.callbacks.append(collections)
    try:
        for tokens in documents:
            matcher = artifact.matcher()
            for token in tokens:
                began = clock()
                matcher.fill_bitmask(bitmask, 0)
                filled = clock()
                try:
                    matcher.commit(token)
                except TokenRejected:
                    rejected += 1
                    break
                fills.append(filled - began)
                commits.append(clock() - filled)
    finally:
        gc.callbacks.remove(collections)
    half = len(fills) // 2
    return {"documents": len(documents), "rejected": rejected, "steps": len(fills),
            "fill_us_second_half": summarize(fills[half:]), "commit_us_second_half": summarize(commits[half:]),
            "full_collections": {"count": len(collections.ms),
                                 "max_ms": round(max(collections.ms), 1) if collections.ms else 0.0},
            "cache_entries_and_limits": _cache_fill(artifact)}


def run(names: tuple[str, ...] = WORKLOADS) -> dict:
    """`replay` of each workload in a fresh Python process (what the collector traverses is then
    GLRMask's, not this harness's), its result or its error."""
    results = {}
    for name in names:
        done = subprocess.run([sys.executable, "-m", "bench.long_run_bench", "--one", name], cwd=_REPO,
                              capture_output=True, text=True)
        lines = done.stdout.strip().splitlines()
        if done.returncode or not lines:
            results[name] = {"error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
            continue
        results[name] = result = json.loads(lines[-1])
        fill, commit = result["fill_us_second_half"], result["commit_us_second_half"]
        print(f"{name:<14} {result['steps']:>7} steps  fill p50 {fill['p50']:.1f} p99.9 {fill['p99.9']:.1f} "
              f"max {fill['max']:.0f} us  commit p50 {commit['p50']:.1f} p99.9 {commit['p99.9']:.1f} "
              f"max {commit['max']:.0f} us  full collections {result['full_collections']}")
    return results


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(replay(sys.argv[2])))
    else:
        run(tuple(sys.argv[1:]) or WORKLOADS)
