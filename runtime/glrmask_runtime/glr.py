"""The only GLR driver: LR tables with conflict sets over a persistent graph-structured stack (GSS).

Input: `LRTables` (rules non-empty, so every reduction pops at least one state). Output: immutable
`GSSNode` DAGs; a call never mutates its input, so copy/rollback are free for callers.
Algorithm: Tomita-style GLR. Per terminal, the tops are unfrozen into one mutable entry per LR state;
reductions are driven by newly added (entry, parent) edges, so an edge added to an entry whose
reductions already ran is still reduced through (the classic GSS bug); then shifts, merging new
tops by state. Stacks per call are therefore bounded by the number of LR states.
Most steps need none of that merging. Three tiers, each handing over to the next when it cannot
decide: the single step (one stack, one terminal, every cell on the way a lone action, every popped
cell with one parent); the linear step, which follows every action of every path (conflict cells
included) as a separate branch within `LINEAR_ACTIONS` exposed nodes, then merges the tops that
meet; and the general step. Where no tops meet, all three give the same interned cells.
Cells are interned per parser (`GLRParser.cell`): equal (state, parents) is one object, so equal
stacks are the same cells wherever and whenever they were made, and what is computed from stacks
(the matcher's masks, `StackMemo`) can be remembered by them. So are the parser's own steps: what
the single step cannot decide is remembered by (stacks, terminals), at most `MAX_STEPS` of them,
and a step met again, in any request, is a dict probe.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator, Sequence
from typing import Final, Literal

import numpy as np

from glrmask_runtime.bounded import BoundedCache
from glrmask_runtime.tables import ACCEPT, REDUCE, SHIFT, LRTables, unpack_action

MAX_INTERNED = 1 << 16    # interned stack cells per parser (about 13 MB), the oldest evicted past it
LINEAR_ACTIONS = 64       # reductions the linear step follows per terminal before the general step takes over
MAX_STEPS = 1 << 14       # remembered steps per parser (about 4 MB besides the cells), the oldest evicted past it


class GSSNode:
    """One stack cell: an LR state and the cells below it (parents; () = bottom of the stack)."""

    __slots__ = ("state", "parents")

    def __init__(self, state: int, parents: tuple[GSSNode, ...] = ()) -> None:
        self.state = state
        self.parents = parents

    def __repr__(self) -> str:
        return f"GSSNode({self.state}, {len(self.parents)} parents)"


class _Fallback(enum.Enum):
    """A tier could not decide alone (a conflict, a shared path, branches that meet): take the next one."""

    FALLBACK = 0


_FALLBACK: Final = _Fallback.FALLBACK


class GLRParser:
    """GLR steps over `tables`. Cells are decoded into Python tuples when first used, once."""

    def __init__(self, tables: LRTables) -> None:
        self.n_terminals = int(tables.n_terminals)
        self.end = self.n_terminals - 1
        self._cells = _Cells(tables)
        self._goto = _GotoRows(np.asarray(tables.goto))
        bottom = GSSNode(0, ())
        self._bottom = (bottom,)
        self._interned: BoundedCache[tuple[int, tuple[GSSNode, ...]], GSSNode] = BoundedCache(MAX_INTERNED)
        self._interned.put((0, ()), bottom)
        self._steps: BoundedCache[tuple[tuple[GSSNode, ...], tuple[int, ...]], tuple[GSSNode, ...]] = \
            BoundedCache(MAX_STEPS)

    def cell(self, state: int, parents: tuple[GSSNode, ...]) -> GSSNode:
        """The stack cell (state, parents): the same object for the same state over the same parent
        cells (at most `MAX_INTERNED` kept, the oldest evicted; an evicted cell only makes equal stacks
        made later distinct objects)."""
        key = (state, parents)
        found = self._interned.get(key)
        if found is None:
            found = GSSNode(state, parents)
            self._interned.put(key, found)
        return found

    # ---- public API -----------------------------------------------------------------------------

    def initial(self) -> tuple[GSSNode, ...]:
        """The stacks before any input: the start state alone."""
        return self._bottom

    def shift(self, stacks: tuple[GSSNode, ...], terminals: Sequence[int]) -> tuple[GSSNode, ...]:
        """All stacks after reading one of `terminals` (reductions, then the shift); () if none survives."""
        if len(stacks) == 1 and len(terminals) == 1:
            node = self._step_single(stacks[0], terminals[0], False)
            if node is not _FALLBACK:
                return () if node is None else (node,)
        key = (stacks, tuple(terminals))
        known = self._steps.get(key)
        if known is not None:
            return known
        shifted = self._linear_shift(stacks, terminals)
        found = self._general_shift(stacks, terminals) if shifted is _FALLBACK else shifted
        self._steps.put(key, found)
        return found

    def forget_steps(self) -> None:
        """Empty the remembered steps (benchmarks replaying the same input do, for the same work)."""
        self._steps.clear()

    def can_shift(self, stacks: tuple[GSSNode, ...], terminal: int) -> bool:
        """True iff some stack can reduce and then shift `terminal`."""
        if len(stacks) == 1:
            node = self._step_single(stacks[0], terminal, False)
            if node is not _FALLBACK:
                return node is not None
        return any(cell[0] for cell in self._cells_reached(stacks, terminal))

    def accepts_end(self, stacks: tuple[GSSNode, ...]) -> bool:
        """True iff END (end of input) reaches ACCEPT on some stack."""
        if len(stacks) == 1:
            node = self._step_single(stacks[0], self.end, True)
            if node is not _FALLBACK:
                return node is not None
        return any(cell[2] for cell in self._cells_reached(stacks, self.end))

    def expected_terminals(self, stacks: tuple[GSSNode, ...]) -> list[int]:
        """Terminal ids (END included) that some stack can take next; for error messages."""
        found = [t for t in range(self.end) if self.can_shift(stacks, t)]
        if self.accepts_end(stacks):
            found.append(self.end)
        return found

    # ---- internals ------------------------------------------------------------------------------

    def _step_single(self, node: GSSNode, t: int, want_accept: bool) -> GSSNode | None | Literal[_Fallback.FALLBACK]:
        """Deterministic fast path: the new top, None if dead, _FALLBACK on a conflict or a shared path.

        With `want_accept` (t = END), returns a truthy object iff ACCEPT is reached.
        """
        cells, goto, n_t = self._cells, self._goto, self.n_terminals
        # the top: `node` itself until a reduction, then the cell (state, (under,)), made only if it
        # stays (a chain of reductions pops most of the cells it would push)
        state, under = node.state, None
        while True:
            cell = cells[state * n_t + t]
            if cell is None:
                return None
            shifts, reduces, accept = cell
            if accept and want_accept:
                return node if under is None else self.cell(state, (under,))
            if len(shifts) + len(reduces) != 1:
                return _FALLBACK if (shifts or reduces) else None
            if shifts:
                if want_accept:
                    return None
                return self.cell(shifts[0], (node if under is None else self.cell(state, (under,)),))
            nt, length = reduces[0]
            exposed = node
            if under is not None:        # popping the unmade top exposes its one parent
                exposed, length = under, length - 1
            for _ in range(length):
                parents = exposed.parents
                if len(parents) != 1:
                    return _FALLBACK
                exposed = parents[0]
            state, under = goto[exposed.state][nt], exposed

    def _linear_tops(self, stacks: tuple[GSSNode, ...], t: int) -> list[_Top] | _Fallback:
        """Every top that reductions on lookahead `t` reach and whose cell shifts or accepts, each
        stack path followed on its own: (state, cell, node, reduced), where a reduced top is the cell
        (state, (node,)) not made yet and any other top is `node` itself. _FALLBACK past
        `LINEAR_ACTIONS` exposed nodes (which also ends the cycles of a cyclic grammar)."""
        cells, goto, n_t = self._cells, self._goto, self.n_terminals
        budget = LINEAR_ACTIONS
        tops: list[_Top] = []
        todo: list[tuple[int, GSSNode, bool]] = [(node.state, node, False) for node in stacks]
        while todo:
            state, node, reduced = todo.pop()
            cell = cells[state * n_t + t]
            if cell is None:
                continue
            if cell[0] or cell[2]:
                tops.append((state, cell, node, reduced))
            for nt, length in cell[1]:
                if reduced:
                    length -= 1                  # the reduced top's only parent is `node`
                below = node
                while length and len(below.parents) == 1:
                    below = below.parents[0]
                    length -= 1
                level = _nodes_below(below, length) if length else (below,)
                budget -= len(level)
                if budget < 0:
                    return _FALLBACK
                for exposed in level:
                    todo.append((goto[exposed.state][nt], exposed, True))
        return tops

    def _cells_reached(self, stacks: tuple[GSSNode, ...], t: int) -> list[Cell]:
        """The cells that shift or accept of every top that reductions on lookahead `t` reach."""
        tops = self._linear_tops(stacks, t)
        if tops is not _FALLBACK:
            return [top[1] for top in tops]
        cells, n_t = self._cells, self.n_terminals
        return [cell for state in self._reduce_all(stacks, t) if (cell := cells[state * n_t + t]) is not None]

    def _linear_shift(self, stacks: tuple[GSSNode, ...],
                      terminals: Sequence[int]) -> tuple[GSSNode, ...] | _Fallback:
        """`shift` from the linear step's tops: per terminal the tops of one state merged into one cell
        (their parents), new tops merged by state, sorted by state. Where no two tops meet, these are
        the general step's own interned cells; _FALLBACK where `_linear_tops` gives up."""
        onto: dict[int, dict[int, GSSNode]] = {}
        for t in terminals:
            tops = self._linear_tops(stacks, t)
            if tops is _FALLBACK:
                return _FALLBACK
            meeting: dict[int, tuple[tuple[int, ...], list[tuple[GSSNode, bool]]]] = {}
            for state, (shifts, _, _), node, reduced in tops:
                if shifts:
                    meeting.setdefault(state, (shifts, []))[1].append((node, reduced))
            for state, (shifts, branches) in meeting.items():
                top = self._merged_top(state, branches)
                for target in shifts:
                    onto.setdefault(target, {})[id(top)] = top
        return self._new_tops(onto)

    def _merged_top(self, state: int, branches: list[tuple[GSSNode, bool]]) -> GSSNode:
        """One cell for the tops of `state` that several branches reached (a reduced top's only parent
        is its node; another top is its node itself, so its parents are the node's)."""
        if len(branches) == 1:
            node, reduced = branches[0]
            return self.cell(state, (node,)) if reduced else node
        parents: dict[int, GSSNode] = {}
        for node, reduced in branches:
            for parent in (node,) if reduced else node.parents:
                parents.setdefault(id(parent), parent)
        return self.cell(state, tuple(parents.values()))

    def _general_shift(self, stacks: tuple[GSSNode, ...], terminals: Sequence[int]) -> tuple[GSSNode, ...]:
        """Tomita's step: tops of one state merged per terminal, new tops merged by state."""
        onto: dict[int, dict[int, GSSNode]] = {}
        cells, n_t = self._cells, self.n_terminals
        for t in terminals:
            for state, entry in self._reduce_all(stacks, t).items():
                cell = cells[state * n_t + t]
                if cell is None or not cell[0]:
                    continue
                frozen = entry.freeze(state, self.cell)
                for target in cell[0]:
                    onto.setdefault(target, {})[id(frozen)] = frozen
        return self._new_tops(onto)

    def _new_tops(self, onto: dict[int, dict[int, GSSNode]]) -> tuple[GSSNode, ...]:
        """The shifted cells: per target state, one cell over the tops shifted onto it, by state."""
        return tuple(self.cell(target, tuple(parents.values())) for target, parents in sorted(onto.items()))

    def _reduce_all(self, stacks: tuple[GSSNode, ...], t: int) -> dict[int, _Entry]:
        """Unfreeze the tops into entries (one per state) and run every reduction on lookahead t."""
        entries: dict[int, _Entry] = {}
        work: list[tuple[int, GSSNode]] = []
        for node in stacks:
            entry = entries.get(node.state)
            if entry is None:
                entry = entries[node.state] = _Entry(node)
            else:
                entry.origin = None
            for parent in node.parents:
                if entry.add(parent):
                    work.append((node.state, parent))
        cells, goto, n_t = self._cells, self._goto, self.n_terminals
        while work:
            state, parent = work.pop()
            cell = cells[state * n_t + t]
            if cell is None:
                continue
            for nt, length in cell[1]:
                for exposed in _nodes_below(parent, length - 1):
                    target = goto[exposed.state][nt]
                    entry = entries.get(target)
                    if entry is None:
                        entry = entries[target] = _Entry(None)
                    if entry.add(exposed):
                        entry.origin = None
                        work.append((target, exposed))
        return entries


