"""`python -m bench` (`make bench`): GLRMask side by side with its peers on the same token sequences.

Input: workloads x tokenizers x engines chosen by options. Per pair the documents are tokenized once
here; every engine replays them in its own subprocess (peers in their venvs under .cache/bench,
created by bench/setup_peers.sh, which this command runs first unless --no-setup). Output: one table
on stdout and bench/results/<date>-<workload>.json; the stage benchmarks (bench/*_bench.py with
run() -> dict) that exist run too, into bench/results/<date>-stages.json. The maskbench workload (JSON
Schemas, many per run) is bench/maskbench.py's and prints its own tables. No assertion on timings.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import time
from pathlib import Path

from bench import maskbench, report, runner, schema_report
from bench.errors import BenchError
from bench.stats import slowest_steps, summarize
from bench.tokenizers import REPO, TOKENIZER_NAMES, encode, tokenizer_spec
from bench.workloads import DEFAULT_WORKLOADS, WORKLOADS, Workload, known, subset, workload

STAGES = ("vocab", "lexer", "parser", "serving", "long_run")
QUICK_DOCS = 40


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    p.add_argument("--workloads", default=",".join((*DEFAULT_WORKLOADS, maskbench.NAME)),
                   help=f"comma list of {', '.join(WORKLOADS)}, {', '.join(maskbench.NAMES)}, keywords<N> "
                        "(any N >= 4), or none")
    p.add_argument("--tokenizers", default=",".join(TOKENIZER_NAMES), help="comma list: cl100k_base, llama3")
    p.add_argument("--engines", default=",".join(runner.ENGINES), help=f"comma list of {', '.join(runner.ENGINES)}")
    p.add_argument("--quick", action="store_true",
                   help=f"{QUICK_DOCS} documents per workload ({maskbench.NAME}: {maskbench.QUICK_SCHEMAS} schemas), "
                        "2 processes for the shared-memory run")
    p.add_argument("--max-docs", type=int, default=None, help="evenly spaced subset of this many documents")
    p.add_argument("--max-schemas", type=int, default=None,
                   help=f"maskbench: evenly spaced subset of this many schemas (--quick: {maskbench.QUICK_SCHEMAS})")
    p.add_argument("--replays", type=int, default=3,
                   help="timed passes over the documents (default 3); tails are reported for the first pass "
                        "and as each step's minimum over the passes")
    p.add_argument("--warmup", type=int, default=3, help="documents replayed untimed first (default 3)")
    p.add_argument("--processes", type=int, default=None,
                   help="processes for the shared-memory run (default 8, 2 with --quick; 0: skip)")
    p.add_argument("--stage", default="all", help=f"stage benchmarks to run: all, none, or a comma list of "
                                                  f"{', '.join(STAGES)} (those whose module exists)")
    p.add_argument("--budget", type=float, default=300.0,
                   help="seconds of timed replay per engine run; later documents are reported as skipped")
    p.add_argument("--build-budget", type=float, default=900.0,
                   help="seconds an engine may take to compile (cold and warm build, load) before it is killed and "
                        "reported as timeout (default 900)")
    p.add_argument("--warm-max", type=float, default=60.0,
                   help="skip the warm (second) compile after a cold one longer than this (default 60 s)")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds per engine run (then it is killed)")
    p.add_argument("--no-setup", action="store_true", help="do not run bench/setup_peers.sh first")
    p.add_argument("--no-write", action="store_true", help="print only; write no results file")
    args = p.parse_args(argv)
    if args.processes is None:
        args.processes = 2 if args.quick else 8
    return args


def _names(text: str, known, what: str, accept=None) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if not (accept(n) if accept else n in known)]
    if unknown or not names:
        raise BenchError(f"--{what}: unknown {', '.join(unknown) or '(empty)'}; known: {', '.join(known)}")
    return names


def engine_entry(result: dict, n_docs: int) -> dict:
    """Condense a worker's raw result: latency summaries (single pass and min over replays), document
    verdicts, setup, memory. A build over the budget keeps `timeout` (the report prints it as such)."""
    if "error" in result:
        return {k: result[k] for k in ("error", "timeout", "limit_s", "process_peak_rss_kb") if k in result}
    docs = result["documents"]
    ok = [d for d in docs if d["status"] == "ok"]
    return {"version": result["version"], "setup": result["setup"], "wall_s": result.get("wall_s"),
            "process_peak_rss_kb": result.get("process_peak_rss_kb"),
            "mask": summarize(result["mask_ns"]), "commit": summarize(result["commit_ns"]),
            "mask_bool": summarize(result.get("extra_ns", [])),
            "mask_min": summarize(result.get("mask_min_ns", [])),
            "commit_min": summarize(result.get("commit_min_ns", [])),
            "mask_bool_min": summarize(result.get("extra_min_ns", [])),
            "replays": result.get("replays", 1), "short_of_replays": result.get("short_of_replays", 0),
            "timer_floor": summarize(result.get("floor_ns", [])),
            "timer_floor_min": summarize(result.get("floor_min_ns", [])),
            "docs_ok": len(ok), "docs_total": n_docs, "docs_ok_text": f"{len(ok)}/{n_docs}",
            "rejected": [d for d in docs if d["status"] != "ok"], "memory_replay_process": result["memory"],
            "unstable": [d for d in ok if d.get("unstable")],
            "slowest": slowest_steps(ok)}


def grammar_form(w: Workload, engine: str) -> str:
    """What grammar text the engine got: ours always the file as written; xgrammar its builtin JSON
    grammar where the workload says so; outlines a regex; other peers `w.peer_grammar_kind()`."""
    if engine == report.OURS:
        return "as written"
    if engine == "xgrammar" and w.xgrammar_builtin_json:
        return "builtin JSON"
    if engine == "outlines":
        return "regex"
    return w.peer_grammar_kind()


def run_pair(w: Workload, tokenizer: str, docs: list, engines: list[str], args) -> dict:
    spec = tokenizer_spec(tokenizer)
    job = {"workload": w.name, "tokenizer": spec.to_job(), "warmup_docs": args.warmup, "replays": args.replays,
           "budget_s": args.budget, "warm_max_s": args.warm_max,
           "artifact_dir": str(REPO / ".cache" / "bench" / "artifacts"),
           "grammar": {"path": str(w.grammar_path), "start": w.start, "lexer": w.lexer, "lark": w.peer_lark(),
                       "outlines": w.outlines,
                       "xgrammar_builtin_json": w.xgrammar_builtin_json},
           "documents": [{"id": d.doc_id, "tokens": encode(tokenizer, d.text)} for d in docs]}
    out = {}
    for engine in engines:
        if engine == "outlines" and not w.outlines:
            out[engine] = {"error": "no regex form of this grammar (not a regular language)"}
            continue
        print(f"bench: {w.name} x {tokenizer} x {engine} ...", file=sys.stderr, flush=True)
        entry = engine_entry(runner.run_worker(engine, job, args.timeout, args.build_budget), len(docs))
        entry["grammar_form"] = grammar_form(w, engine)
        if "error" not in entry and args.processes > 0:
            entry["memory_1"] = runner.run_memory(engine, job, 1, args.timeout)
            entry["memory_8"] = runner.run_memory(engine, job, args.processes, args.timeout)
        out[engine] = entry
    return out


def run_workload(name: str, tokenizers: list[str], engines: list[str], args, info: dict) -> dict:
    """One workload x tokenizers x engines. Missing data (a corpus, an offline fetch) skips this workload
    with its reason instead of stopping the others. maskbench (JSON Schemas) is bench.maskbench's."""
    if name in maskbench.NAMES:
        return maskbench.run(name, tokenizers, engines, args, info)
    w = workload(name)
    base = {"workload": name, "machine": info, "options": {k: v for k, v in vars(args).items()}, "runs": {}}
    try:
        path = w.grammar_path
        docs = subset(w.documents(), QUICK_DOCS if args.quick and args.max_docs is None else args.max_docs)
        peer_changes = w.peer_form()[1]
    except BenchError as e:
        print(f"bench: {name}: skipped: {e}", file=sys.stderr, flush=True)
        return {**base, "skipped": str(e)}
    runs = {tok: run_pair(w, tok, docs, engines, args) for tok in tokenizers}
    return {**base, "grammar": str(path.relative_to(REPO.parent) if path.is_relative_to(REPO.parent) else path),
            "start": w.start, "peer_grammar": peer_changes,
            "documents": len(docs), "bytes": sum(len(d.text) for d in docs), "notes": list(w.notes),
            "timing_policy": "perf_counter_ns per call; warm-up documents untimed; gc disabled in timed loops "
                             f"for every engine; single thread; nearest-rank percentiles; {args.replays} replays: "
                             "single pass = the first, min = each step's minimum over the replays",
            "runs": runs}


