"""BNF with integer symbol ids: the parser stages' view of a grammar.

Symbols: terminal ids are [0, n_terminals) in the order of `GrammarSpec.terminals`, followed by
END (`$end`, id n_terminals - 1); nonterminal ids are [n_terminals, n_terminals + n_nonterminals).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from glrmask_cli.grammar import GrammarSpec


@dataclass(frozen=True)
class Rule:
    lhs: int                 # nonterminal symbol id
    rhs: tuple[int, ...]     # symbol ids


@dataclass(frozen=True)
class CFG:
    terminal_names: tuple[str, ...]      # last one is "$END"
    nonterminal_names: tuple[str, ...]
    rules: tuple[Rule, ...]
    start: int                           # nonterminal symbol id

    @property
    def n_terminals(self) -> int:
        return len(self.terminal_names)

    @property
    def end(self) -> int:
        return self.n_terminals - 1

    def is_terminal(self, symbol: int) -> bool:
        return symbol < self.n_terminals

    def name(self, symbol: int) -> str:
        if symbol < self.n_terminals:
            return self.terminal_names[symbol]
        return self.nonterminal_names[symbol - self.n_terminals]


END_NAME = "$END"


def build_cfg(spec: "GrammarSpec") -> CFG:
    """GrammarSpec -> CFG: terminal ids follow `spec.terminals` then `$END`; nonterminals sorted by name.

    Rules keep the spec's order (deterministic: Lark's file order). A name that is neither a terminal
    nor has rules cannot occur (the loader validated references).
    """
    terminal_names = tuple(t.name for t in spec.terminals) + (END_NAME,)
    nonterminal_names = tuple(sorted({r.lhs for r in spec.rules} | {spec.start}))
    ids = {name: i for i, name in enumerate(terminal_names[:-1])}
    offset = len(terminal_names)
    ids.update({name: offset + i for i, name in enumerate(nonterminal_names)})
    rules = tuple(Rule(ids[r.lhs], tuple(ids[s] for s in r.rhs)) for r in spec.rules)
    return CFG(terminal_names, nonterminal_names, rules, ids[spec.start])