Cell = tuple[tuple[int, ...], tuple[tuple[int, int], ...], bool]
_Top = tuple[int, Cell, GSSNode, bool]


class _Cells(dict[int, Cell | None]):
    """Cell index (state * n_terminals + terminal) -> (shift targets, (nonterminal, length) per
    reduction, accept), or None for an error cell; decoded when first looked up. Decoding all of
    them at load took most of a load and a per-process dict of a million cells (sql.lark); a
    decoding run touches a few thousand. Cells with the same single action share one tuple."""

    def __init__(self, tables: LRTables) -> None:
        super().__init__()
        self._offsets = tables.action_offsets
        self._actions = tables.actions
        self._lhs, self._length = tables.rule_lhs.tolist(), tables.rule_len.tolist()
        self._single: dict[int, Cell] = {}

    def __missing__(self, cell: int) -> Cell | None:
        lo, hi = int(self._offsets[cell]), int(self._offsets[cell + 1])
        found: Cell | None
        if hi == lo:
            found = None
        elif hi == lo + 1:
            action = int(self._actions[lo])
            found = self._single.get(action)
            if found is None:
                found = self._single[action] = _decode_cell([action], self._lhs, self._length)
        else:
            found = _decode_cell(self._actions[lo:hi].tolist(), self._lhs, self._length)
        self[cell] = found
        return found


