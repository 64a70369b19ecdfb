"""Stage 7b: the read NFA -> the deterministic Parser DWA over LR-state labels plus a default edge.

Input: the read NFA (read_nfa.py; ANY labels match any state). Output: an acyclic
DWA whose walk down a concrete stack (top first) reaches, after each step, a state carrying the set of
outcomes whose read prefix matched *so far* (cumulative), so a walk's mask is the row of its last
state. Subset construction over labels (a state's explicit labels are those any member mentions; the
default edge follows the members' ANY edges; epsilon closures taken throughout), then minimization of
the acyclic result by hashing states bottom-up (equal cumulative set and equal edges -> one state)
into a `StatePool` that every group of a layout shares.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import Hashable, Iterable, Iterator, Sequence

import numpy as np

from glrmask_cli.errors import LimitExceeded
from glrmask_cli.limits import DEFAULTS
from glrmask_cli.parser.stack_effects import ANY
from glrmask_cli.parser_dwa.read_nfa import ReadNFA
from glrmask_cli.ragged import row_positions

NO_STATE = -1
MAX_DWA_STATES = DEFAULTS.max_dwa_states   # the default of limit max_dwa_states (limits.py); the pipeline passes it
MAX_CUMULATIVE_STATES = DEFAULTS.max_cumulative_states   # the default of limit max_cumulative_states
# a minimized state: (cumulative outcomes, emits, default state, the other edges as packed int64 (label, state) pairs)
Signature = tuple[int, bool, int, bytes]


@dataclass(frozen=True, eq=False)
class ParserDWA:
    """`roots[g]` is the root of group g (parser_dwa/groups.py; state 0 when there is one group).
    State d's explicit edges are `labels[offsets[d]:offsets[d + 1]]` (LR states, ascending) and their
    `targets`; `default[d]` is taken for any other LR state (NO_STATE: the walk stops). `outcomes[d]`
    is the cumulative outcome bitset. Edges are arrays, not a mapping per state: sympy's latex.lark
    x cl100k has 27M of them."""

    offsets: np.ndarray       # int64 (n_states + 1,)
    labels: np.ndarray        # int64
    targets: np.ndarray       # int64
    default: np.ndarray       # int64 (n_states,)
    outcomes: tuple[int, ...]
    roots: tuple[int, ...] = (0,)
    emits: tuple[bool, ...] = ()

    @property
    def n_states(self) -> int:
        return len(self.default)

    @property
    def n_transitions(self) -> int:
        return len(self.labels) + int(np.count_nonzero(self.default != NO_STATE))

    def edges(self, state: int) -> dict[int, int]:
        """State `state`'s explicit edges, label -> target."""
        lo, hi = self.offsets[state], self.offsets[state + 1]
        return dict(zip(self.labels[lo:hi].tolist(), self.targets[lo:hi].tolist()))

    def step(self, state: int, label: int) -> int:
        """The state after reading LR state `label` from `state` (NO_STATE: the walk stops)."""
        lo, hi = int(self.offsets[state]), int(self.offsets[state + 1])
        at = lo + int(np.searchsorted(self.labels[lo:hi], label))
        return int(self.targets[at]) if at < hi and self.labels[at] == label else int(self.default[state])

    def relabel(self, state_class: np.ndarray) -> ParserDWA:
        """The automaton over the states that `state_class` maps to its labels: an edge on label k is
        taken by every state of class k."""
        members = np.argsort(state_class, kind="stable")       # the states of each class, ascending
        per_class = np.bincount(state_class, minlength=int(self.labels.max(initial=-1)) + 1)
        first = np.cumsum(per_class) - per_class
        copies = per_class[self.labels]
        labels = members[row_positions(first[self.labels], copies)]
        state = np.repeat(np.repeat(np.arange(self.n_states), np.diff(self.offsets)), copies)
        # by state, then label: one stable (radix) sort of a combined key, 4x faster than np.lexsort
        order = np.argsort(state * len(state_class) + labels, kind="stable")
        offsets = np.zeros(self.n_states + 1, dtype=np.int64)
        offsets[1:] = np.cumsum(np.bincount(state, minlength=self.n_states))
        return ParserDWA(offsets, labels[order].astype(np.int64), np.repeat(self.targets, copies)[order],
                         self.default, self.outcomes, self.roots, self.emits)

    def successors_backward(self) -> Iterator[tuple[int, list[int]]]:
        """(state, its distinct successors, its default included) for every state from the last to
        the first: targets before the states that point to them. Read a block of states at a time as
        Python lists (a state's numpy slice costs more than its walk, and sympy's latex.lark x
        cl100k's 26M edges at once would take GBs)."""
        for hi in range(self.n_states, 0, -_BLOCK):
            lo = max(0, hi - _BLOCK)
            counts = np.diff(self.offsets[lo:hi + 1])
            offsets, targets = _with_defaults(counts, self.targets[self.offsets[lo]:self.offsets[hi]],
                                              self.default[lo:hi])
            bounds, block = offsets.tolist(), targets.tolist()
            for i in range(hi - lo - 1, -1, -1):
                yield lo + i, block[bounds[i]:bounds[i + 1]]

    def depth(self) -> int:
        """The longest walk: the maximum number of stack symbols the DWA ever reads."""
        depth = [0] * self.n_states
        for state, successors in self.successors_backward():  # numbered topologically: targets first
            depth[state] = 1 + max(map(depth.__getitem__, successors), default=-1)
        return max(depth[root] for root in self.roots)


