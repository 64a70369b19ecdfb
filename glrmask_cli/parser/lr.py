"""Stage 3: normalized CFG -> canonical LR(1) tables with every conflict kept (for GLR).

Canonical LR(1) (Knuth's item sets with per-item lookaheads, no state merging), not LALR: a state
reduces only on lookaheads that can really follow, so `ACTION[top, t]` non-empty already means that t
can be consumed from every stack with that top (the correct-prefix property). The Parser DWA relies on
it: the last terminal of a token needs only the top state, not the reductions below. Policy: no
conflict is resolved; a (state, terminal) cell keeps all its actions and `LRBuild.conflicts` records
each multi-action cell. ACCEPT sits on END in goto(0, start) (and in state 0 if the grammar accepts
the empty string). Rules must be non-empty (normalization guarantees it), so nothing is nullable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from glrmask_cli.parser.cfg import CFG
from glrmask_runtime.tables import ACCEPT, REDUCE, SHIFT, LRTables, pack_action, unpack_action


@dataclass(frozen=True)
class Conflict:
    lr_state: int
    terminal_id: int
    actions: tuple[int, ...]       # packed actions, sorted


@dataclass(frozen=True)
class LRBuild:
    """The tables plus what `inspect` and error messages need."""

    tables: LRTables
    cfg: CFG
    kernels: tuple[tuple[tuple[int, int], ...], ...]   # per LR state: kernel item cores (rule id, dot)
    conflicts: tuple[Conflict, ...]

    def describe_action(self, action: int) -> str:
        kind, arg = unpack_action(action)
        if kind == SHIFT:
            return f"shift {arg}"
        if kind == ACCEPT:
            return "accept"
        rule = self.cfg.rules[arg]
        return f"reduce {self.cfg.name(rule.lhs)} -> {' '.join(self.cfg.name(s) for s in rule.rhs)}"

    def describe_state(self, state: int) -> str:
        """The state's kernel items (`object -> "{" . members "}"; ...`), for `inspect --why`."""
        return "; ".join(self.describe_item(rule, dot) for rule, dot in self.kernels[state])

    def describe_item(self, rule_id: int, dot: int) -> str:
        if rule_id == len(self.cfg.rules):
            rhs = [self.cfg.name(self.cfg.start)]
            return f"$start -> {'. ' if dot == 0 else ''}{rhs[0]}{' .' if dot else ''}"
        rule = self.cfg.rules[rule_id]
        names = [self.cfg.name(s) for s in rule.rhs]
        names.insert(dot, ".")
        return f"{self.cfg.name(rule.lhs)} -> {' '.join(names)}"


def build_lr_tables(grammar: Any) -> LRTables:
    """Canonical LR(1) tables of `grammar` (a NormalizedGrammar: `.cfg`, `.accepts_empty`)."""
    return build_lr(grammar).tables


def build_lr(grammar: Any) -> LRBuild:
    """Canonical LR(1) automaton of a NormalizedGrammar, with its kernel cores and recorded conflicts."""
    cfg: CFG = grammar.cfg
    _validate_cfg(cfg)
    automaton = _LR1(cfg)
    cells, actions = _action_cells(automaton, bool(grammar.accepts_empty))
    tables = _pack_tables(cfg, automaton, cells, actions)
    conflicts = _conflicts(cells, actions, cfg.n_terminals)
    cores = tuple(automaton.cores(s) for s in range(len(automaton.kernels)))
    return LRBuild(tables, cfg, cores, conflicts)


def terminal_followers(lr: LRTables) -> Callable[[int], set[int]]:
    """`followers(a)`: the terminals that can come right after terminal `a` in some sentence.

    Exact for canonical LR(1): every terminal with an action in the state after shifting `a` can be
    shifted there eventually (lookaheads are never spurious); computed per terminal on demand.
    """
    n_t = lr.n_terminals
    counts = np.diff(lr.action_offsets)
    has_action = (counts > 0).reshape(-1, n_t)
    cell = np.repeat(np.arange(counts.size), counts)
    is_shift = (lr.actions & 3) == SHIFT
    shifted, target = cell[is_shift] % n_t, lr.actions[is_shift] >> 2

    def followers(a: int) -> set[int]:
        return set(np.flatnonzero(has_action[target[shifted == a]].any(axis=0)).tolist())

    return followers