class _GotoRows(dict[int, dict[int, int]]):
    """LR state -> its goto row (nonterminal -> target) as a dict, made when a reduction first
    exposes the state (sql.lark: 12,596 rows of 200+ nonterminals; building them all took most of
    a load)."""

    def __init__(self, table: np.ndarray) -> None:
        super().__init__()
        self._table = table

    def __missing__(self, state: int) -> dict[int, int]:
        found = self._table[state]
        (columns,) = np.nonzero(found >= 0)
        row = self[state] = dict(zip(columns.tolist(), found[columns].tolist()))
        return row


def _decode_cell(packed: list[int], lhs: list[int], length: list[int]) -> tuple[tuple[int, ...],
                                                                             tuple[tuple[int, int], ...], bool]:
    """A cell's packed actions as (shift targets, (nonterminal, length) per reduction, accept)."""
    shifts, reduces, accept = [], [], False
    for action in packed:
        kind, arg = unpack_action(action)
        if kind == SHIFT:
            shifts.append(arg)
        elif kind == REDUCE:
            reduces.append((lhs[arg], length[arg]))
        elif kind == ACCEPT:
            accept = True
    return tuple(shifts), tuple(reduces), accept


class _Entry:
    """A mutable top during one terminal's reductions; frozen into a GSSNode for the shift."""

    __slots__ = ("origin", "parents", "seen", "node")

    def __init__(self, origin: GSSNode | None) -> None:
        self.origin = origin          # the input node, if the entry is exactly it (reuse, no copy)
        self.parents: list[GSSNode] = []
        self.seen: set[int] = set()
        self.node: GSSNode | None = None

    def add(self, parent: GSSNode) -> bool:
        key = id(parent)
        if key in self.seen:
            return False
        self.seen.add(key)
        self.parents.append(parent)
        return True

    def freeze(self, state: int, cell: Callable[[int, tuple[GSSNode, ...]], GSSNode]) -> GSSNode:
        if self.node is None:
            self.node = self.origin if self.origin is not None else cell(state, tuple(self.parents))
        return self.node


def _nodes_below(node: GSSNode, depth: int) -> list[GSSNode]:
    """The distinct nodes exactly `depth` parent steps below `node`."""
    level = [node]
    for _ in range(depth):
        if len(level) == 1 and len(level[0].parents) == 1:
            level = [level[0].parents[0]]
            continue
        below: dict[int, GSSNode] = {}
        for n in level:
            for parent in n.parents:
                below[id(parent)] = parent
        level = list(below.values())
    return level


def iter_paths(stacks: Sequence[GSSNode], limit: int = 1000) -> Iterator[tuple[int, ...]]:
    """Concrete stacks (states top first, bottom last) of a GSS, at most `limit` of them; for tests/debugging."""
    count = 0
    todo: list[tuple[GSSNode, tuple[int, ...]]] = [(node, (node.state,)) for node in reversed(stacks)]
    while todo and count < limit:
        node, path = todo.pop()
        if not node.parents:
            count += 1
            yield path
            continue
        for parent in reversed(node.parents):
            todo.append((parent, path + (parent.state,)))
