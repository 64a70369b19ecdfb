"""Benchmark report: the machine, one table over every (workload, tokenizer, engine), and the JSON files.

Input: per-workload result dicts from bench.__main__. Output: three text tables -- latencies of the
first pass, latencies as each step's minimum over the replays, build time and memory -- (peer cells
carry their ratio to GLRMask, `x2.0` = twice GLRMask's number) and bench/results/<date>-<workload>.json.
Missing numbers print as `-`; an engine stopped at a time limit prints `timeout`; engines that failed
show their one-line error under the tables.
"""

from __future__ import annotations

import json
import os
import platform
import time
import timeit
from pathlib import Path

import numpy as np

from bench.stats import ratio
from glrmask_cli.output import write_output

RESULTS = Path(__file__).resolve().parent / "results"
OURS = "glrmask"

# (header, getter path, scale, format, ratio?) — getters walk the per-engine result dict.
def latency_columns(suffix: str = "") -> tuple:
    """The latency columns of one table: `suffix` "" = the first pass, "_min" = per-step min over replays."""
    return (("docs ok", ("docs_ok_text",), 1, "{}", False),
            ("mask p50", (f"mask{suffix}", "p50"), 1, "{:.1f}", True),
            ("p90", (f"mask{suffix}", "p90"), 1, "{:.1f}", True),
            ("p99", (f"mask{suffix}", "p99"), 1, "{:.1f}", True),
            ("p99.9", (f"mask{suffix}", "p99.9"), 1, "{:.1f}", True),
            ("max", (f"mask{suffix}", "max"), 1, "{:.0f}", True),
            ("mean", (f"mask{suffix}", "mean"), 1, "{:.1f}", True),
            ("commit p50", (f"commit{suffix}", "p50"), 1, "{:.1f}", True),
            ("c.p99.9", (f"commit{suffix}", "p99.9"), 1, "{:.1f}", True),
            ("bool p50", (f"mask_bool{suffix}", "p50"), 1, "{:.1f}", False))


SINGLE_COLUMNS = latency_columns()
MIN_COLUMNS = latency_columns("_min")
BUILD_COLUMNS = (
    ("grammar", ("grammar_form",), 1, "{}", False),
    ("compile s", ("setup", "compile_cold_s"), 1, "{:.3g}", True),
    ("warm s", ("setup", "compile_warm_s"), 1, "{:.3g}", True),
    ("compile peak MB", ("setup", "compile_memory", "peak_rss_kb"), 1 / 1024, "{:.0f}", True),
    ("worker peak MB", ("setup", "compile_memory", "children_peak_rss_kb"), 1 / 1024, "{:.0f}", True),
    ("process peak MB", ("process_peak_rss_kb",), 1 / 1024, "{:.0f}", True),
    ("artifact KB", ("setup", "artifact_bytes"), 1 / 1024, "{:.0f}", True),
    ("load ms", ("setup", "load_ms"), 1, "{:.2f}", True),
    ("RSS 1p MB", ("memory_1", "rss_kb_sum"), 1 / 1024, "{:.0f}", True),
    ("PSS Np MB", ("memory_8", "pss_kb_sum"), 1 / 1024, "{:.0f}", True),
    ("+Np MB", ("memory_8", "added_pss_kb_sum"), 1 / 1024, "{:.0f}", True),
)
COLUMNS = SINGLE_COLUMNS + BUILD_COLUMNS[1:]     # the single-pass table and the build numbers (tests, JSON)


