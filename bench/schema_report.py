"""The maskbench report: schema outcomes, compile, and latency tables per (tokenizer, engine), with every
peer's ratio to GLRMask (bench.report's cells and table layout), then what each engine refused, failed
or rejected, schema by schema.

Input: the maskbench and maskbench-strict result dicts of bench.maskbench.run. Output: text. A
rejected valid instance is a correctness failure and is listed in full, as is every refused or
failed schema.
"""

from __future__ import annotations

from bench import report

OUTCOME_COLUMNS = (
    ("schema mode", ("grammar_form",), 1, "{}", False),
    ("schemas ok", ("compiled",), 1, "{}", False),
    ("refused", ("refused",), 1, "{}", False),
    ("failed", ("failed",), 1, "{}", False),
    ("instances ok", ("docs_ok_text",), 1, "{}", False),
    ("replayed", ("instances_replayed",), 1, "{}", False),
    ("rejected", ("instances_rejected",), 1, "{}", False),
)
COMPILE_COLUMNS = (
    ("cold s", ("setup", "compile_cold_s"), 1, "{:.2f}", True),
    ("compile p50 ms", ("compile_warm", "p50"), 1, "{:.0f}", True),
    ("p99", ("compile_warm", "p99"), 1, "{:.0f}", True),
    ("max", ("compile_warm", "max"), 1, "{:.0f}", True),
    ("cached p50 ms", ("compile_cached", "p50"), 1, "{:.1f}", False),
    ("cached max", ("compile_cached", "max"), 1, "{:.1f}", False),
    ("artifact p50 KB", ("artifact", "p50"), 1, "{:.0f}", True),
    ("artifact max", ("artifact", "max"), 1, "{:.0f}", True),
    ("compile peak MB", ("compile_peak_rss_kb",), 1 / 1024, "{:.0f}", True),
)


def latency_columns(suffix: str) -> tuple:
    """bench.report's latency columns, counting instances instead of documents."""
    return (("instances ok", ("docs_ok_text",), 1, "{}", False),) + report.latency_columns(suffix)[1:]


def _notes(result: dict, replays: int) -> list[str]:
    """Per engine: its failures, refused schemas, rejected instances, timer floor and slowest steps."""
    out = []
    for tokenizer, engines in result["runs"].items():
        for name, entry in engines.items():
            where = f"{result['workload']} x {tokenizer} x {name}"
            if "error" in entry:
                out.append(f"{where}: not run: {entry['error']}")
                continue
            setup = entry["setup"]
            out.append(f"{where}: {entry['version']}; cold = tokenizer {setup['tokenizer_s']:.2f} s + first "
                       f"compiled schema ({setup['cold_schema'] or '-'}); {entry['restarts']} worker restarts; "
                       f"{entry['wall_s']:.0f} s")
            for s in entry["schemas"]:
                if s["status"] != "compiled":
                    out.append(f"{where}: {s['status']} {s['name']}: {s.get('error', '')}")
                for problem in s.get("vocab_problems", ()):
                    out.append(f"{where}: {s['name']}: vocabulary differs from the harness: {problem}")
            for d in entry["rejected"]:
                out.append(f"{where}: instance {d['id']} {d['status']} @{d['step']}: {d['reason']}")
            for d in entry["unstable"]:
                out.append(f"{where}: {d['id']} changed verdict on a replay: {d['unstable']}")
            if entry["short_of_replays"]:
                out.append(f"{where}: {entry['short_of_replays']} instances got fewer than {replays} replays "
                           "(--budget)")
            floor = entry.get("timer_floor_min")
            if floor:
                out.append(f"{where}: timer floor (min of {replays}) p50 {floor['p50']:.2f}, p99.9 "
                           f"{floor['p99.9']:.2f}, max {floor['max']:.0f} us")
            if name == report.OURS:
                out.extend(_slowest(where, entry, replays))
    return out


def _slowest(where: str, entry: dict, replays: int) -> list[str]:
    out = []
    if entry["slowest_compiles"]:
        out.append(f"{where}: slowest compiles: " + "; ".join(f"{n} {s:.2f} s" for s, n in entry["slowest_compiles"]))
    for kind in ("mask_min", "commit_min"):
        worst = entry["slowest"].get(kind)
        if worst:
            out.append(f"{where}: slowest {kind.replace('_min', f' (min of {replays})')} steps: " +
                       "; ".join(f"{w['doc']} @{w['step']} {w['us']:.0f} us" for w in worst[:3]))
    return out


def render(results: list[dict], info: dict) -> str:
    """The whole maskbench report (one block per result: tables, then notes)."""
    out = [f"GLRMask JSON Schema benchmark (maskbench), {info['date']}: {info['cpu']}, {info['cores']} cores, "
           f"Python {info['python']}", *filter(None, [report.speed_line(info)])]
    for result in results:
        if "skipped" in result:
            out.append(f"{result['workload']}: skipped: {result['skipped']}")
            continue
        replays = max((e.get("replays", 1) for engines in result["runs"].values() for e in engines.values()),
                      default=1)
        out += [f"{result['workload']}: {len(result['schemas'])} schemas, {result['instances']} valid instances "
                "(json.dumps, ensure_ascii=False); xR = R times GLRMask's value", "",
                "schemas (ok: compiled; failed: crashed, over --build-budget or not reached; instances ok: replayed "
                "all the way and accepted at the end, of every valid instance; rejected: a valid instance refused):",
                report.format_table(report.table_rows([result], OUTCOME_COLUMNS)), "",
                "compile (cold: tokenizer load + the first schema compiled, in a fresh process; compile p50/p99/max: "
                "every later compiled schema, tokenizer loaded, build cache off; cached: the same schema again from "
                "GLRMask's build cache; compile peak: the worker's largest peak RSS over one schema's compile):",
                report.format_table(report.table_rows([result], COMPILE_COLUMNS)), "",
                "single pass (us per step; each schema's first pass is its first encounter):",
                report.format_table(report.table_rows([result], latency_columns(""))), "",
                f"min of {replays} (each step's minimum over {replays} replays):",
                report.format_table(report.table_rows([result], latency_columns("_min"))), ""]
        out += _notes(result, replays)
    return "\n".join(out).rstrip() + "\n"
