"""The maskbench workload: every engine's JSON Schema mode on the MaskBench sample, in one run.

Input: the schemas (bench.workloads.maskbench_cases; an evenly spaced subset with --max-schemas or
--quick), tokenizers and engines from the command line. Per (tokenizer, engine), one worker in schema
mode (bench.schema_runner) compiles each schema and replays its valid instances, tokenized once here so
that every engine replays the same ids. Output: the result dict of bench/report (runs -> tokenizer ->
engine -> entry), each entry condensed from the per-schema lines by `engine_entry`: schemas compiled,
refused, failed; instances replayed all the way or rejected; compile times (cold: tokenizer load plus
the first schema compiled in the worker; warm: every later schema, tokenizer and compiler loaded; ours
also a repeat from the build cache); artifact sizes; mask and commit latencies over every replayed step.
"""

from __future__ import annotations

import sys
from collections import Counter

from bench.errors import BenchError
from bench.schema_runner import run_schema_worker
from bench.stats import slowest_steps, summarize
from bench.tokenizers import REPO, encode, tokenizer_spec
from bench.workloads import SchemaCase, maskbench_cases, subset

NAME = "maskbench"
STRICT = "maskbench-strict"     # the same schemas, each engine's strict mode (objects take no undeclared key)
NAMES = (NAME, STRICT)
QUICK_SCHEMAS = 40
# Per workload, what each engine's schema mode is given (the workers' SchemaCompiler classes do this;
# the job's `strict` says which); an engine not listed has no such mode here.
# (bench/README.md: the calls and options behind these words)
SCHEMA_FORMS = {
    NAME: {
        "glrmask": "flexible ws",
        "llguidance": "flexible ws",
        "xgrammar": "any ws, strict off",
        "glrmask-rs": "`, ` `: ` only",
    },
    STRICT: {
        "glrmask": "flexible ws, strict",
        "xgrammar": "any ws, strict on",
    },
}
FAILED = ("error", "timeout", "not reached")


def selected_cases(args) -> list[SchemaCase]:
    """The schemas of this run: all, or --max-schemas (--quick: 40) evenly spaced in name order."""
    limit = QUICK_SCHEMAS if args.quick and args.max_schemas is None else args.max_schemas
    return subset(maskbench_cases(), limit, "--max-schemas")


def schema_job(name: str, cases: list[SchemaCase], tokenizer: str, args) -> dict:
    """The worker's job for workload `name`: the tokenizer, the strict mode or not, replay options and
    every schema with its instances' token ids."""
    return {"workload": name, "strict": name == STRICT, "tokenizer": tokenizer_spec(tokenizer).to_job(),
            "warmup_docs": args.warmup,
            "replays": args.replays, "budget_s": args.budget, "warm_max_s": args.warm_max,
            "build_cache_dir": str(REPO / ".cache" / "bench" / "build-cache"),
            "schemas": [{"name": c.name, "schema": c.schema,
                         "documents": [{"id": d.doc_id, "tokens": encode(tokenizer, d.text)} for d in c.instances]}
                        for c in cases]}


def _samples(schemas: list[dict], key: str) -> list[int]:
    return [x for s in schemas for x in s.get(key, [])]


def _schema_summary(line: dict) -> dict:
    """A schema's line without its raw samples: outcome, compile, artifact, its instances' verdicts and
    its mask p50 / max (min over replays)."""
    keep = ("name", "status", "error", "compile_s", "cached_s", "artifact_bytes", "load_ms", "compile_peak_rss_kb",
            "instances", "vocab_problems")
    out = {k: line[k] for k in keep if k in line}
    docs = line.get("documents", [])
    mask = summarize(line.get("mask_min_ns", []))
    out.update(instances_ok=sum(d["status"] == "ok" for d in docs),
               mask_min_p50_us=mask and mask["p50"], mask_min_max_us=mask and mask["max"])
    return out


