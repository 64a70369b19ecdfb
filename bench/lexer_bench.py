"""Stage benchmark: time to build the combined lexer DFA (terminal DFAs + union + minimization).

Grammars: grammars/json.lark, lark's python.lark, syncode 0.4.16 sql.lark (from its pinned PyPI sdist,
devtools.data.syncode_grammar, cached in .cache/test-data).
Terminals come straight from lark's loader, so grammars with %declare (python.lark) work too.
`run() -> dict` returns the numbers and prints them; no assertion on timings.
"""

from __future__ import annotations

import time
from pathlib import Path

import lark
from lark.load_grammar import load_grammar

from bench.workloads import syncode_sql_grammar
from glrmask_cli.grammar import TerminalSpec, terminal_spec
from glrmask_cli.lexer import build_lexer

REPO = Path(__file__).resolve().parent.parent
LARK_GRAMMARS = Path(lark.__file__).parent / "grammars"


def terminal_specs(path: Path) -> tuple[list[TerminalSpec], list[str]]:
    g, _ = load_grammar(path.read_text(encoding="utf-8"), str(path), [str(LARK_GRAMMARS), str(path.parent)], False)
    start = [name for name, *_ in g.rule_defs][:1]
    terms, _, ignore = g.compile(start, set())          # terminals the rules use (as lark does)
    names = [t.name for t in terms]
    return sorted((terminal_spec(t, names) for t in terms), key=lambda t: t.name), list(ignore)


def run() -> dict:
    grammars = {"json": REPO / "grammars" / "json.lark", "python": LARK_GRAMMARS / "python.lark",
                "sql": syncode_sql_grammar()}
    results = {}
    for name, path in grammars.items():
        specs, ignore = terminal_specs(path)
        build_lexer(specs, ignore, str(path))          # warm caches (Unicode classes) once
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            build = build_lexer(specs, ignore, str(path))
            times.append(time.perf_counter() - t0)
        results[name] = {"terminals": len(specs), "states": build.tables.n_states,
                         "term_sets": build.tables.n_term_sets, "warnings": len(build.warnings),
                         "build_s_min": round(min(times), 4), "build_s_max": round(max(times), 4)}
        print(f"lexer {name:7s} terminals={len(specs):4d} states={build.tables.n_states:6d} "
              f"build={min(times):.3f}s (max {max(times):.3f}s) warnings={len(build.warnings)}")
    return results


if __name__ == "__main__":
    run()