_BLOCK = 4096    # states `ParserDWA.successors_backward` reads at a time


def determinize(nfas: Iterable[ReadNFA]) -> ParserDWA:
    """Subset construction with cumulative acceptance for each NFA (one per group), minimized together
    (equal states of different groups are shared); root g is NFA g's."""
    pool = StatePool()
    return pool.dwa([pool.add_group(nfa).root for nfa in nfas])


@dataclass
class _Subsets:
    """A subset construction: per state, its subset's moves (shared by every state of that subset),
    the states its moves' targets lead to (flat, from `starts[state]`), its default edge and
    cumulative outcomes. Edges stay implicit (latex.lark x o200k: 15M labelled edges in 100k states,
    0.9M distinct targets)."""

    moves: list[_Moves]
    targets: array
    starts: array
    default: list[int]
    outcomes: list[int]
    emits: list[bool]

    def _targets(self, state: int) -> np.ndarray:
        return np.frombuffer(self.targets, dtype=np.int64)[self.starts[state]:self.starts[state + 1]]

    def edges(self, state: int) -> tuple[np.ndarray, np.ndarray]:
        """(labels, their targets) of `state`, sorted by label."""
        moves = self.moves[state]
        return moves.labels.astype(np.int64), self._targets(state)[moves.target_of]

    def successor_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """Every state's distinct successors (its moves' targets, then its default) as CSR."""
        starts = np.frombuffer(self.starts, dtype=np.int64)
        return _with_defaults(np.diff(starts), np.frombuffer(self.targets, dtype=np.int64), self.default)


@dataclass
class _Explicit:
    """An automaton with its edges listed: per state, explicit labels (sorted) and their targets,
    the default edge and the cumulative outcomes."""

    labels: list[np.ndarray]
    targets: list[np.ndarray]
    default: list[int]
    outcomes: list[int]
    emits: list[bool]

    def edges(self, state: int) -> tuple[np.ndarray, np.ndarray]:
        return self.labels[state], self.targets[state]

    def successor_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """Every state's distinct successors (its labels' targets, then its default) as CSR."""
        counts = np.fromiter(map(len, self.targets), dtype=np.int64, count=len(self.targets))
        flat = np.concatenate(self.targets).astype(np.int64) if self.targets else np.zeros(0, dtype=np.int64)
        return _with_defaults(counts, flat, self.default)


@dataclass(frozen=True)
class _Moves:
    """A subset's moves: the distinct targets (closure ids of `_Closures`), every explicit label
    sorted with the index of its target, and where any other label leads (NO_STATE: the walk
    stops), all int32."""

    targets: np.ndarray
    labels: np.ndarray
    target_of: np.ndarray
    otherwise: int


