"""lark's contextual lexer (its default for `parser="lalr"`): in each parser state only the terminals
that state has an action on, and the ignored ones, compete; lark builds one basic lexer per distinct
set (`lark/lexer.py`, `ContextualLexer`).

Our parser states are canonical LR(1) states; lark's are LALR(1) states, which merge the LR(1)
states with the same LR(0) core and so also list terminals that only a merged state can take (lark's
lexer then reads such a terminal, and its parser rejects it: `1974 ORDERBY` in sql.lark is one CNAME
there). To lex as lark does, a state's set here is the union over the LR(1) states with its core,
of the normalized grammar (docs/semantics.md says where normalization can still differ).

The per-context lexers are then put into one DFA with one START per context and Moore-minimized
together: a state inside a string or an identifier usually lexes alike in every context that can
reach it (python `eval_input`: 80 contexts, 14,356 states apart, 1,458 together; go.lark 16,708 ->
1,242). Besides its close sets, a state is labelled by whether it is a START (nothing open) and,
where one of its closes is an ignored terminal, by the context it returns to after that lexeme, so
merged states share those too.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from glrmask_cli.forks import fork_map
from glrmask_cli.grammar import TerminalSpec
from glrmask_cli.lexer.dfa import moore_partition, renumber, row_classes
from glrmask_cli.lexer.scanner import build_lexer
from glrmask_cli.limits import DEFAULTS, BuildLimits
from glrmask_runtime.tables import DEAD, START, LexerTables, LRTables

_SERIAL_SECONDS = 0.3   # contexts' lexers built in one process before the rest go to several (forks.py)


@dataclass(frozen=True)
class ContextualLexer:
    """Every context's basic lexer in one minimized DFA (`tables`, DEAD = 0, context 0's START =
    START). starts[c]: context c's START; start_of[p]: the START of LR state p's context;
    restart[q]: the START a lexeme that closes at q as an ignored terminal hands over to (the
    context does not change: the stacks do not), 0 where none does; is_start[q]: q is some
    context's START (nothing open)."""

    tables: LexerTables
    starts: np.ndarray
    start_of: np.ndarray
    restart: np.ndarray
    is_start: np.ndarray

    @property
    def n_contexts(self) -> int:
        return len(self.starts)


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
                           limits: BuildLimits = DEFAULTS, jobs: int = 1) -> ContextualLexer:
    """One basic lexer per distinct accept set (`accept_sets`), combined (module docstring). The
    lexers are built in this process; once that has taken `_SERIAL_SECONDS`, the rest are built on
    `jobs` forked processes (forks.py: forking costs tens of milliseconds, more than the whole stage
    of most JSON schemas with 20 contexts; Github_hard o30769's 131 take 8 s). The lexers are the
    same either way."""
    sets = accept_sets(lr, cores)
    index: dict[frozenset[int], int] = {}
    for accept in sets:
        index.setdefault(accept, len(index))
    distinct = list(index)

    def lexer_of(accept: frozenset[int]) -> LexerTables:
        return build_lexer(terminals, ignore, grammar_path, limits, only=accept).tables

    lexers: list[LexerTables] = []
    began = time.perf_counter()
    while len(lexers) < len(distinct):
        if jobs > 1 and time.perf_counter() - began > _SERIAL_SECONDS:
            lexers += fork_map(lexer_of, distinct[len(lexers):], jobs, "lexer contexts")
            break
        lexers.append(lexer_of(distinct[len(lexers)]))
    context_of = [index[accept] for accept in sets]
    ignored = frozenset(int(t) for t in np.concatenate([lexer.ignored for lexer in lexers]).tolist())
    return combine_contexts(lexers, np.asarray(context_of, dtype=np.int64), ignored)


def unproduced_warnings(contextual: ContextualLexer, terminals: Sequence[TerminalSpec]) -> list[str]:
    """Terminals no context's lexer ever closes a lexeme as (rules that use them never apply)."""
    tables = contextual.tables
    produced = {t for s in np.unique(tables.close_sets).tolist() for t in tables.term_set(int(s))}
    ignored = set(tables.ignored.tolist())
    return [f"terminal {terminals[t].display} is never produced: in every parser state that takes it, lark's "
            "contextual lexer reads its texts as another terminal or as part of a longer lexeme"
            for t in range(len(terminals)) if t not in produced and t not in ignored]


def combine_contexts(lexers: Sequence[LexerTables], context_of: np.ndarray, ignored: frozenset[int]) -> ContextualLexer:
    """The lexers (context c = lexers[c]) as one DFA, states with equal futures merged."""
    term_sets: dict[tuple[int, ...], int] = {(): 0}
    trans_parts = [np.zeros((1, 256), np.int64)]
    label_parts = [np.zeros((1, 257 + 3), np.int64)]   # close sets, viable set, START?, restart context
    starts, offset = [], 1
    for c, lexer in enumerate(lexers):
        members = [lexer.term_set(k) for k in range(lexer.n_term_sets)]
        ids = np.asarray([term_sets.setdefault(m, len(term_sets)) for m in members], np.int64)
        trans = lexer.transitions[1:].astype(np.int64)
        trans_parts.append(np.where(trans == DEAD, DEAD, trans - 1 + offset))
        closes = ids[lexer.close_sets[1:]]
        ignored_set = np.asarray([bool(m) and set(m) <= ignored for m in members], bool)
        restarts = np.where(ignored_set[lexer.close_sets[1:]].any(axis=1), c + 1, 0)
        is_start = np.zeros(lexer.n_states - 1, np.int64)
        is_start[START - 1] = 1
        label_parts.append(np.column_stack([closes, ids[lexer.viable_sets[1:]], is_start, restarts]))
        starts.append(offset + START - 1)
        offset += lexer.n_states - 1
    trans, labels = np.concatenate(trans_parts), np.concatenate(label_parts)
    block = moore_partition(trans, row_classes(labels))
    new_trans, new_id = renumber(trans, block, starts)   # context 0's START becomes START
    n = new_trans.shape[0]
    first = np.full(n, -1, np.int64)      # one old state per new state (every state is reachable)
    first[new_id[::-1]] = np.arange(len(new_id))[::-1]
    merged = labels[first]
    order = sorted(term_sets, key=term_sets.__getitem__)
    offsets = np.cumsum([0] + [len(m) for m in order]).astype(np.int32)
    items = np.asarray([t for m in order for t in m], np.int32)
    tables = LexerTables(new_trans, merged[:, :257].astype(np.int32), merged[:, 257].astype(np.int32),
                         offsets, items, np.asarray(sorted(ignored), np.int32))
    start_ids = new_id[np.asarray(starts)]
    restart = np.where(merged[:, 259] > 0, start_ids[np.maximum(merged[:, 259] - 1, 0)], DEAD)
    return ContextualLexer(tables, start_ids, start_ids[context_of], restart.astype(np.int64),
                           merged[:, 258].astype(bool))
