"""Serving benchmark (not a test): compile times through the Python API and batch bitmask fill.

Compile: json.lark x gpt2 with `glrmask_cli.compile_grammar` cold (first call in this process:
the tokenizer is loaded), warm (the tokenizer is cached, the build cache is not used) and cached
(a build cache hit). Batch fill: `glrmask_runtime.fill_bitmasks` for batches of 1, 16 and 256
matchers, each at a different step of a JSON document (the bench's json workload), over a padded
bitmask (50,304 logits); per call and per row, in microseconds (mean/p50/p99/p99.9/max), each
call's time the minimum over `replays` passes. Run: `python -m bench.serving_bench`.
"""

from __future__ import annotations

import os
import tempfile
import time

import numpy as np

import glrmask_cli
import glrmask_runtime
from bench.stats import summarize
from devtools.builds import JSON_GRAMMAR
from devtools.documents import maskbench_instances
from glrmask_cli.api import tokenizer_vocabulary

BATCHES = (1, 16, 256)
PADDED = 50_304


def _compile_times() -> dict:
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        previous = os.environ.get("GLRMASK_CACHE_DIR")
        os.environ["GLRMASK_CACHE_DIR"] = cache
        try:
            for name, kwargs in (("cold_s", {}), ("warm_s", {"use_cache": False}), ("cached_s", {})):
                began = time.perf_counter()
                glrmask_cli.compile_grammar(JSON_GRAMMAR, tokenizer="gpt2", **kwargs)
                out[name] = round(time.perf_counter() - began, 4)
        finally:
            if previous is None:
                del os.environ["GLRMASK_CACHE_DIR"]
            else:
                os.environ["GLRMASK_CACHE_DIR"] = previous
    return out


def _matchers(artifact: glrmask_runtime.Artifact, n: int) -> list[glrmask_runtime.Matcher]:
    vocab = tokenizer_vocabulary("gpt2")
    documents = [text for _, text in maskbench_instances()]
    out = []
    for i in range(n):
        ids = vocab.encode(documents[i % len(documents)])
        matcher = artifact.matcher()
        for token in ids[:(7 * i) % max(1, len(ids))]:
            matcher.commit(token)
        out.append(matcher)
    return out


def run(calls: int = 200, replays: int = 3) -> dict:
    results: dict = {"compile_json_gpt2": _compile_times()}
    artifact = glrmask_cli.compile_grammar(JSON_GRAMMAR, tokenizer="gpt2").load()
    for batch in BATCHES:
        matchers = _matchers(artifact, batch)
        bitmask = glrmask_runtime.allocate_bitmask(batch, PADDED)
        best = np.full(calls, np.iinfo(np.int64).max)
        for _ in range(replays):
            for call in range(calls):
                began = time.perf_counter_ns()
                glrmask_runtime.fill_bitmasks(matchers, bitmask)
                best[call] = min(best[call], time.perf_counter_ns() - began)
        results[f"fill_bitmasks_batch{batch}"] = {"per_call_us": summarize(best.tolist()),
                                                  "per_row_us": summarize((best // batch).tolist())}
    for key, value in results.items():
        print(f"{key:<24} {value}")
    return results


if __name__ == "__main__":
    run()