def _subsets(nfa: ReadNFA, max_states: int = MAX_DWA_STATES,
             cumulative_states: int = MAX_CUMULATIVE_STATES) -> _Subsets:
    """Subset construction of `nfa`, state 0 the root.

    A state is (NFA subset, outcomes accepted so far), its subset less the members whose every
    future outcome is accepted already. One subset recurs with many accepted sets, and their product
    is what makes deep grammars explode (sql.lark x cl100k: 10k subsets in 440k states), so once
    there are `cumulative_states` states, a state whose subset recurs *emits* its set (a walk that
    passes it collects it) and its successors start afresh from what they accept themselves: the
    states then follow the subsets. A subset's moves are taken once.

    Memory: subsets and move targets are kept as sorted node ids (bytes); only the subset whose moves
    are being taken is a set (latex.lark x cl100k, its largest group: 480k states over 217k subsets
    of 154 nodes and 570k distinct targets of 178 nodes; 7.3 GB as frozensets, 2.2 GB so)."""
    closure = _Closures(nfa)
    future = _future(nfa)
    pruned: dict[tuple[int, int], bytes] = {}       # (target id, accepted) -> the state's subset
    interned: dict[bytes, bytes] = {}

    def live(target_id: int, accepted: int) -> bytes:
        key = (target_id, accepted)
        found = pruned.get(key)
        if found is None:
            # future[n] not within accepted; `(f & a) != f` on these large ints is 2-3x `f & ~a`
            kept = _packed([n for n in closure.nodes(target_id) if (future[n] & accepted) != future[n]])
            found = pruned[key] = interned.setdefault(kept, kept)
        return found

    root = closure.target(closure.of([nfa.start]))
    root_accepted = closure.accepted[root]
    states = _Numbering((live(root, root_accepted), root_accepted), max_states, "parser DWA determinization",
                        "the exact Parser DWA of this grammar is too large (known for deep "
                        "operator-precedence grammars, see docs/ARCHITECTURE.md 'Known limits')")
    keys = states.keys
    result = _Subsets([], array("q"), array("q", [0]), [], [], [])
    moves: dict[bytes, _Moves] = {}
    met: dict[bytes, int] = {}      # subset -> how many states have it so far

    def target(target_id: int, accepted: int) -> int:
        members = live(target_id, accepted)
        before = len(keys)
        state = states.of((members, accepted))
        if len(keys) > before:
            met[members] = met.get(members, 0) + 1
        return state

    met[keys[0][0]] = 1
    head = 0
    while head < len(keys):
        members, accepted = keys[head]
        head += 1
        step = moves.get(members)
        if step is None:
            step = moves[members] = _moves(nfa, closure, np.frombuffer(members, dtype=np.int32).tolist())
        emits = bool(members) and met[members] > 1 and len(keys) > cumulative_states
        carried = 0 if emits else accepted
        result.moves.append(step)
        result.emits.append(emits)
        result.targets.extend([target(target_id, carried | closure.accepted[target_id])
                               for target_id in step.targets.tolist()])
        result.starts.append(len(result.targets))
        result.default.append(target(step.otherwise, carried | closure.accepted[step.otherwise])
                              if step.otherwise != NO_STATE else NO_STATE)
    result.outcomes = [acc for _, acc in keys]
    return result


def _future(nfa: ReadNFA) -> list[int]:
    """Per NFA node, the outcomes accepted at it or at any node it reaches."""
    n = len(nfa.accepted)
    future: list[int] = [-1] * n       # -1: not known yet
    for start in range(n):
        if future[start] >= 0:
            continue
        todo = [start]
        while todo:
            node = todo[-1]
            if future[node] >= 0:
                todo.pop()
                continue
            succ = list(nfa.epsilon[node])
            for targets in nfa.reads[node].values():
                succ.extend(targets)
            missing = [m for m in succ if future[m] < 0]
            if missing:
                todo.extend(missing)
                continue
            acc = nfa.accepted[node]
            for m in succ:
                acc |= future[m]
            future[node] = acc
            todo.pop()
    return future