def machine() -> dict:
    """CPU model, core count, OS, Python and the date of the run."""
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), model)
    except OSError:
        pass
    return {"cpu": model, "cores": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version(), "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "speed_before": speed()}


def speed() -> dict:
    """How fast this machine runs now (a shared one has slow phases that move every figure): `loop_us`,
    one `sum(range(100))` in Python, the best of 5; `row_or_us`, OR-ing one 12.5 KB row (cl100k's mask
    width) of a 100 MB array into another, rows read from memory, not cache (the median of 320)."""
    loop = min(timeit.repeat("sum(range(100))", number=20_000, repeat=5)) / 20_000 * 1e6
    pool = np.ones((8192, 3125), dtype=np.uint32)          # written, so its pages are real
    rows = np.random.default_rng(0).permutation(4096)[:320].tolist()   # the first half: evicted since
    into = np.zeros(3125, dtype=np.uint32)
    clock, times = time.perf_counter_ns, []
    for row in rows:
        began = clock()
        np.bitwise_or(into, pool[row], out=into)
        times.append(clock() - began)
    return {"loop_us": round(loop, 3), "row_or_us": round(float(np.median(times)) / 1e3, 3)}


def speed_line(info: dict) -> str | None:
    """The machine's speed at the start and at the end of the run, for the report's header."""
    parts = [(label, info[key]) for label, key in (("start", "speed_before"), ("end", "speed_after")) if key in info]
    if not parts:
        return None
    return ("machine speed (lower is faster): " + "; ".join(
        f"at the {label} a Python loop (sum(range(100))) {s['loop_us']:.2f} us, a 12.5 KB row OR from memory "
        f"{s['row_or_us']:.2f} us" for label, s in parts))


def _get(entry: dict, path: tuple[str, ...]) -> float | str | None:
    value: object = entry
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value  # type: ignore[return-value]


def _cell(entry: dict, ours: dict | None, column: tuple) -> str:
    header, path, scale, fmt, with_ratio = column
    if "timeout" in entry:              # killed at a limit: say so where its first missing number would be
        if header == "docs ok" or (header == "compile s" and entry["timeout"] == "build"):
            return f"timeout >{entry.get('limit_s', 0):.0f}s" if header == "compile s" else "timeout"
        if header not in ("grammar", "process peak MB"):     # the peak RSS it reached before the kill
            return "-"
    value = _get(entry, path)
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    text = fmt.format(value * scale)
    if with_ratio and ours is not None and ours is not entry:
        r = ratio(value, _get(ours, path))  # type: ignore[arg-type]
        if r is not None:
            text += f" x{r:.0f}" if r >= 10 else f" x{r:.1f}" if r >= 1 else f" x{r:.2g}"
    return text


def table_rows(results: list[dict], columns: tuple = COLUMNS) -> list[list[str]]:
    """Header + one row per (workload, tokenizer, engine) that has numbers or hit a time limit."""
    rows = [["workload", "tokenizer", "engine"] + [c[0] for c in columns]]
    for result in results:
        for tokenizer, engines in result["runs"].items():
            ours = engines.get(OURS)
            ours = ours if ours and "error" not in ours else None
            for name, entry in engines.items():
                if "error" in entry and "timeout" not in entry:
                    continue
                rows.append([result["workload"], tokenizer, name] + [_cell(entry, ours, c) for c in columns])
    return rows


def format_table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.rjust(w) if i >= 3 else cell.ljust(w) for i, (cell, w) in
                       enumerate(zip(row, widths, strict=False))).rstrip() for row in rows]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def render(results: list[dict], info: dict) -> str:
    """The whole text report: machine line, the single-pass, min-of-N and build tables, then per run its
    failures, peer grammar forms, timer floors, slowest steps and rejected documents."""
    replays = max((e.get("replays", 1) for r in results for engines in r["runs"].values()
                   for e in engines.values()), default=1)
    out = [f"GLRMask benchmark, {info['date']}: {info['cpu']}, {info['cores']} cores, Python {info['python']}",
           *filter(None, [speed_line(info)]),
           "latencies in us per step (packed int32 bitmask fill; mask() bool separately for GLRMask); "
           "xR = R times GLRMask's value",
           "", "single pass (the first timed pass; every sample, noise included):",
           format_table(table_rows(results, SINGLE_COLUMNS)), "",
           f"min of {replays} (each step's minimum over {replays} replays of the same documents: a shared machine's "
           "noise only ever adds time):",
           format_table(table_rows(results, MIN_COLUMNS)), "",
           "build and memory (compile s: cold, tokenizer setup included; compile peak: the engine process's peak "
           "RSS over the cold compile; worker peak: the largest of the processes it started (GLRMask's group "
           "workers, which share the pages they inherit until written); process peak: over its whole run; "
           "PSS Np = N processes (--processes) sharing "
           "one artifact; +Np = the PSS they added by loading, imports excluded; grammar: what the engine was "
           "given, see below):",
           format_table(table_rows(results, BUILD_COLUMNS)), ""]
    for result in results:
        if "skipped" in result:
            out.append(f"{result['workload']}: skipped: {result['skipped']}")
            continue
        if result.get("peer_grammar"):
            out.append(f"{result['workload']}: peers get the grammar with: {'; '.join(result['peer_grammar'])} "
                       "(devtools/peer_grammar.py); GLRMask gets it as written")
        for tokenizer, engines in result["runs"].items():
            for name, entry in engines.items():
                where = f"{result['workload']} x {tokenizer} x {name}"
                if "error" in entry:
                    out.append(f"{where}: not run: {entry['error']}")
                    continue
                for key in ("memory_1", "memory_8"):
                    if isinstance(entry.get(key), dict) and "error" in entry[key]:
                        out.append(f"{where}: {key} not measured: {entry[key]['error']}")
                for key, label in (("timer_floor", "single pass"), ("timer_floor_min", f"min of {replays}")):
                    floor = entry.get(key)
                    if floor:
                        out.append(f"{where}: timer floor ({label}; empty call, same loop) p50 {floor['p50']:.2f}, "
                                   f"p99.9 {floor['p99.9']:.2f}, max {floor['max']:.0f} us")
                if entry.get("short_of_replays"):
                    out.append(f"{where}: {entry['short_of_replays']} documents got fewer than {replays} replays "
                               "(--budget); their min is over the replays they got")
                for d in entry.get("unstable") or ():
                    out.append(f"{where}: {d['id']} changed verdict on a replay: {d['unstable']}")
                for kind, worst in sorted((entry.get("slowest") or {}).items()) if name == OURS else ():
                    if worst:
                        out.append(f"{where}: slowest {kind.replace('_min', f' (min of {replays})')} steps: " +
                                   "; ".join(f"{w['doc']} @{w['step']} {w['us']:.0f} us" for w in worst[:3]))
                if entry.get("rejected"):
                    sample = "; ".join(f"{d['id']} @{d['step']}: {d['reason']}" for d in entry["rejected"][:3])
                    out.append(f"{where}: {len(entry['rejected'])} documents rejected or skipped (not timed), "
                               f"e.g. {sample}")
    return "\n".join(out).rstrip() + "\n"


def write_results(results: list[dict], folder: Path = RESULTS) -> list[Path]:
    """One JSON file per workload: bench/results/<YYYY-MM-DD>-<workload>.json."""
    folder.mkdir(parents=True, exist_ok=True)
    day = time.strftime("%Y-%m-%d")
    paths = []
    for result in results:
        path = folder / f"{day}-{result['workload']}.json"
        write_output(path, (json.dumps(result, indent=1, sort_keys=True) + "\n").encode("utf-8"))
        paths.append(path)
    return paths