def _validate_cfg(cfg: CFG) -> None:
    # A bug upstream (normalize), not a user error: empty rules break GLR and stack effects.
    for i, rule in enumerate(cfg.rules):
        if not rule.rhs:
            raise ValueError(f"rule {i} ({cfg.name(rule.lhs)}) is empty; normalize the grammar first")
        if cfg.end in rule.rhs:
            raise ValueError(f"rule {i} uses $END on its right-hand side")


class _LR1:
    """Canonical LR(1) item sets. A kernel item is (rule id, dot, lookahead bitset), one per (rule, dot);
    rule id len(rules) is the augmented $start -> start. States are equal iff their kernels are."""

    def __init__(self, cfg: CFG) -> None:
        self.cfg = cfg
        self.n_t = cfg.n_terminals
        self.rhs = [r.rhs for r in cfg.rules] + [(cfg.start,)]
        self.rules_of: dict[int, list[int]] = {}
        for i, rule in enumerate(cfg.rules):
            self.rules_of.setdefault(rule.lhs, []).append(i)
        self.first = self._first_sets()
        self.kernels: list[tuple[tuple[int, int, int], ...]] = []
        self.transitions: list[dict[int, int]] = []   # state -> {symbol: state}
        self._build()

    def _first_sets(self) -> dict[int, int]:
        """FIRST of each nonterminal as a terminal bitset (rules are non-empty, nothing is nullable)."""
        first = {a: 0 for a in self.rules_of}
        changed = True
        while changed:
            changed = False
            for a in sorted(self.rules_of):
                bits = first[a]
                for r in self.rules_of[a]:
                    bits |= self._first_of(self.rhs[r][0], first)
                if bits != first[a]:
                    first[a], changed = bits, True
        return first

    def _first_of(self, symbol: int, first: dict[int, int] | None = None) -> int:
        return 1 << symbol if symbol < self.n_t else (first if first is not None else self.first)[symbol]

    def _build(self) -> None:
        start_kernel = ((len(self.cfg.rules), 0, 1 << self.cfg.end),)
        index: dict[tuple[tuple[int, int, int], ...], int] = {start_kernel: 0}
        self.kernels.append(start_kernel)
        state = 0
        while state < len(self.kernels):
            by_symbol: dict[int, dict[tuple[int, int], int]] = {}
            for rule, dot, look in self._closure(self.kernels[state]):
                rhs = self.rhs[rule]
                if dot < len(rhs):
                    moved = by_symbol.setdefault(rhs[dot], {})
                    moved[(rule, dot + 1)] = moved.get((rule, dot + 1), 0) | look
            moves = {}
            for symbol in sorted(by_symbol):
                kernel = tuple(sorted((r, d, look) for (r, d), look in by_symbol[symbol].items()))
                target = index.get(kernel)
                if target is None:
                    target = index[kernel] = len(self.kernels)
                    self.kernels.append(kernel)
                moves[symbol] = target
            self.transitions.append(moves)
            state += 1

    def _closure(self, kernel: tuple[tuple[int, int, int], ...]) -> list[tuple[int, int, int]]:
        """Kernel items plus (rule, 0, lookaheads) for every nonterminal after a dot; the lookaheads of
        all of B's items are the same, so they are computed per nonterminal to a fixed point."""
        looks: dict[int, int] = {}
        todo: list[int] = []

        def add(nonterminal: int, bits: int) -> None:
            old = looks.get(nonterminal, 0)
            if old | bits != old:
                looks[nonterminal] = old | bits
                todo.append(nonterminal)

        for rule, dot, look in kernel:
            rhs = self.rhs[rule]
            if dot < len(rhs) and rhs[dot] >= self.n_t:
                add(rhs[dot], self._first_of(rhs[dot + 1]) if dot + 1 < len(rhs) else look)
        while todo:
            nonterminal = todo.pop()
            for r in self.rules_of.get(nonterminal, ()):
                rhs = self.rhs[r]
                if rhs[0] >= self.n_t:
                    add(rhs[0], self._first_of(rhs[1]) if len(rhs) > 1 else looks[nonterminal])
        items = list(kernel)
        for nonterminal in sorted(looks):
            items.extend((r, 0, looks[nonterminal]) for r in self.rules_of[nonterminal])
        return items

    def cores(self, state: int) -> tuple[tuple[int, int], ...]:
        return tuple((rule, dot) for rule, dot, _ in self.kernels[state])

    def complete_items(self, state: int) -> list[tuple[int, int]]:
        """(rule id, lookahead bitset) of the items with the dot at the end (kernel items only: rules
        are non-empty)."""
        return [(r, look) for r, dot, look in self.kernels[state] if dot == len(self.rhs[r])]