class _Numbering:
    """The states of a construction, numbered in the order first seen (the first one 0), with limit
    max_dwa_states on their count."""

    def __init__(self, first: Hashable, max_states: int, stage: str, why: str) -> None:
        self.keys: list = [first]
        self._index = {first: 0}
        self._max, self._stage, self._why = max_states, stage, why

    def of(self, key: Hashable) -> int:
        state = self._index.get(key)
        if state is None:
            state = self._index[key] = len(self.keys)
            self.keys.append(key)
            if len(self.keys) > self._max:
                raise LimitExceeded("max_dwa_states", self._max, self._stage, self._why)
        return state


_FEW_NODES = 64    # a node set smaller than this is sorted and packed without numpy (2-4x faster at 3-40 nodes)


def _packed(nodes: list[int]) -> bytes:
    """Node ids (given sorted) as the bytes of an int32 array (numpy's, without its per-call cost)."""
    return array("i", nodes).tobytes()


def _moves(nfa: ReadNFA, closure: "_Closures", members: list[int]) -> _Moves:
    buckets: dict[int, list[int]] = {}
    for m in members:
        for label, targets in nfa.reads[m].items():
            buckets.setdefault(label, []).extend(targets)
    any_targets = buckets.pop(ANY, [])
    otherwise = closure.of(any_targets)         # part of every label's target
    target_index: dict[frozenset[int], int] = {}
    labels = sorted(buckets)
    target_of = [target_index.setdefault(closure.of(buckets[label], otherwise), len(target_index))
                 for label in labels]
    return _Moves(np.asarray([closure.target(subset) for subset in target_index], dtype=np.int32),
                  np.asarray(labels, dtype=np.int32), np.asarray(target_of, dtype=np.int32),
                  closure.target(otherwise) if any_targets else NO_STATE)


class _Closures:
    """Epsilon closures of NFA node sets, memoized per node (the NFA is acyclic), and the distinct
    closures that are moves' targets, numbered, kept as their sorted nodes (bytes)."""

    def __init__(self, nfa: ReadNFA):
        self.nfa = nfa
        self._of_node: dict[int, frozenset[int]] = {}
        self._interned: dict[frozenset[int], frozenset[int]] = {}
        self._ids: dict[bytes, int] = {}
        self._nodes: list[bytes] = []
        self.accepted: list[int] = []          # per closure id, the outcomes it accepts

    def _node(self, node: int) -> frozenset[int]:
        """The closure of one node, kept to the nodes that matter (with reads or acceptance); built
        from its epsilon successors' closures (memoized for every node on the way)."""
        memo = self._of_node
        cached = memo.get(node)
        if cached is not None:
            return cached
        epsilon, reads, accepted = self.nfa.epsilon, self.nfa.reads, self.nfa.accepted
        todo = [node]
        while todo:
            n = todo[-1]
            if n in memo:
                todo.pop()
                continue
            missing = [m for m in epsilon[n] if m not in memo]
            if missing:
                todo.extend(missing)
                continue
            todo.pop()
            parts = [memo[m] for m in epsilon[n]]
            own = reads[n] or accepted[n]
            if not own and len(parts) == 1:
                memo[n] = parts[0]
                continue
            found = frozenset([n]) if own else frozenset()
            found = found.union(*parts) if parts else found
            memo[n] = self._interned.setdefault(found, found)
        return memo[node]

    def of(self, nodes: list[int], base: frozenset[int] = frozenset()) -> frozenset[int]:
        """The closure of `nodes`, united with `base` (a closure already taken)."""
        return base.union(*map(self._node, set(nodes)))

    def target(self, subset: frozenset[int]) -> int:
        """The id of closure `subset`."""
        key = _packed(sorted(subset)) if len(subset) < _FEW_NODES else \
            np.sort(np.fromiter(subset, dtype=np.int32, count=len(subset))).tobytes()
        found = self._ids.get(key)
        if found is None:
            found = self._ids[key] = len(self._nodes)
            self._nodes.append(key)
            acc = 0
            for node in subset:
                acc |= self.nfa.accepted[node]
            self.accepted.append(acc)
        return found

    def nodes(self, target_id: int) -> list[int]:
        """The nodes of the closure numbered `target_id`, ascending."""
        return np.frombuffer(self._nodes[target_id], dtype=np.int32).tolist()


