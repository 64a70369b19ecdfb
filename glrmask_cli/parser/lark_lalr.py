"""Where lark's own LALR parser accepts less than the grammar: the shift/reduce conflicts of lark's
LALR(1) automaton, which lark 1.3.1 (`lark/parsers/lalr_analysis.py`, `compute_lalr1_states`)
resolves as shifts. GLRMask keeps every conflict (docs/semantics.md, "Conflicts of lark's LALR
parser"), so a text that needs one of those reductions is allowed by its masks and rejected by
`Lark(grammar, parser="lalr")`. A build warns with the count and the first few.

This asks lark's analyzer for its LALR(1) lookaheads and reads the conflicts off them, as lark's
table construction does: reductions on one lookahead are first narrowed to the rules of the highest
priority; if several remain, lark refuses the grammar for LALR (a reduce/reduce collision), so it
can only be parsed with lark's Earley parser, which keeps every parse as GLRMask does, and nothing
is reported. lark's analyzer holds its states in sets, so the conflicts are sorted here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lark.common import ParserConf
from lark.grammar import Rule
from lark.parsers.lalr_analysis import LALR_Analyzer

from glrmask_cli.grammar import GrammarSpec

SHOWN = 3   # conflicts a warning names


@dataclass(frozen=True, order=True)
class ShiftPreferred:
    """lark's LALR parser shifts `terminal` where the grammar could also reduce by `rule` (names as
    the grammar writes them)."""

    rule: str
    terminal: str


def shift_preferred(grammar: GrammarSpec) -> tuple[ShiftPreferred, ...]:
    """The shift/reduce conflicts lark's LALR parser resolves as shifts, one per (LALR state,
    terminal), sorted; () when there are none or lark refuses the grammar for LALR."""
    if not grammar.lark_rules:
        return ()
    analyzer = LALR_Analyzer(ParserConf(list(grammar.lark_rules), {}, [grammar.start]))
    analyzer.compute_lr0_states()
    analyzer.compute_reads_relations()
    analyzer.compute_includes_lookback()
    analyzer.compute_lookaheads()
    display = {t.name: t.display for t in grammar.terminals}
    found = []
    for itemset in analyzer.lr0_itemsets:
        for lookahead, rules in itemset.lookaheads.items():
            best = _highest_priority(rules)
            if len(best) > 1:
                return ()        # lark's LALR refuses the grammar (a reduce/reduce collision)
            if lookahead in itemset.transitions:
                found.append(ShiftPreferred(_rule_text(best[0], display),
                                            display.get(lookahead.name, lookahead.name)))
    return tuple(sorted(found))


def shift_preferred_warnings(conflicts: Sequence[ShiftPreferred]) -> tuple[str, ...]:
    """A warning line naming how many such conflicts there are and the first `SHOWN`; () for none."""
    if not conflicts:
        return ()
    # examples: distinct (rule, terminal) pairs, the rules the grammar names before lark's helpers
    pairs = sorted(set(conflicts), key=lambda c: (c.rule.startswith("_"), c.rule, c.terminal))
    named = "; ".join(f"{c.terminal} rather than reduce by `{c.rule}`" for c in pairs[:SHOWN])
    more = ", ..." if len(pairs) > SHOWN else ""
    counted = f"{len(conflicts):,} shift/reduce conflicts" if len(conflicts) > 1 else "a shift/reduce conflict"
    return (f"lark's LALR parser resolves {counted} of this grammar by shifting (it shifts {named}{more}); "
            "GLRMask keeps both actions, so a text that needs such a reduction is allowed here and rejected by "
            "Lark(parser='lalr') (docs/semantics.md, \"Conflicts of lark's LALR parser\")",)


def _highest_priority(rules: set[Rule]) -> list[Rule]:
    """The rules lark still reduces by on one lookahead after its priority tie-break."""
    priority = {rule: rule.options.priority or 0 for rule in rules}
    top = max(priority.values())
    return [rule for rule in rules if priority[rule] == top]


def _rule_text(rule: Rule, display: dict[str, str]) -> str:
    """`lhs: rhs...` (`<empty>` for none), terminals as the grammar writes them."""
    rhs = " ".join(display.get(s.name, s.name) for s in rule.expansion)
    return f"{rule.origin.name}: {rhs or '<empty>'}"
