"""Stage benchmark: LR table / stack-effect build times and Recognizer (scanner + GLR) throughput.

Grammars: grammars/json.lark, syncode 0.4.16 sql.lark (devtools.data.syncode_grammar),
lark's python.lark (start eval_input), ../shared verilog.lark. Documents: JSONTestSuite y_ files, the
Spider queries and the largest circuitgraph netlist (../shared/corpora; skipped when absent).
`run() -> dict` returns the numbers and prints them; no assertion on timings.
"""

from __future__ import annotations

import time
from pathlib import Path

import lark

from bench.workloads import syncode_sql_grammar
from devtools.flat_stack_effects import build_stack_effects
from glrmask_cli.check import load_checker
from glrmask_cli.errors import LimitExceeded
from glrmask_cli.grammar import load_grammar
from glrmask_cli.parser.cfg import build_cfg
from glrmask_cli.parser.lr import build_lr
from glrmask_cli.parser.normalize import normalize
from glrmask_cli.parser.stack_effects import build_effect_graphs

REPO = Path(__file__).resolve().parent.parent
CORPORA = REPO.parent / "shared" / "corpora"
PYTHON = Path(lark.__file__).parent / "grammars" / "python.lark"


def _tables(path: Path, start: str | None = None, effects: bool = True) -> dict:
    spec = load_grammar(path, start=start)
    began = time.perf_counter()
    normalized = normalize(build_cfg(spec))
    build = build_lr(normalized)
    out = {"lr_s": round(time.perf_counter() - began, 4), "lr_states": build.tables.n_states,
           "conflicts": len(build.conflicts), "rules": len(normalized.cfg.rules)}
    if effects:
        began = time.perf_counter()
        graphs = build_effect_graphs(build.tables)
        out.update(graph_s=round(time.perf_counter() - began, 4), graph_nodes=sum(len(g.edges) for g in graphs))
        began = time.perf_counter()
        try:
            eff = build_stack_effects(build.tables)
        except LimitExceeded as e:   # flat effects explode on deep precedence chains: record it
            out.update(effects_error=str(e), effects_s=round(time.perf_counter() - began, 4))
            return out
        out.update(effects_s=round(time.perf_counter() - began, 4), max_read_depth=eff.max_read_depth,
                   effects=sum(len(e) for e in eff.by_terminal))
    return out


def _throughput(grammar: Path, docs: list[bytes], start: str | None = None) -> dict:
    checker = load_checker(grammar, start)
    began = time.perf_counter()
    ok = sum(checker.check_bytes(d).ok for d in docs)
    seconds = time.perf_counter() - began
    size = sum(len(d) for d in docs)
    return {"docs": len(docs), "accepted": ok, "bytes": size, "seconds": round(seconds, 4),
            "bytes_per_s": round(size / seconds) if seconds else None}


def _step_latency(grammar: Path, doc: bytes) -> dict:
    """Per-lexeme cost of Recognizer.feed when fed one lexeme-sized chunk at a time (commit-like)."""
    r = load_checker(grammar).recognizer
    state = r.initial()
    chunks = [doc[i:i + 4] for i in range(0, len(doc), 4)]
    began = time.perf_counter()
    for chunk in chunks:
        state = r.feed(state, chunk)
    seconds = time.perf_counter() - began
    return {"feeds": len(chunks), "us_per_feed": round(seconds / len(chunks) * 1e6, 2)}


def run() -> dict:
    results: dict = {"tables": {}, "throughput": {}}
    json_grammar = REPO / "grammars" / "json.lark"
    results["tables"]["json"] = _tables(json_grammar)
    results["tables"]["sql"] = _tables(syncode_sql_grammar())
    # python eval_input: flat stack effects explode (see stack_effects docstring), so LR only
    results["tables"]["python_eval_input"] = _tables(PYTHON, "eval_input", effects=False)
    python_lr = build_lr(normalize(build_cfg(load_grammar(PYTHON, "eval_input"))))
    python_graphs = build_effect_graphs(python_lr.tables)
    results["tables"]["python_eval_input"]["graph_nodes"] = sum(len(g.edges) for g in python_graphs)
    suite = sorted((REPO / "tests" / "data" / "JSONTestSuite" / "test_parsing").glob("y_*.json"))
    results["throughput"]["json_suite"] = _throughput(json_grammar, [p.read_bytes() for p in suite])
    spider = CORPORA / "sql" / "spider" / "dev_gold.tsv"
    if spider.exists():
        queries = [line.split("\t")[0].encode() for line in spider.read_text(encoding="utf-8").splitlines()]
        results["throughput"]["spider"] = _throughput(syncode_sql_grammar(), queries)
    netlists = CORPORA / "verilog" / "circuitgraph-netlists"
    if netlists.exists():
        largest = max(netlists.glob("*.v"), key=lambda p: p.stat().st_size)
        verilog = CORPORA / "grammars" / "lark-1.3.1-sdist" / "verilog.lark"
        results["throughput"]["netlist_" + largest.stem] = _throughput(verilog, [largest.read_bytes()])
    joined = b"[" + b",\n".join(p.read_bytes() for p in suite) + b"]"
    results["json_feed_4_bytes"] = _step_latency(json_grammar, joined)
    for section, values in results.items():
        print(f"parser {section}: {values}")
    return results


if __name__ == "__main__":
    run()