@dataclass(frozen=True)
class Part:
    """A group's automaton inside a `StatePool`: its root and its number of minimized states."""

    root: int
    n_states: int


class StatePool:
    """Minimized Parser DWA states of any number of groups, hashed by signature: (cumulative outcomes,
    default state, the other edges as packed (label, state) pairs). Equal states are one, within a
    group and across groups, and only the table is kept between groups (python eval_input x gpt2:
    combining its 15 groups as dicts per state peaked at 123 MB, the pool at 43 MB)."""

    def __init__(self) -> None:
        self._index: dict[Signature, int] = {}
        self.signatures: list[Signature] = []
        self._outcomes: dict[int, int] = {}     # one object per distinct outcome set (large ints)

    def add_group(self, nfa: ReadNFA, max_states: int = MAX_DWA_STATES,
                  cumulative_states: int = MAX_CUMULATIVE_STATES) -> Part:
        """Determinize one group's read NFA into the pool (`_subsets`), hashing its states bottom-up.
        LimitExceeded past `max_states` states (the pool is then unchanged)."""
        return self._add(_subsets(nfa, max_states, cumulative_states))

    def add_union(self, roots: Sequence[int], max_states: int = MAX_DWA_STATES) -> Part:
        """One automaton whose walk gives what the walks from all of `roots` (states of this pool) give
        together, the union of their cumulative outcomes: the automaton of those groups' outcomes
        taken as one group, built from their minimized states instead of splicing and determinizing
        again. LimitExceeded past `max_states` states (the pool is then unchanged)."""
        return self._add(_union(self, roots, max_states))

    def _add(self, automaton: "_Subsets | _Explicit") -> Part:
        """Hash an automaton's states into the pool bottom-up (state 0 its root)."""
        default = automaton.default
        order = _topological_levels(*automaton.successor_csr(), (0,))
        canon = np.full(len(default), NO_STATE, dtype=np.int64)
        for state in reversed(order):    # targets before the states that point to them
            dflt = int(canon[default[state]]) if default[state] != NO_STATE else NO_STATE
            labels, targets = automaton.edges(state)
            targets = canon[targets]
            kept = targets != dflt
            outcome = self._outcomes.setdefault(automaton.outcomes[state], automaton.outcomes[state])
            edges = np.stack((labels[kept], targets[kept]), axis=1).tobytes()
            signature = (outcome, automaton.emits[state], dflt, edges)
            cls = self._index.setdefault(signature, len(self.signatures))
            if cls == len(self.signatures):
                self.signatures.append(signature)
            canon[state] = cls
        return Part(int(canon[0]), len(np.unique(canon)))

    def absorb(self, signatures: Sequence[Signature], part: Part) -> Part:
        """Hash another pool's states (its `signatures`, each after the states it points to, as
        `_add` numbers them) into this one; `part` is a group of that pool, returned as the same group
        here. States are equal exactly when they are structurally equal, so this pool comes out as if
        the group had been added to it directly (a worker process builds a group into its own pool)."""
        new = np.empty(len(signatures), dtype=np.int64)
        for i, (outcome, emits, default, edges) in enumerate(signatures):
            if edges:
                pairs = np.frombuffer(edges, dtype=np.int64).reshape(-1, 2).copy()
                pairs[:, 1] = new[pairs[:, 1]]
                edges = pairs.tobytes()
            signature = (self._outcomes.setdefault(outcome, outcome), emits,
                         int(new[default]) if default != NO_STATE else NO_STATE, edges)
            cls = self._index.setdefault(signature, len(self.signatures))
            if cls == len(self.signatures):
                self.signatures.append(signature)
            new[i] = cls
        return Part(int(new[part.root]), part.n_states)

    def accepts_nothing(self, cls: int) -> bool:
        """The state accepts nothing and has no edge: a walk from it gives the empty set."""
        outcome, _, default, edges = self.signatures[cls]
        return outcome == 0 and default == NO_STATE and not edges

    def _edges(self, cls: int) -> list[list[int]]:
        return np.frombuffer(self.signatures[cls][3], dtype=np.int64).reshape(-1, 2).tolist()

    def dwa(self, roots: Sequence[int]) -> ParserDWA:
        """The states reachable from `roots` as one automaton, numbered topologically (roots in order)."""
        order = _topological_levels(*_successor_csr(self.signatures), roots)
        new_id = np.full(len(self.signatures), NO_STATE, dtype=np.int64)
        new_id[order] = np.arange(len(order))
        pairs = np.frombuffer(b"".join(self.signatures[cls][3] for cls in order), dtype=np.int64).reshape(-1, 2)
        offsets = np.zeros(len(order) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(self.signatures[cls][3]) // 16 for cls in order])
        default = np.asarray([self.signatures[cls][2] for cls in order], dtype=np.int64)
        default = np.where(default != NO_STATE, new_id[default], NO_STATE)
        outcomes = tuple(self.signatures[cls][0] for cls in order)
        emits = tuple(self.signatures[cls][1] for cls in order)
        return ParserDWA(offsets, pairs[:, 0].copy(), new_id[pairs[:, 1]], default, outcomes,
                         tuple(int(new_id[root]) for root in roots), emits)


def _union(pool: StatePool, roots: Sequence[int], max_states: int) -> _Explicit:
    """The walks from `roots` in step. A state is (the pool states still walking, the outcomes of
    those that stopped, less what the walking ones carry: their sets only grow along a walk until
    they emit them); its outcomes are both together, it emits where a walking one emits (and then
    starts its stopped set afresh), and a label on which every walk stops stops this one too."""
    edges_of: dict[int, tuple[dict[int, int], int, int, bool]] = {}

    def component(cls: int) -> tuple[dict[int, int], int, int, bool]:
        found = edges_of.get(cls)
        if found is None:
            outcome, emits, default, _ = pool.signatures[cls]
            found = edges_of[cls] = ({label: target for label, target in pool._edges(cls)}, default, outcome, emits)
        return found

    carried_of: dict[tuple[int, ...], int] = {}

    def carried(live: tuple[int, ...]) -> int:
        union = carried_of.get(live)
        if union is None:
            union = 0
            for cls in live:
                union |= component(cls)[2]
            carried_of[live] = union
        return union

    result = _Explicit([], [], [], [], [])
    states = _Numbering((tuple(sorted(set(roots))), 0), max_states, "parser DWA union",
                        "the groups' automata walked together are too large")
    keys = states.keys

    def successor(moved: list[int], outcomes: list[int], stopped: int, emits: bool) -> int:
        """The state where walk i moves to moved[i] (NO_STATE: it stops, keeping outcomes[i] unless
        this state emits them, as it does with `stopped`)."""
        more = 0 if emits else stopped
        walking = set()
        for nxt, outcome in zip(moved, outcomes):
            if nxt != NO_STATE:
                walking.add(nxt)
            elif not emits:
                more |= outcome
        if not walking:
            return NO_STATE
        ordered = tuple(sorted(walking))
        return states.of((ordered, more & ~carried(ordered)))

    head = 0
    while head < len(keys):
        live, stopped = keys[head]
        head += 1
        parts = [component(cls) for cls in live]
        outcomes = [part[2] for part in parts]
        emits = any(part[3] for part in parts)
        defaults = [part[1] for part in parts]
        overrides: dict[int, list[tuple[int, int]]] = {}
        for i, part in enumerate(parts):
            for label, nxt in part[0].items():
                overrides.setdefault(label, []).append((i, nxt))
        known: dict[tuple[int, ...], int] = {}      # the moves of several labels are often the same
        default = successor(defaults, outcomes, stopped, emits)
        labels, targets = [], []
        for label in sorted(overrides):
            moved = list(defaults)
            for i, nxt in overrides[label]:
                moved[i] = nxt
            key = tuple(moved)
            found = known.get(key)
            if found is None:
                found = known[key] = successor(moved, outcomes, stopped, emits)
            # every walk stops on a label only where every default stops too (a walk with a default
            # continues on every label): such labels are left to the default
            if found != NO_STATE:
                labels.append(label)
                targets.append(found)
        result.labels.append(np.asarray(labels, dtype=np.int64))
        result.targets.append(np.asarray(targets, dtype=np.int64))
        result.default.append(default)
        result.outcomes.append(stopped | carried(live))
        result.emits.append(emits)
    return result


def _successor_csr(signatures: Sequence[Signature]) -> tuple[np.ndarray, np.ndarray]:
    """Per pool state, its distinct successors as CSR: its edges' targets by label (a signature
    packs its edges by label, as `_add` writes them), then its default."""
    n = len(signatures)
    edges = [signature[3] for signature in signatures]
    counts = np.fromiter(map(len, edges), dtype=np.int64, count=n) // 16
    targets = np.frombuffer(b"".join(edges), dtype=np.int64)[1::2]
    return _with_defaults(counts, targets, [signature[2] for signature in signatures])


def _with_defaults(counts: np.ndarray, targets: np.ndarray,
                   default: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR (offsets, targets) of each state's distinct successors: its `counts[state]` entries of
    `targets` in order, then its default (NO_STATE: none), each successor once where it first occurs
    (latex.lark x cl100k's pool: 26M edges, 2.6M distinct successors). The states may be a slice of
    an automaton's: targets are any state ids."""
    n = len(counts)
    defaults = np.fromiter(default, dtype=np.int64, count=n)
    has_default = defaults != NO_STATE
    sizes = counts + has_default
    ends = np.cumsum(sizes)
    merged = np.empty(int(ends[-1]) if n else 0, dtype=np.int64)      # each state's targets, then its default
    merged[row_positions(ends - sizes, counts)] = targets
    merged[ends[has_default] - 1] = defaults[has_default]
    owner = np.repeat(np.arange(n, dtype=np.int64), sizes)
    key = owner * max(n, int(merged.max(initial=0)) + 1) + merged     # targets may lie past these states
    order = np.argsort(key, kind="stable")              # equal (state, target) pairs together, in order
    ordered = key[order]
    first = np.ones(len(key), dtype=bool)
    first[1:] = ordered[1:] != ordered[:-1]
    keep = np.zeros(len(key), dtype=bool)
    keep[order[first]] = True
    offsets = np.zeros(n + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(np.bincount(owner[keep], minlength=n))
    return offsets, merged[keep]


def _gather(offsets: np.ndarray, flat: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """The CSR rows of `nodes`, concatenated in their order."""
    return flat[row_positions(offsets[nodes], offsets[nodes + 1] - offsets[nodes])]


def _topological_levels(offsets: np.ndarray, flat: np.ndarray, roots: Sequence[int]) -> list[int]:
    """Kahn's topological order over the states the roots reach in a CSR graph, deterministic: a
    FIFO queue, each state's successors in order, the roots in order (one that no state points to
    comes before everything it reaches). Computed a queue generation at a time with numpy: FIFO
    Kahn processes the states appended while it processed one generation after that generation,
    and appends each state when its last predecessor there is processed, so a generation's new
    states come in the order of their last occurrence among its successors (latex.lark x cl100k's
    322k states: 11 s one state at a time in Python)."""
    n = len(offsets) - 1
    starts = np.asarray(list(dict.fromkeys(roots)), dtype=np.int64)
    seen = np.zeros(n, dtype=bool)
    seen[starts] = True
    frontier = starts
    while len(frontier):                                   # the states the roots reach
        reached = _gather(offsets, flat, frontier)
        frontier = np.unique(reached[~seen[reached]])
        seen[frontier] = True
    indegree = np.bincount(_gather(offsets, flat, np.flatnonzero(seen)), minlength=n)
    frontier = starts[indegree[starts] == 0]
    generations = [frontier]
    while len(frontier):
        targets = _gather(offsets, flat, frontier)
        touched, last_from_end, times = np.unique(targets[::-1], return_index=True, return_counts=True)
        indegree[touched] -= times
        freed = indegree[touched] == 0
        frontier = touched[freed][np.argsort(-last_from_end[freed], kind="stable")]   # by last occurrence
        generations.append(frontier)
    return np.concatenate(generations).tolist()
