"""BNF with integer symbol ids: the parser stages' view of a grammar.

Symbols: terminal ids are [0, n_terminals) in the order of `GrammarSpec.terminals`, followed by
END (`$end`, id n_terminals - 1); nonterminal ids are [n_terminals, n_terminals + n_nonterminals).
"""

from __future__ import annotations

from dataclasses import dataclass


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
