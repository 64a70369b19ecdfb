"""Stage 3a: normalized CFG -> LALR(1) tables with every conflict kept (for GLR).

LR(0) item sets, then LALR(1) lookaheads by DeRemer & Pennello, "Efficient Computation of LALR(1)
Look-Ahead Sets" (TOPLAS 1982): DR, includes and lookback relations, Follow via their `digraph`
(iterative SCC, so no recursion limit). Policy: no conflict is resolved; a (state, terminal) cell
keeps all its actions and `LRBuild.conflicts` records each multi-action cell. ACCEPT sits on END in
goto(0, start) (and in state 0 if the grammar accepts the empty string). Rules must be non-empty
(normalization guarantees it), so nothing is nullable and the `reads` relation is empty.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from glrmask_runtime.tables import ACCEPT, REDUCE, SHIFT, LRTables, pack_action, unpack_action

from glrmask_cli.parser.cfg import CFG


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
    kernels: tuple[tuple[tuple[int, int], ...], ...]   # per LR state: kernel items (rule id, dot)
    conflicts: tuple[Conflict, ...]

    def describe_action(self, action: int) -> str:
        kind, arg = unpack_action(action)
        if kind == SHIFT:
            return f"shift {arg}"
        if kind == ACCEPT:
            return "accept"
        rule = self.cfg.rules[arg]
        return f"reduce {self.cfg.name(rule.lhs)} -> {' '.join(self.cfg.name(s) for s in rule.rhs)}"

    def describe_item(self, rule_id: int, dot: int) -> str:
        if rule_id == len(self.cfg.rules):
            rhs = [self.cfg.name(self.cfg.start)]
            return f"$start -> {'. ' if dot == 0 else ''}{rhs[0]}{' .' if dot else ''}"
        rule = self.cfg.rules[rule_id]
        names = [self.cfg.name(s) for s in rule.rhs]
        names.insert(dot, ".")
        return f"{self.cfg.name(rule.lhs)} -> {' '.join(names)}"


def build_lr_tables(grammar: Any) -> LRTables:
    """LALR(1) tables of `grammar` (a NormalizedGrammar: `.cfg`, `.accepts_empty`)."""
    return build_lr(grammar).tables


def build_lr(grammar: Any) -> LRBuild:
    """LALR(1) automaton of a NormalizedGrammar, with its kernels and recorded conflicts."""
    cfg: CFG = grammar.cfg
    _validate_cfg(cfg)
    automaton = _LR0(cfg)
    lookaheads = _lalr_lookaheads(automaton)
    cells = _action_cells(automaton, lookaheads, bool(grammar.accepts_empty))
    tables = _pack_tables(cfg, automaton, cells)
    conflicts = tuple(Conflict(s, t, acts) for (s, t), acts in sorted(cells.items()) if len(acts) > 1)
    return LRBuild(tables, cfg, tuple(automaton.kernels), conflicts)


def _validate_cfg(cfg: CFG) -> None:
    # A bug upstream (normalize), not a user error: empty rules break GLR and stack effects.
    for i, rule in enumerate(cfg.rules):
        if not rule.rhs:
            raise ValueError(f"rule {i} ({cfg.name(rule.lhs)}) is empty; normalize the grammar first")
        if cfg.end in rule.rhs:
            raise ValueError(f"rule {i} uses $END on its right-hand side")


class _LR0:
    """LR(0) item sets. Items are (rule id, dot); rule id len(rules) is the augmented $start -> start."""

    def __init__(self, cfg: CFG) -> None:
        self.cfg = cfg
        n_t = cfg.n_terminals
        self.rhs = [r.rhs for r in cfg.rules] + [(cfg.start,)]
        self.rules_of: dict[int, list[int]] = {}
        for i, rule in enumerate(cfg.rules):
            self.rules_of.setdefault(rule.lhs, []).append(i)
        self.first_nts = self._closure_nonterminals(n_t)
        self.kernels: list[tuple[tuple[int, int], ...]] = []
        self.transitions: list[dict[int, int]] = []   # state -> {symbol: state}
        self._build()

    def _closure_nonterminals(self, n_t: int) -> dict[int, tuple[int, ...]]:
        """For each nonterminal A: the rule ids added by closing over an item `. A` (transitively)."""
        result: dict[int, tuple[int, ...]] = {}
        for a in sorted(self.rules_of):
            seen, todo = {a}, [a]
            while todo:
                for r in self.rules_of.get(todo.pop(), ()):
                    first = self.rhs[r][0]
                    if first >= n_t and first not in seen:
                        seen.add(first)
                        todo.append(first)
            result[a] = tuple(r for nt in sorted(seen) for r in self.rules_of.get(nt, ()))
        return result

    def _build(self) -> None:
        n_t = self.cfg.n_terminals
        start_kernel = ((len(self.cfg.rules), 0),)
        index = {start_kernel: 0}
        self.kernels.append(start_kernel)
        state = 0
        while state < len(self.kernels):
            by_symbol: dict[int, list[tuple[int, int]]] = {}
            for rule, dot in self._closure(self.kernels[state], n_t):
                rhs = self.rhs[rule]
                if dot < len(rhs):
                    by_symbol.setdefault(rhs[dot], []).append((rule, dot + 1))
            moves = {}
            for symbol in sorted(by_symbol):
                kernel = tuple(sorted(set(by_symbol[symbol])))
                target = index.get(kernel)
                if target is None:
                    target = index[kernel] = len(self.kernels)
                    self.kernels.append(kernel)
                moves[symbol] = target
            self.transitions.append(moves)
            state += 1

    def _closure(self, kernel: tuple[tuple[int, int], ...], n_t: int) -> list[tuple[int, int]]:
        items = list(kernel)
        added: set[int] = set()
        for rule, dot in kernel:
            rhs = self.rhs[rule]
            if dot < len(rhs) and rhs[dot] >= n_t:
                added.update(self.first_nts.get(rhs[dot], ()))
        items.extend((r, 0) for r in sorted(added))
        return items

    def complete_items(self, state: int) -> list[int]:
        """Rule ids with the dot at the end in `state` (only kernel items: rules are non-empty)."""
        return [r for r, dot in self.kernels[state] if dot == len(self.rhs[r])]

    def walk(self, state: int, symbols: tuple[int, ...]) -> int:
        for symbol in symbols:
            state = self.transitions[state][symbol]
        return state


def _lalr_lookaheads(lr0: _LR0) -> dict[tuple[int, int], int]:
    """(state, rule id) -> lookahead terminal bitset, for every completed item (DeRemer-Pennello)."""
    cfg = lr0.cfg
    n_t = cfg.n_terminals
    nt_trans = [(p, a) for p, moves in enumerate(lr0.transitions) for a in moves if a >= n_t]
    trans_id = {tr: i for i, tr in enumerate(nt_trans)}
    direct = []
    for p, a in nt_trans:
        bits = 0
        for symbol in lr0.transitions[lr0.transitions[p][a]]:
            if symbol < n_t:
                bits |= 1 << symbol
        if p == 0 and a == cfg.start:
            bits |= 1 << cfg.end            # $start -> start . $END
        direct.append(bits)
    includes: list[list[int]] = [[] for _ in nt_trans]
    lookback: dict[tuple[int, int], list[int]] = {}
    for i, (p, b) in enumerate(nt_trans):
        for r in lr0.rules_of.get(b, ()):
            rhs = lr0.rhs[r]
            q = p
            for k, symbol in enumerate(rhs):
                if symbol >= n_t and k == len(rhs) - 1:
                    includes[trans_id[(q, symbol)]].append(i)
                q = lr0.transitions[q][symbol]
            lookback.setdefault((q, r), []).append(i)
    follow = _digraph(direct, includes)
    result = {}
    for key, sources in lookback.items():
        bits = 0
        for i in sources:
            bits |= follow[i]
        result[key] = bits
    return result


def _digraph(initial: list[int], edges: list[list[int]]) -> list[int]:
    """F(x) = initial(x) | union of F(y) for x -> y: DeRemer-Pennello's `digraph`, made iterative.

    traverse(x): push x; N[x] = depth; for y in edges[x]: traverse(y) if unseen; N[x] = min(N[x], N[y]);
    F[x] |= F[y]; if N[x] is still x's depth, pop x's SCC, setting N = done and F = F[x] for all of it.
    """
    done = 1 << 62
    depth = [0] * len(initial)
    value = list(initial)
    stack: list[int] = []
    for root in range(len(initial)):
        if depth[root]:
            continue
        stack.append(root)
        depth[root] = len(stack)
        frames = [[root, 0, len(stack)]]
        while frames:
            frame = frames[-1]
            x, k = frame[0], frame[1]
            if k < len(edges[x]):
                frame[1] = k + 1
                y = edges[x][k]
                if depth[y] == 0:
                    stack.append(y)
                    depth[y] = len(stack)
                    frames.append([y, 0, len(stack)])
                    continue
                depth[x] = min(depth[x], depth[y])
                value[x] |= value[y]
                continue
            frames.pop()
            if depth[x] == frame[2]:
                while True:
                    top = stack.pop()
                    depth[top] = done
                    value[top] = value[x]
                    if top == x:
                        break
            if frames:
                parent = frames[-1][0]
                depth[parent] = min(depth[parent], depth[x])
                value[parent] |= value[x]
    return value


def _action_cells(lr0: _LR0, lookaheads: dict[tuple[int, int], int],
                  accepts_empty: bool) -> dict[tuple[int, int], tuple[int, ...]]:
    cfg = lr0.cfg
    n_t = cfg.n_terminals
    cells: dict[tuple[int, int], set[int]] = {}
    for state, moves in enumerate(lr0.transitions):
        for symbol, target in moves.items():
            if symbol < n_t:
                cells.setdefault((state, symbol), set()).add(pack_action(SHIFT, target))
        for rule in lr0.complete_items(state):
            if rule == len(cfg.rules):
                cells.setdefault((state, cfg.end), set()).add(pack_action(ACCEPT))
                continue
            bits = lookaheads.get((state, rule), 0)
            t = 0
            while bits:
                if bits & 1:
                    cells.setdefault((state, t), set()).add(pack_action(REDUCE, rule))
                bits >>= 1
                t += 1
    if accepts_empty:
        cells.setdefault((0, cfg.end), set()).add(pack_action(ACCEPT))
    return {key: tuple(sorted(acts)) for key, acts in cells.items()}


def _pack_tables(cfg: CFG, lr0: _LR0, cells: dict[tuple[int, int], tuple[int, ...]]) -> LRTables:
    n_t = cfg.n_terminals
    n_nt = len(cfg.nonterminal_names)
    n_states = len(lr0.kernels)
    counts = np.zeros(n_states * n_t, dtype=np.int64)
    flat: list[int] = []
    for (state, t), acts in sorted(cells.items()):
        counts[state * n_t + t] = len(acts)
        flat.extend(acts)
    offsets = np.zeros(n_states * n_t + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    goto = np.full((n_states, n_nt), -1, dtype=np.int32)
    for state, moves in enumerate(lr0.transitions):
        for symbol, target in moves.items():
            if symbol >= n_t:
                goto[state, symbol - n_t] = target
    return LRTables(
        n_terminals=n_t,
        action_offsets=offsets,
        actions=np.asarray(flat, dtype=np.int32),
        goto=goto,
        rule_lhs=np.asarray([r.lhs - n_t for r in cfg.rules], dtype=np.int32),
        rule_len=np.asarray([len(r.rhs) for r in cfg.rules], dtype=np.int32),
    )
