"""Stage 3 (after the LR tables): the quotient of the LR automaton that the Parser DWA is built on.

The Parser DWA observes the LR tables only through stack effects: which states have an action on
a terminal, what a reduction pops and which nonterminal it pushes (never which rule it was), and
where shifts and gotos lead. Canonical LR(1) keeps apart states that differ in nothing else, e.g.
the states after `a + b` and `a - b` reduce by different rules of one nonterminal and one length
(syncode sql.lark: 12,596 states, 6,185 classes), and operators used in the same places shift into
such states (go.lark: 88 terminals, 56 classes). So:

- states are classed by bisimulation: equal classes have, per terminal, the same actions with
  reductions compared by (left-hand side, length) and shift targets by class, gotos to the same
  classes, and (with lark's contextual lexer) the same lexer context;
- terminals are classed by their columns under those state classes (ignored terminals and END
  apart from the others);
- the quotient tables have one state per class and one terminal per class (END's class last, as in
  every `LRTables`), and one rule per (left-hand side, length).

Exact: a stack of real states, mapped to classes, is a stack of the quotient, and a terminal's
effect on it is the class image of its effect on the real stack; "the top has an action on t" is
the same for every member of a class. The Parser DWA reads classes (its edges are expanded to the
real states when the artifact is written); the runtime parses with the real tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from glrmask_cli.ragged import row_positions
from glrmask_runtime.tables import REDUCE, SHIFT, LRTables, unpack_actions


@dataclass(frozen=True, eq=False)
class LRQuotient:
    """state_class[p]: the class of real LR state p (classes numbered by their first member);
    terminal_class[t]: the class of terminal t (END's class is the last); `tables`: the quotient's
    tables over classes; `members`: per state class, its real states (ascending)."""

    state_class: np.ndarray
    terminal_class: np.ndarray
    tables: LRTables
    members: tuple[np.ndarray, ...]

    @property
    def n_state_classes(self) -> int:
        return self.tables.n_states

    @property
    def n_terminal_classes(self) -> int:
        return self.tables.n_terminals


def quotient(tables: LRTables, ignored: Sequence[int] = (),
             lexer_start: Sequence[int] | np.ndarray | None = None) -> LRQuotient:
    """The bisimulation quotient of `tables` (see the module docstring). `ignored`: the %ignore'd
    terminals (never merged with parsed ones); `lexer_start[p]`: the START of state p's lexer
    context (lark's contextual lexer; None: the basic lexer)."""
    n, n_t = tables.n_states, tables.n_terminals
    counts = np.diff(np.asarray(tables.action_offsets, dtype=np.int64)).astype(np.int64)
    cells = np.repeat(np.arange(n * n_t, dtype=np.int64), counts)
    state, terminal = np.divmod(cells, n_t)
    kinds, args = unpack_actions(tables.actions)
    lhs, length = np.asarray(tables.rule_lhs, dtype=np.int64), np.asarray(tables.rule_len, dtype=np.int64)
    rule = np.where(kinds == REDUCE, args, 0)
    # an action without its shift target: (kind, reduced nonterminal, length); the target is refined
    reduced = kinds == REDUCE
    # (kind, reduced nonterminal, length) as one int, then a dense code
    lhs_span, length_span = int(lhs.max(initial=0)) + 2, int(length.max(initial=0)) + 2
    key = ((kinds * lhs_span + np.where(reduced, lhs[rule], -1) + 1) * length_span
           + np.where(reduced, length[rule], -1) + 1)
    code = np.unique(key, return_inverse=True)[1].reshape(-1).astype(np.int64)
    target = np.where(kinds == SHIFT, args, -1)
    static = np.zeros(n, dtype=np.int64) if lexer_start is None else np.asarray(lexer_start, dtype=np.int64)
    state_class = _bisimulation(n, state, terminal, code, target, np.asarray(tables.goto, dtype=np.int64), static)
    terminal_class = _terminal_classes(n_t, state_class, state, terminal, code, target, ignored)
    members = _members(state_class)
    return LRQuotient(state_class, terminal_class,
                      _quotient_tables(tables, state_class, terminal_class, members, kinds, args, lhs, length),
                      members)


def _codes(rows: np.ndarray) -> np.ndarray:
    """A dense id per distinct row of `rows`."""
    if not len(rows):
        return np.zeros(0, dtype=np.int64)
    _, inverse = np.unique(rows, axis=0, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64)


def _bisimulation(n: int, state: np.ndarray, terminal: np.ndarray, code: np.ndarray, target: np.ndarray,
                  goto: np.ndarray, static: np.ndarray) -> np.ndarray:
    """Moore refinement of the states, starting from `static` (equal states must have equal values
    there): a state's signature is its class, its actions ((terminal, code, target's class), sorted)
    and its gotos' classes. Classes are numbered by their first member."""
    block = _first_member_numbering(static)
    # actions and gotos as one sparse list of (state, symbol, code, target): a goto is symbol
    # n_terminals + nonterminal with code -1; each state's entries sorted
    goto_state, nonterminal = np.nonzero(goto >= 0)
    symbols = int(terminal.max(initial=-1)) + 1
    state = np.concatenate([state, goto_state])
    symbol = np.concatenate([terminal, symbols + nonterminal])
    code = np.concatenate([code, np.full(len(goto_state), -1, dtype=np.int64)])
    target = np.concatenate([target, goto[goto_state, nonterminal]])
    order = np.lexsort((target, code, symbol, state))
    state, symbol, code, target = state[order], symbol[order], code[order], target[order]
    starts = np.searchsorted(state, np.arange(n + 1))
    codes = int(code.max(initial=0)) + 2
    while True:
        mapped = np.where(target >= 0, block[np.maximum(target, 0)], -1)
        entry = (symbol * codes + code + 1) * (n + 1) + mapped + 1      # one int per (symbol, code, class)
        signature = np.stack([block, _row_ids(entry, starts)], axis=1)
        refined = _first_member_numbering(_codes(signature))
        if refined.max(initial=-1) == block.max(initial=-1):
            return refined
        block = refined


def _row_ids(keys: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per state, a dense id of its list of keys (keys[starts[p]:starts[p + 1]])."""
    lists: dict[bytes, int] = {}
    out = np.empty(len(starts) - 1, dtype=np.int64)
    for p, (lo, hi) in enumerate(zip(starts[:-1].tolist(), starts[1:].tolist())):
        out[p] = lists.setdefault(keys[lo:hi].tobytes(), len(lists))
    return out


def _first_member_numbering(values: np.ndarray) -> np.ndarray:
    """Equal values -> one class, numbered in the order of their first member."""
    _, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inverse.reshape(-1)]


def _terminal_classes(n_t: int, state_class: np.ndarray, state: np.ndarray, terminal: np.ndarray, code: np.ndarray,
                      target: np.ndarray, ignored: Sequence[int]) -> np.ndarray:
    """Terminals with the same column under the state classes (every state of a class has the same
    actions on a terminal, so a column is the set of (state class, code, target class)); ignored
    terminals and END are classed apart from the others; END's class is the last."""
    mapped = np.where(target >= 0, state_class[np.maximum(target, 0)], -1)
    columns: list[set[tuple[int, int, int]]] = [set() for _ in range(n_t)]
    for t, s, c, m in zip(terminal.tolist(), state_class[state].tolist(), code.tolist(), mapped.tolist()):
        columns[t].add((s, c, m))
    ignored_set = {int(t) for t in ignored}
    end = n_t - 1
    keys: dict[tuple, int] = {}
    raw = [keys.setdefault((t == end, t in ignored_set, tuple(sorted(columns[t]))), len(keys)) for t in range(n_t)]
    raw_end = raw[end]
    # renumber: by first member, END's class moved to the end
    order = sorted(set(raw), key=lambda k: (k == raw_end, raw.index(k)))
    new = {k: i for i, k in enumerate(order)}
    return np.asarray([new[k] for k in raw], dtype=np.int64)


def _members(state_class: np.ndarray) -> tuple[np.ndarray, ...]:
    order = np.argsort(state_class, kind="stable")
    bounds = np.searchsorted(state_class[order], np.arange(int(state_class.max(initial=-1)) + 2))
    return tuple(order[bounds[k]:bounds[k + 1]] for k in range(len(bounds) - 1))


def _quotient_tables(tables: LRTables, state_class: np.ndarray, terminal_class: np.ndarray,
                     members: tuple[np.ndarray, ...], kinds: np.ndarray, args: np.ndarray, lhs: np.ndarray,
                     length: np.ndarray) -> LRTables:
    """The tables of the classes, read off each class's first member and each terminal class's first
    member; one rule per (left-hand side, length)."""
    n_tk = int(terminal_class.max(initial=-1)) + 1
    first_terminal = np.full(n_tk, -1, dtype=np.int64)
    for t in reversed(range(len(terminal_class))):
        first_terminal[terminal_class[t]] = t
    pairs, rule_of = np.unique(np.stack([lhs, length], axis=1), axis=0, return_inverse=True)
    rule_of = rule_of.reshape(-1)
    firsts = np.asarray([int(m[0]) for m in members], dtype=np.int64)
    # the representative real cell of each quotient cell (class k, terminal class tk), row-major
    real = (firsts[:, None] * tables.n_terminals + first_terminal[None, :]).reshape(-1)
    offsets = np.asarray(tables.action_offsets, dtype=np.int64)
    counts = offsets[real + 1] - offsets[real]
    cell = np.repeat(np.arange(len(real), dtype=np.int64), counts)
    at = row_positions(offsets[real], counts)
    kind, arg = kinds[at], args[at]
    mapped = np.where(kind == SHIFT, state_class[np.where(kind == SHIFT, arg, 0)],
                      np.where(kind == REDUCE, rule_of[np.where(kind == REDUCE, arg, 0)], arg))
    packed = kind | (mapped << 2)
    order = np.lexsort((packed, cell))
    cell, packed = cell[order], packed[order]
    keep = np.ones(len(cell), dtype=bool)
    keep[1:] = (cell[1:] != cell[:-1]) | (packed[1:] != packed[:-1])   # equal reductions once
    cell, packed = cell[keep], packed[keep]
    new_offsets = np.zeros(len(real) + 1, dtype=np.int64)
    new_offsets[1:] = np.cumsum(np.bincount(cell, minlength=len(real)))
    goto = np.asarray(tables.goto, dtype=np.int64)[firsts]
    goto = np.where(goto >= 0, state_class[np.maximum(goto, 0)], -1)
    return LRTables(n_terminals=n_tk, action_offsets=new_offsets.astype(np.int32), actions=packed.astype(np.int32),
                    goto=goto.astype(np.int32), rule_lhs=pairs[:, 0].astype(np.int32),
                    rule_len=pairs[:, 1].astype(np.int32))
