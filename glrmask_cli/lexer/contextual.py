"""lark's contextual lexer (its default for `parser="lalr"`): in each parser state only the terminals
that state has an action on, and the ignored ones, compete; lark builds one basic lexer per distinct
set (`lark/lexer.py`, `ContextualLexer`).

Our parser states are canonical LR(1) states; lark's are LALR(1) states, which merge the LR(1)
states with the same LR(0) core and so also list terminals that only a merged state can take (lark's
lexer then reads such a terminal, and its parser rejects it: `1974 ORDERBY` in sql.lark is one CNAME
there). To lex as lark does, a state's set here is the union over the LR(1) states with its core,
of the normalized grammar (docs/semantics.md says where normalization can still differ).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from glrmask_cli.grammar import TerminalSpec
from glrmask_cli.lexer.dfa import ByteDFA
from glrmask_cli.lexer.scanner import build_lexer
from glrmask_cli.limits import DEFAULTS, BuildLimits
from glrmask_runtime.tables import LexerTables, LRTables


@dataclass(frozen=True)
class ContextualLexer:
    lexers: tuple[LexerTables, ...]      # one basic lexer per distinct accept set (a context)
    context_of: tuple[int, ...]          # per LR state: its context


def accept_sets(lr: LRTables, cores: Sequence[Hashable]) -> list[frozenset[int]]:
    """Per LR state, the terminals (END excluded) that it or a state with the same core (`cores[s]`:
    its kernel items without lookaheads) has an action on: the LALR(1) state's terminals."""
    counts = np.diff(lr.action_offsets).reshape(lr.n_states, lr.n_terminals)[:, :lr.end_terminal]
    by_core: dict[Hashable, set[int]] = {}
    for state, row in enumerate(counts):
        by_core.setdefault(cores[state], set()).update(np.flatnonzero(row).tolist())
    merged = {core: frozenset(terms) for core, terms in by_core.items()}
    return [merged[cores[state]] for state in range(lr.n_states)]


def build_contextual_lexer(terminals: Sequence[TerminalSpec], ignore: Sequence[str], lr: LRTables,
                           cores: Sequence[Hashable], grammar_path: str = "<grammar>",
                           limits: BuildLimits = DEFAULTS) -> ContextualLexer:
    sets = accept_sets(lr, cores)
    index: dict[frozenset[int], int] = {}
    lexers: list[LexerTables] = []
    cache: dict[TerminalSpec, ByteDFA] = {}
    context_of = []
    for accept in sets:
        if accept not in index:
            index[accept] = len(lexers)
            lexers.append(build_lexer(terminals, ignore, grammar_path, limits, only=accept, dfa_cache=cache).tables)
        context_of.append(index[accept])
    return ContextualLexer(tuple(lexers), tuple(context_of))
