"""Benchmark report: the machine, one table over every (workload, tokenizer, engine), and the JSON files.

Input: per-workload result dicts from bench.__main__. Output: a text table (peer cells carry their
ratio to GLRMask, `x2.0` = twice GLRMask's number) and bench/results/<date>-<workload>.json.
Missing numbers print as `-`; engines that failed show their one-line error under the table.
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

from bench.stats import ratio
from glrmask_cli.output import write_output

RESULTS = Path(__file__).resolve().parent / "results"
OURS = "glrmask"

# (header, getter path, scale, format, ratio?) — getters walk the per-engine result dict.
COLUMNS = (
    ("docs ok", ("docs_ok_text",), 1, "{}", False),
    ("mask p50", ("mask", "p50"), 1, "{:.1f}", True),
    ("p90", ("mask", "p90"), 1, "{:.1f}", True),
    ("p99", ("mask", "p99"), 1, "{:.1f}", True),
    ("p99.9", ("mask", "p99.9"), 1, "{:.1f}", True),
    ("max", ("mask", "max"), 1, "{:.0f}", True),
    ("mean", ("mask", "mean"), 1, "{:.1f}", True),
    ("commit p50", ("commit", "p50"), 1, "{:.1f}", True),
    ("c.p99.9", ("commit", "p99.9"), 1, "{:.1f}", True),
    ("bool p50", ("mask_bool", "p50"), 1, "{:.1f}", False),
    ("compile s", ("setup", "compile_cold_s"), 1, "{:.3g}", True),
    ("warm s", ("setup", "compile_warm_s"), 1, "{:.3g}", True),
    ("artifact KB", ("setup", "artifact_bytes"), 1 / 1024, "{:.0f}", True),
    ("load ms", ("setup", "load_ms"), 1, "{:.2f}", True),
    ("RSS 1p MB", ("memory_1", "rss_kb_sum"), 1 / 1024, "{:.0f}", True),
    ("PSS Np MB", ("memory_8", "pss_kb_sum"), 1 / 1024, "{:.0f}", True),
    ("+Np MB", ("memory_8", "added_pss_kb_sum"), 1 / 1024, "{:.0f}", True),
)


def machine() -> dict:
    """CPU model, core count, OS, Python and the date of the run."""
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), model)
    except OSError:
        pass
    return {"cpu": model, "cores": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version(), "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}


def _get(entry: dict, path: tuple[str, ...]) -> float | str | None:
    value: object = entry
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value  # type: ignore[return-value]


def _cell(entry: dict, ours: dict | None, column: tuple) -> str:
    _, path, scale, fmt, with_ratio = column
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


def table_rows(results: list[dict]) -> list[list[str]]:
    """Header + one row per (workload, tokenizer, engine) that has numbers."""
    rows = [["workload", "tokenizer", "engine"] + [c[0] for c in COLUMNS]]
    for result in results:
        for tokenizer, engines in result["runs"].items():
            ours = engines.get(OURS)
            ours = ours if ours and "error" not in ours else None
            for name, entry in engines.items():
                if "error" in entry:
                    continue
                rows.append([result["workload"], tokenizer, name] + [_cell(entry, ours, c) for c in COLUMNS])
    return rows


def format_table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.rjust(w) if i >= 3 else cell.ljust(w) for i, (cell, w) in
                       enumerate(zip(row, widths, strict=False))).rstrip() for row in rows]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def render(results: list[dict], info: dict) -> str:
    """The whole text report: machine line, the table, failures and rejected documents."""
    out = [f"GLRMask benchmark, {info['date']}: {info['cpu']}, {info['cores']} cores, Python {info['python']}",
           "latencies in us per step (packed int32 bitmask fill; mask() bool separately for GLRMask); "
           "xR = R times GLRMask's value; PSS Np = N processes (--processes, default 8) sharing one artifact; "
           "+Np = the PSS they added by loading (imports excluded)",
           "", format_table(table_rows(results)), ""]
    for result in results:
        for tokenizer, engines in result["runs"].items():
            for name, entry in engines.items():
                where = f"{result['workload']} x {tokenizer} x {name}"
                if "error" in entry:
                    out.append(f"{where}: not run: {entry['error']}")
                    continue
                for key in ("memory_1", "memory_8"):
                    if isinstance(entry.get(key), dict) and "error" in entry[key]:
                        out.append(f"{where}: {key} not measured: {entry[key]['error']}")
                if entry.get("timer_floor"):
                    floor = entry["timer_floor"]
                    out.append(f"{where}: timer floor (empty call, same loop) p50 {floor['p50']:.2f}, "
                               f"p99.9 {floor['p99.9']:.2f}, max {floor['max']:.0f} us")
                for kind, worst in sorted((entry.get("slowest") or {}).items()) if name == OURS else ():
                    if worst:
                        out.append(f"{where}: slowest {kind} steps: " + "; ".join(
                            f"{w['doc']} @{w['step']} {w['us']:.0f} us" for w in worst[:3]))
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