def _action_cells(lr1: _LR1, accepts_empty: bool) -> tuple[np.ndarray, np.ndarray]:
    """Every (cell, action) pair once, sorted by cell then action: cells as state * n_terminals +
    terminal, actions packed. A complete item's lookahead bitset is read with numpy (3,000 keywords:
    3,000-bit sets on most items)."""
    cfg = lr1.cfg
    n_t = cfg.n_terminals
    cells: list[np.ndarray] = []
    actions: list[np.ndarray] = []
    width = (n_t + 7) // 8
    for state, moves in enumerate(lr1.transitions):
        shifts = [(symbol, target) for symbol, target in moves.items() if symbol < n_t]
        if shifts:
            symbols, targets = np.asarray(shifts, dtype=np.int64).T
            cells.append(state * n_t + symbols)
            actions.append(np.asarray(pack_action(SHIFT, targets), dtype=np.int64))
        for rule, bits in lr1.complete_items(state):
            if rule == len(cfg.rules):
                cells.append(np.asarray([state * n_t + cfg.end], dtype=np.int64))
                actions.append(np.asarray([pack_action(ACCEPT)], dtype=np.int64))
                continue
            lookaheads = np.flatnonzero(np.unpackbits(np.frombuffer(bits.to_bytes(width, "little"), dtype=np.uint8),
                                                      bitorder="little"))
            cells.append(state * n_t + lookaheads)
            actions.append(np.full(len(lookaheads), pack_action(REDUCE, rule), dtype=np.int64))
    if accepts_empty:
        cells.append(np.asarray([cfg.end], dtype=np.int64))
        actions.append(np.asarray([pack_action(ACCEPT)], dtype=np.int64))
    cell = np.concatenate(cells) if cells else np.zeros(0, dtype=np.int64)
    action = np.concatenate(actions) if actions else np.zeros(0, dtype=np.int64)
    pairs = np.unique(np.stack([cell, action], axis=1), axis=0)     # sorted by cell, then action
    return pairs[:, 0], pairs[:, 1]


def _conflicts(cells: np.ndarray, actions: np.ndarray, n_terminals: int) -> tuple[Conflict, ...]:
    """The cells with more than one action, in cell order."""
    starts = np.flatnonzero(np.r_[True, cells[1:] != cells[:-1]]) if len(cells) else np.zeros(0, dtype=np.int64)
    ends = np.r_[starts[1:], len(cells)]
    return tuple(Conflict(int(cells[a]) // n_terminals, int(cells[a]) % n_terminals,
                          tuple(actions[a:b].tolist())) for a, b in zip(starts.tolist(), ends.tolist()) if b - a > 1)


def _pack_tables(cfg: CFG, lr1: _LR1, cells: np.ndarray, actions: np.ndarray) -> LRTables:
    n_t = cfg.n_terminals
    n_nt = len(cfg.nonterminal_names)
    n_states = len(lr1.kernels)
    offsets = np.zeros(n_states * n_t + 1, dtype=np.int32)
    np.cumsum(np.bincount(cells, minlength=n_states * n_t), out=offsets[1:])
    goto = np.full((n_states, n_nt), -1, dtype=np.int32)
    for state, moves in enumerate(lr1.transitions):
        for symbol, target in moves.items():
            if symbol >= n_t:
                goto[state, symbol - n_t] = target
    return LRTables(
        n_terminals=n_t,
        action_offsets=offsets,
        actions=actions.astype(np.int32),
        goto=goto,
        rule_lhs=np.asarray([r.lhs - n_t for r in cfg.rules], dtype=np.int32),
        rule_len=np.asarray([len(r.rhs) for r in cfg.rules], dtype=np.int32),
    )