def engine_entry(raw: dict) -> dict:
    """Condense a schema worker's result (bench.schema_runner) into the report's entry."""
    if "error" in raw:
        return {"error": raw["error"]}
    schemas = raw["schemas"]
    status = Counter(s["status"] for s in schemas)
    compiled = [s for s in schemas if s["status"] == "compiled"]
    docs = [d for s in compiled for d in s["documents"] if d["status"] != "skipped"]    # replayed
    ok = [d for d in docs if d["status"] == "ok"]
    first = next((s for s in compiled if s.get("first_in_process")), None)
    warm = [s for s in compiled if not s.get("first_in_process")]
    setup = {**raw["setup"], "compile_cold_s": first and raw["setup"]["tokenizer_s"] + first["compile_s"],
             "cold_schema": first and first["name"]}
    artifacts = [s["artifact_bytes"] for s in compiled if s.get("artifact_bytes") is not None]
    instances = sum(s["instances"] for s in schemas)
    return {"version": raw["setup"]["version"], "setup": setup, "wall_s": raw["wall_s"],
            "restarts": raw["restarts"],
            "schemas_total": len(schemas), "compiled": len(compiled), "refused": status["refused"],
            "failed": sum(status[s] for s in FAILED), "status_counts": dict(status),
            "instances_total": instances, "instances_replayed": len(docs), "instances_ok": len(ok),
            "instances_rejected": sum(d["status"] == "rejected" for d in docs),
            "docs_ok_text": f"{len(ok)}/{instances}",
            "compile_warm": summarize([s["compile_s"] for s in warm], 1e-3),
            "compile_cached": summarize([s["cached_s"] for s in compiled if s.get("cached_s") is not None], 1e-3),
            "artifact": summarize(artifacts, 1024),
            "compile_peak_rss_kb": max((s["compile_peak_rss_kb"] or 0 for s in compiled), default=None),
            "mask": summarize(_samples(compiled, "mask_ns")), "commit": summarize(_samples(compiled, "commit_ns")),
            "mask_bool": summarize(_samples(compiled, "extra_ns")),
            "mask_min": summarize(_samples(compiled, "mask_min_ns")),
            "commit_min": summarize(_samples(compiled, "commit_min_ns")),
            "mask_bool_min": summarize(_samples(compiled, "extra_min_ns")),
            "timer_floor": summarize(_samples(compiled, "floor_ns")),
            "timer_floor_min": summarize(_samples(compiled, "floor_min_ns")),
            "replays": max((s.get("replays", 1) for s in compiled), default=1),
            "short_of_replays": sum(s.get("short_of_replays", 0) for s in compiled),
            "rejected": [d for d in docs if d["status"] != "ok"], "unstable": [d for d in ok if d.get("unstable")],
            "slowest": slowest_steps(ok),
            "slowest_compiles": sorted(([s["compile_s"], s["name"]] for s in compiled), reverse=True)[:3],
            "schemas": [_schema_summary(s) for s in schemas]}


def run(name: str, tokenizers: list[str], engines: list[str], args, info: dict) -> dict:
    """A maskbench workload (`NAMES`) x tokenizers x engines (missing data: the workload is skipped)."""
    base = {"workload": name, "machine": info, "options": dict(vars(args)), "runs": {}}
    forms = SCHEMA_FORMS[name]
    try:
        cases = selected_cases(args)
    except BenchError as e:
        print(f"bench: {NAME}: skipped: {e}", file=sys.stderr, flush=True)
        return {**base, "skipped": str(e)}
    runs: dict[str, dict] = {}
    for tokenizer in tokenizers:
        job = schema_job(name, cases, tokenizer, args)
        runs[tokenizer] = {}
        for engine in engines:
            if engine not in forms:
                mode = "strict JSON Schema mode" if name == STRICT else "JSON Schema mode"
                runs[tokenizer][engine] = {"error": f"no {mode} in this bench"}
                continue
            print(f"bench: {name} x {tokenizer} x {engine} ({len(cases)} schemas) ...", file=sys.stderr, flush=True)
            entry = engine_entry(run_schema_worker(engine, job, args.timeout, args.build_budget))
            runs[tokenizer][engine] = {**entry, "grammar_form": forms[engine]}
    return {**base, "schemas": [c.name for c in cases], "instances": sum(len(c.instances) for c in cases),
            "timing_policy": "perf_counter_ns per call; the first compiled schema's instances replayed untimed "
                             "first; gc disabled in timed loops; single thread; nearest-rank percentiles; "
                             f"{args.replays} replays: single pass = the first, min = each step's minimum",
            "runs": runs}
