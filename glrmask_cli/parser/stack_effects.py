"""Stage 4: LR tables -> per-terminal stack effects (how consuming one terminal reads/rewrites the stack).

The LR automaton runs symbolically for terminal t over an unknown stack: the top is READ when needed
(branching over every state with an action on t), reductions pop written states first, then old
positions (ANY if never looked at), and the exposed old position is read for the goto (branching over
the states with that goto which can lie there below the nearest read state: stacks are LR paths). Every conflict
branches. An effect ends with the shift of t, or ACCEPT for END. Applying an effect to a stack that
matches `reads` removes the len(reads) - 1 topmost states and pushes `writes`. Deep operator-precedence
chains (sql.lark, python.lark) give millions of effects per terminal, so `build_effect_graphs` returns
each terminal's effects as one shared DAG, its size bounded by `max_nodes` (LimitExceeded, limit
max_effect_graph_nodes; the longest read path by limit max_read_depth). The flat list of effects,
the graphs' oracle in tests, is devtools/flat_stack_effects.py.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from glrmask_cli.errors import LimitExceeded
from glrmask_cli.limits import DEFAULTS
from glrmask_cli.progress import NO_PROGRESS, Progress, Ticker
from glrmask_runtime.tables import ACCEPT, REDUCE, SHIFT, LRTables, unpack_actions

ANY = -1
Config = tuple[tuple[int, ...], int, tuple[int, ...]]   # (reads, popped, writes) of a symbolic run
# an exposed old position: (the deepest concretely read state, the position's distance below it, the
# nonterminal reduced to, the positions popped past the reads without looking at them)
Exposure = tuple[int, int, int, int]
# The default limits under their former names, for devtools/flat_stack_effects.py (glrmask_cli/limits.py
# is the one home of the values; the compiler passes them down).
DEFAULT_MAX_CONFIGS = DEFAULTS.max_effect_graph_nodes
MAX_READ_DEPTH = DEFAULTS.max_read_depth


@dataclass(frozen=True, order=True)
class StackEffect:
    reads: tuple[int, ...]    # old-stack states, top first; ANY = popped without looking at it
    writes: tuple[int, ...]   # states pushed afterwards, bottom first (top last)

    def matches(self, stack: tuple[int, ...]) -> bool:
        """True iff `stack` (states, top first) agrees with `reads` (ANY matches anything)."""
        if len(stack) < len(self.reads):
            return False
        return all(r == ANY or r == s for r, s in zip(self.reads, stack))

    def apply(self, stack: tuple[int, ...]) -> tuple[int, ...]:
        """The stack (top first) after the effect; `stack` must match."""
        return tuple(reversed(self.writes)) + stack[len(self.reads) - 1:]


class _Explorer:
    """Symbolic LR runs. A configuration is (reads, popped, writes): reads of old positions so far
    (top first), how many old positions are popped, and the states written above them."""

    def __init__(self, tables: LRTables) -> None:
        self.n_t = tables.n_terminals
        self.end = self.n_t - 1
        # A cell's actions as (kind, shift target or reduced nonterminal, length), decoded with numpy
        # into one shared tuple per distinct action and looked up when a run needs the cell
        # (canonical LR(1) of 3,000 keywords: 1.8M actions, mostly the same reductions on each keyword).
        self._offsets = np.asarray(tables.action_offsets, dtype=np.int64)
        kinds, args = unpack_actions(tables.actions)
        rule = np.where(kinds == REDUCE, args, 0)
        fields = np.stack([kinds, np.where(kinds == REDUCE, np.asarray(tables.rule_lhs)[rule], args),
                           np.where(kinds == REDUCE, np.asarray(tables.rule_len)[rule], 0)], axis=1)
        distinct, inverse = np.unique(fields, axis=0, return_inverse=True)
        self._actions: list[tuple[int, int, int]] = [(k, a, n) for k, a, n in distinct.tolist()]
        self._code = inverse.reshape(-1)
        self._cells: dict[tuple[int, int], tuple[tuple[int, int, int], ...]] = {}
        cell_ids = np.flatnonzero(np.diff(self._offsets))        # the non-empty cells, in order
        cell_state, cell_terminal = np.divmod(cell_ids, self.n_t)
        by_terminal = np.argsort(cell_terminal, kind="stable")    # each terminal's cells, by state
        bounds = np.searchsorted(cell_terminal[by_terminal], np.arange(self.n_t + 1))
        self.states_with_action: list[list[int]] = [
            cell_state[by_terminal[bounds[t]:bounds[t + 1]]].tolist() for t in range(self.n_t)]   # ascending
        # columns (see `column`): a code per cell with shift targets left out, per terminal as bytes
        masked = np.where(kinds == SHIFT, -1, fields[:, 1])
        _, action_code = np.unique(np.stack([kinds, masked, fields[:, 2]], axis=1), axis=0, return_inverse=True)
        starts, counts = self._offsets[cell_ids], np.diff(self._offsets)[cell_ids]
        action_code = action_code.reshape(-1)
        cell_code = action_code[starts].astype(np.int64)
        conflicts: dict[tuple[int, ...], int] = {}             # cells with several actions: codes past those
        for c in np.flatnonzero(counts > 1).tolist():
            key = tuple(action_code[starts[c]:starts[c] + counts[c]].tolist())
            cell_code[c] = len(distinct) + conflicts.setdefault(key, len(conflicts))
        self._columns = [(cell_state[cells].tobytes(), cell_code[cells].tobytes())
                         for cells in (by_terminal[bounds[t]:bounds[t + 1]] for t in range(self.n_t))]
        shifts = np.flatnonzero(kinds == SHIFT)
        shift_cells = np.searchsorted(self._offsets, shifts, side="right") - 1
        shift_pairs = set(zip((shift_cells // self.n_t).tolist(), args[shifts].tolist()))
        self.goto = tables.goto.tolist()
        self.states_with_goto: list[list[int]] = [column.tolist() for column in
                                                  (np.flatnonzero(tables.goto[:, nt] >= 0)
                                                   for nt in range(tables.goto.shape[1]))]
        # pred[p]: states with a transition (shift or goto) into p, i.e. what can lie right below p
        self.pred: list[set[int]] = [set() for _ in range(tables.n_states)]
        for state, target in shift_pairs:
            self.pred[target].add(state)
        states, columns = np.nonzero(tables.goto >= 0)
        for state, target in zip(states.tolist(), tables.goto[states, columns].tolist()):
            self.pred[target].add(state)
        self._below_cache: dict[tuple[int, int], frozenset[int]] = {}
        self._exposed_configs: dict[Exposure, list[tuple[tuple[int, ...], tuple, Config]]] = {}
        self._shift_targets: dict[tuple[int, int], int] = {}

    def cell(self, state: int, t: int) -> tuple[tuple[int, int, int], ...]:
        """The actions of LR state `state` on terminal t (empty: none)."""
        found = self._cells.get((state, t))
        if found is None:
            i = state * self.n_t + t
            lo, hi = int(self._offsets[i]), int(self._offsets[i + 1])
            found = self._cells[(state, t)] = tuple(self._actions[c] for c in self._code[lo:hi].tolist())
        return found

    def column(self, t: int) -> tuple[bytes, bytes]:
        """What a run on terminal t reads of the tables: its actions in every state, shift targets
        left out (a shift ends the run), as a key. Terminals with equal columns have the same effect
        graph up to the state each final shift writes (1,000 keywords used in a few contexts: a few
        columns)."""
        return self._columns[t]

    def shift_target(self, state: int, t: int) -> int:
        found = self._shift_targets.get((state, t))
        if found is None:
            found = self._shift_targets[(state, t)] = next(arg for kind, arg, _ in self.cell(state, t) if kind == SHIFT)
        return found

    def _reduce(self, reads: tuple, popped: int, writes: tuple, nt: int, length: int) -> Config | Exposure | None:
        """The configuration after reducing `length` states to `nt` (None: no goto), or, where the
        reduction exposes an old position not read yet, its `Exposure` (the states that can lie
        there branch: `exposed_configs`)."""
        from_writes = min(length, len(writes))
        writes = writes[:len(writes) - from_writes]
        old = length - from_writes
        unread = 0
        if old:
            popped += old
            if len(reads) < popped:
                unread = popped - len(reads)
                reads = reads + (ANY,) * unread
        if writes or popped < len(reads):
            target = self.goto[writes[-1] if writes else reads[popped]][nt]
            return (reads, popped, writes + (target,)) if target >= 0 else None
        anchor = _last_read(reads)
        return (reads[anchor], popped - anchor, nt, unread)

    def exposed_configs(self, exposure: Exposure, shared: dict) -> list[tuple[tuple[int, ...], tuple, Config]]:
        """Per state p with a goto on the exposure's nonterminal that can lie at the exposed position
        (LR stacks are paths of the automaton), what its branch becomes, the same in every terminal's
        exploration: the edge's reads (the positions popped unread, then p; one object in `shared`),
        the `_canonical` key and configuration of having read p and written its goto. Made once per
        exposure (sympy's latex.lark: 9k distinct ones, met 137k times, each branching over up to a
        few hundred states)."""
        found = self._exposed_configs.get(exposure)
        if found is None:
            state, distance, nt, unread = exposure
            found = self._exposed_configs[exposure] = []
            for p, target in self.exposed(state, distance, nt):
                labels = (ANY,) * unread + (p,)
                found.append((shared.setdefault(labels, labels), ((target,), 0, p), ((p,), 0, (target,))))
        return found

    def exposed(self, state: int, distance: int, nt: int) -> list[tuple[int, int]]:
        """(p, its goto on nt) for the states p with a goto on nt that can lie `distance` positions
        below `state`."""
        allowed = self._below(state, distance)
        return [(p, self.goto[p][nt]) for p in self.states_with_goto[nt] if p in allowed]

    def successors(self, reads: tuple, popped: int, writes: tuple, nt: int, length: int) -> list[Config]:
        """Every configuration after reducing `length` states to `nt`, an exposure's branches spelled
        out (devtools/flat_stack_effects.py, the flat oracle, steps one configuration at a time)."""
        after = self._reduce(reads, popped, writes, nt, length)
        if after is None:
            return []
        if len(after) == 3:
            return [after]
        state, distance, nt, unread = after
        padded = reads + (ANY,) * unread
        return [(padded + (p,), len(padded), (target,)) for p, target in self.exposed(state, distance, nt)]

    def _below(self, state: int, distance: int) -> frozenset[int]:
        """States that can lie `distance` positions below `state` on a stack of the LR automaton."""
        key = (state, distance)
        found = self._below_cache.get(key)
        if found is None:
            if distance == 1:
                found = frozenset(self.pred[state])
            else:
                found = frozenset(q for p in self._below(state, distance - 1) for q in self.pred[p])
            self._below_cache[key] = found
        return found


@dataclass(frozen=True)
class EffectGraph:
    """One terminal's stack effects as a shared DAG (the flat list can be exponentially larger).

    A node is a symbolic configuration up to what decides its future: the written states and either
    the exposed old state or (nearest read state, distance). Paths spell effects: start at a root
    (reads = (top,)), append each edge's reads, and end at a node's `finals` entry (the writes).
    """

    terminal: int
    roots: tuple[tuple[int, int], ...]                           # (top state read first, node)
    edges: tuple[tuple[tuple[tuple[int, ...], int], ...], ...]   # per node: (reads appended, next node)
    finals: tuple[tuple[tuple[int, ...], ...], ...]              # per node: writes of effects ending here

    def iter_effects(self, max_read_depth: int = DEFAULTS.max_read_depth) -> Iterator[StackEffect]:
        """The flat effects (possibly many: for tests and small grammars)."""
        todo: list[tuple[tuple[int, ...], int]] = [((top,), node) for top, node in reversed(self.roots)]
        while todo:
            reads, node = todo.pop()
            if len(reads) > max_read_depth:
                raise LimitExceeded("max_read_depth", max_read_depth, "stack effects", "cyclic effect graph")
            for writes in self.finals[node]:
                yield StackEffect(reads, writes)
            todo.extend((reads + label, target) for label, target in reversed(self.edges[node]))


def build_effect_graphs(tables: LRTables, max_nodes: int = DEFAULTS.max_effect_graph_nodes,
                        progress: Progress = NO_PROGRESS) -> tuple[EffectGraph, ...]:
    """Every terminal's effects as an `EffectGraph` (LimitExceeded past `max_nodes` nodes in one);
    `progress` counts terminals."""
    explorer = _Explorer(tables)
    shared: dict = {}     # one object per distinct edge, edge list and writes: deep graphs repeat them
    ticker = Ticker(progress, tables.n_terminals, "terminals")
    columns = [explorer.column(t) for t in range(tables.n_terminals)]
    left = collections.Counter(columns)              # terminals of each column still to do
    explored: dict[tuple, _Exploration] = {}
    graphs = []
    for t, column in enumerate(columns):
        exploration = explored.get(column)
        if exploration is None:
            exploration = _explore(explorer, t, max_nodes, shared)
            if left[column] > 1:
                explored[column] = exploration
        graphs.append(exploration.graph_of(explorer, t, shared))
        left[column] -= 1
        if not left[column]:
            explored.pop(column, None)
        ticker.advance()
    ticker.close()
    return tuple(graphs)


def _last_read(reads: tuple) -> int:
    """The position of the deepest concretely read state (the first read, at 0, always is)."""
    k = len(reads) - 1
    while reads[k] == ANY:
        k -= 1
    return k


def _canonical(reads: tuple, popped: int, writes: tuple) -> tuple[tuple, tuple, int, tuple]:
    """(key, reads, popped, writes) of the smallest configuration with the same future."""
    if popped < len(reads):                      # the exposed old position was read: its state decides
        return (writes, 0, reads[popped]), (reads[popped],), 0, writes
    anchor = _last_read(reads)
    distance = popped - anchor
    return (writes, distance, reads[anchor]), (reads[anchor],) + (ANY,) * (distance - 1), distance, writes


@dataclass(frozen=True)
class _Exploration:
    """A terminal's symbolic runs: the graph's roots and edges, and where its runs end (a shift from
    a node's top state after its writes, or ACCEPT); `graph_of` fills in each final shift's target."""

    roots: tuple[tuple[int, int], ...]
    edges: tuple[tuple[tuple[tuple[int, ...], int], ...], ...]
    shifts: tuple[tuple[int, tuple[int, ...], int], ...]     # (node, writes, top state)
    accepts: tuple[int, ...]

    def graph_of(self, explorer: _Explorer, t: int, shared: dict) -> EffectGraph:
        ending: dict[int, list[tuple[int, ...]]] = {}      # the few nodes where runs end
        for node, writes, top in self.shifts:
            written = writes + (explorer.shift_target(top, t),)
            ending.setdefault(node, []).append(shared.setdefault(written, written))
        for node in self.accepts:
            ending.setdefault(node, []).append(())
        finals = [()] * len(self.edges)
        for node, items in ending.items():
            finals[node] = _shared_tuple(items, shared)
        return EffectGraph(t, self.roots, self.edges, tuple(finals))


def _shared_tuple(items: list, shared: dict) -> tuple:
    found = tuple(items) if len(items) < 2 else tuple(sorted(set(items)))
    return shared.setdefault(found, found)


def _explore(explorer: _Explorer, t: int, max_nodes: int, shared: dict) -> _Exploration:
    index: dict[tuple, int] = {}
    configs: list[tuple] = []
    edges: list[list[tuple[tuple[int, ...], int]]] = []
    shifts: list[tuple[int, tuple[int, ...], int]] = []
    accepts: list[int] = []
    exposures: dict[Exposure, list[tuple[tuple[int, ...], int]]] = {}

    def add(key: tuple, config: Config) -> int:
        if len(configs) >= max_nodes:
            raise LimitExceeded("max_effect_graph_nodes", max_nodes, "stack effects",
                                f"terminal {t}'s effect graph is too large")
        found = index[key] = len(configs)
        configs.append(config)
        edges.append([])
        return found

    def node_of(reads: tuple, popped: int, writes: tuple) -> int:
        key, c_reads, c_popped, c_writes = _canonical(reads, popped, writes)
        found = index.get(key)
        return add(key, (c_reads, c_popped, c_writes)) if found is None else found

    roots = tuple((p, node_of((p,), 0, ())) for p in explorer.states_with_action[t])
    done = 0
    while done < len(configs):
        reads, popped, writes = configs[done]
        top = writes[-1] if writes else reads[popped]
        for kind, arg, length in explorer.cell(top, t):
            if kind == SHIFT:
                shifts.append((done, writes, top))
            elif kind == ACCEPT:
                accepts.append(done)
            else:
                after = explorer._reduce(reads, popped, writes, arg, length)
                if after is None:
                    continue
                if len(after) == 3:
                    n_reads, n_popped, n_writes = after
                    labels = n_reads[len(reads):]
                    edge = (shared.setdefault(labels, labels), node_of(n_reads, n_popped, n_writes))
                    edges[done].append(shared.setdefault(edge, edge))
                    continue
                # an exposed position: one edge per state that can lie there, reading it (after the
                # positions popped unread) and leaving its goto as the only write; the same for every
                # configuration exposing it so (the key), so made once per exploration
                branches = exposures.get(after)
                if branches is None:
                    branches = exposures[after] = []
                    for labels, key, config in explorer.exposed_configs(after, shared):
                        node = index.get(key)
                        edge = (labels, add(key, config) if node is None else node)
                        branches.append(shared.setdefault(edge, edge))
                edges[done].extend(branches)
        done += 1
    return _Exploration(roots, tuple(_shared_tuple(e, shared) for e in edges), tuple(shifts), tuple(accepts))


def children_first(graph: EffectGraph) -> list[int]:
    """The nodes the roots reach, each after every node it has an edge to (the graph is a DAG)."""
    order: list[int] = []
    done: set[int] = set()
    for _, root in graph.roots:
        todo = [(root, False)]
        while todo:
            node, expanded = todo.pop()
            if node in done:
                continue
            if expanded:
                done.add(node)
                order.append(node)
            else:
                todo.append((node, True))
                todo.extend((nxt, False) for _, nxt in graph.edges[node] if nxt not in done)
    return order


def max_read_depth(graphs: Sequence[EffectGraph]) -> int:
    """The most old-stack states any effect reads: the longest root-to-node read path of any graph
    (the pipeline checks it against limit max_read_depth)."""
    deepest = 0
    done: set[tuple[int, int]] = set()
    for graph in graphs:
        shape = (id(graph.roots), id(graph.edges))    # terminals of one parser column share them
        if shape in done:
            continue
        done.add(shape)
        longest: dict[int, int] = {}
        for node in children_first(graph):
            longest[node] = max((len(labels) + longest[nxt] for labels, nxt in graph.edges[node]), default=0)
        deepest = max([deepest] + [1 + longest[root] for _, root in graph.roots])
    return deepest


@dataclass(frozen=True)
class Reach:
    """How deep effects starting on one top state look and where they leave the stack: `reads`, the
    most states one reads; `after`, per state left on top afterwards, the most that effects leaving
    it lower the stack (reads past the exposed state minus writes) and the most states they read."""

    reads: int
    after: tuple[tuple[int, int, int], ...]   # (top after the effect, most lowered, most read), sorted


def reach_by_top(graph: EffectGraph) -> dict[int, Reach]:
    """Per top state a root reads (ANY included), the `Reach` of the effects starting there."""
    low = -(1 << 30)      # no effect ends below this node: below any real value
    # node -> (longest read path below it; top after -> [most (path length - writes), most path
    # length] for effects whose top is known below the node; the most path length of effects that
    # end before any further read: their top is the state read last above the node)
    best: dict[int, tuple[int, dict[int, list[int]], int]] = {}
    for node in children_first(graph):
        reads = 0 if graph.finals[node] else low
        tops: dict[int, list[int]] = {}
        bare = low
        for writes in graph.finals[node]:
            if writes:
                _raise(tops, writes[-1], -len(writes), 0)
            else:
                bare = 0
        for labels, nxt in graph.edges[node]:
            below_reads, below_tops, below_bare = best[nxt]
            reads = max(reads, len(labels) + below_reads)
            for top, (lowered, path) in below_tops.items():
                _raise(tops, top, len(labels) + lowered, len(labels) + path)
            if below_bare == low:
                continue
            if labels:
                if labels[-1] == ANY:
                    raise AssertionError("an effect must end on a concrete read (the exposed state)")
                _raise(tops, labels[-1], len(labels) + below_bare, len(labels) + below_bare)
            else:
                bare = max(bare, below_bare)
        best[node] = (reads, tops, bare)
    found: dict[int, tuple[int, dict[int, list[int]]]] = {}
    for top, root in graph.roots:
        reads, tops, bare = best[root]
        now_reads, merged = found.setdefault(top, (low, {}))
        for state, (lowered, path) in tops.items():
            _raise(merged, state, lowered, path)
        if bare != low:
            if top == ANY:
                raise AssertionError("an effect must end on a concrete read (the exposed state)")
            _raise(merged, top, bare, bare)
        found[top] = (max(now_reads, 1 + reads), merged)
    return {top: Reach(reads, tuple((state, lowered, 1 + path) for state, (lowered, path) in sorted(tops.items())))
            for top, (reads, tops) in found.items()}


def _raise(tops: dict[int, list[int]], top: int, lowered: int, path: int) -> None:
    """Keep the most lowered and the longest read path per top state."""
    found = tops.get(top)
    if found is None:
        tops[top] = [lowered, path]
    else:
        found[0] = max(found[0], lowered)
        found[1] = max(found[1], path)