def run_stages(selection: str) -> dict:
    """Run bench/<stage>_bench.py run() for the selected stages that exist."""
    if selection == "none":
        return {}
    names = STAGES if selection == "all" else _names(selection, STAGES, "stage")
    results = {}
    for name in names:
        path = Path(__file__).resolve().parent / f"{name}_bench.py"
        if not path.exists():
            continue
        print(f"bench: stage {name} ...", file=sys.stderr, flush=True)
        began = time.perf_counter()
        try:
            results[name] = importlib.import_module(f"bench.{name}_bench").run()
        except Exception as e:  # a stage bench failing must not hide the others' numbers
            results[name] = {"error": f"{type(e).__name__}: {e}"}
        results[name]["wall_s"] = time.perf_counter() - began
    return results


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if args.replays < 1:
            raise BenchError(f"--replays: must be at least 1, got {args.replays}")
        workloads = [] if args.workloads == "none" else _names(
            args.workloads, [*WORKLOADS, *maskbench.NAMES, "keywords<N>"], "workloads",
            lambda name: name in maskbench.NAMES or known(name))
        tokenizers = _names(args.tokenizers, TOKENIZER_NAMES, "tokenizers")
        engines = _names(args.engines, runner.ENGINES, "engines")
        if not args.no_setup:
            peers = [runner.ENGINES[e].venv for e in engines if runner.ENGINES[e].venv]
            subprocess.run(["bash", str(REPO / "bench" / "setup_peers.sh"), *peers], check=True)
        info = report.machine()
        results = [run_workload(name, tokenizers, engines, args, info) for name in workloads]
        stages = run_stages(args.stage)
        info["speed_after"] = report.speed()
    except BenchError as e:
        print(f"bench: {e}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as e:
        print(f"bench: bench/setup_peers.sh failed (exit {e.returncode}); see its output above", file=sys.stderr)
        return 1
    grammars = [r for r in results if r["workload"] not in maskbench.NAMES]
    schemas = [r for r in results if r["workload"] in maskbench.NAMES]
    if grammars:
        print(report.render(grammars, info))
    if schemas:
        print(schema_report.render(schemas, info))
    if stages:
        print("stage benchmarks:\n" + json.dumps(stages, indent=1, sort_keys=True, default=str))
    if not args.no_write:
        stage_result = [{"workload": "stages", "machine": info, "runs": {}, "stages": stages}] if stages else []
        for path in report.write_results(results + stage_result):
            print(f"bench: wrote {path.relative_to(REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
