"""Stage 6b: the read NFA -> the deterministic Parser DWA over LR-state labels plus a default edge.

Input: the read NFA (read_nfa.py; ANY labels match any state). Output: an acyclic
DWA whose walk down a concrete stack (top first) reaches, after each step, a state carrying the set of
outcomes whose read prefix matched *so far* (cumulative), so a walk's mask is the row of its last
state. Subset construction over labels (a state's explicit labels are those any member mentions; the
default edge follows the members' ANY edges; epsilon closures taken throughout), then minimization of the acyclic result by hashing
states bottom-up (equal cumulative set and equal edges -> one state).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from glrmask_cli.errors import LimitExceeded
from glrmask_cli.parser.stack_effects import ANY
from glrmask_cli.parser_dwa.read_nfa import ReadNFA

NO_STATE = -1
MAX_DWA_STATES = 500_000


@dataclass(frozen=True)
class ParserDWA:
    """`roots[g]` is the root of group g (parser_dwa/groups.py; state 0 when there is one group).
    `edges[d]` maps an LR state to the next DWA state; `default[d]` is taken for any other LR state
    (NO_STATE: the walk stops). `outcomes[d]` is the cumulative outcome bitset."""

    edges: tuple[Mapping[int, int], ...]
    default: tuple[int, ...]
    outcomes: tuple[int, ...]
    roots: tuple[int, ...] = (0,)

    @property
    def n_states(self) -> int:
        return len(self.default)

    @property
    def n_transitions(self) -> int:
        return sum(len(e) for e in self.edges) + sum(d != NO_STATE for d in self.default)

    def depth(self) -> int:
        """The longest walk: the maximum number of stack symbols the DWA ever reads."""
        depth = [0] * self.n_states
        for state in reversed(range(self.n_states)):  # numbered topologically: targets have larger ids
            targets = list(self.edges[state].values())
            if self.default[state] != NO_STATE:
                targets.append(self.default[state])
            depth[state] = 1 + max((depth[t] for t in targets), default=-1)
        return max(depth[root] for root in self.roots)


def determinize(nfas: Iterable[ReadNFA]) -> ParserDWA:
    """Subset construction with cumulative acceptance for each NFA (one per group), then one
    bottom-up minimization over all of them (equal states of different groups are shared)."""
    return combine([determinize_group(nfa) for nfa in nfas])


def determinize_group(nfa: ReadNFA, max_states: int = MAX_DWA_STATES) -> ParserDWA:
    """One group's minimized DWA (root 0). LimitExceeded past `max_states` subsets."""
    return minimize(*_subsets(nfa, max_states))


def combine(parts: Sequence[ParserDWA]) -> ParserDWA:
    """The groups' DWAs as one automaton with one root per part (in order), minimized together."""
    edges: list[dict[int, int]] = []
    default: list[int] = []
    outcomes: list[int] = []
    roots = []
    for part in parts:
        shift = len(default)
        roots.append(shift)
        edges.extend({label: t + shift for label, t in e.items()} for e in part.edges)
        default.extend(t + shift if t != NO_STATE else NO_STATE for t in part.default)
        outcomes.extend(part.outcomes)
    return minimize(edges, default, outcomes, roots)


def _subsets(nfa: ReadNFA, max_states: int = MAX_DWA_STATES) -> tuple[list[dict[int, int]], list[int], list[int]]:
    """Subset construction of `nfa`: (edges, default, cumulative outcomes), state 0 the root.

    A state is (NFA subset, cumulative outcomes); one subset recurs with many cumulative sets
    (latex.lark x o200k: 12k subsets in 100k states), so its moves are taken once per subset."""
    closure = _Closures(nfa)
    root = closure.of([nfa.start])
    key_of_root = (root, closure.accepted(root))
    index = {key_of_root: 0}
    keys = [key_of_root]
    edges: list[dict[int, int]] = []
    default: list[int] = []
    moves: dict[frozenset[int], _Moves] = {}
    head = 0
    while head < len(keys):
        members, cumulative = keys[head]
        head += 1
        step = moves.get(members)
        if step is None:
            step = moves[members] = _moves(nfa, closure, members)
        labelled, otherwise = step

        def target(subset: frozenset[int], accepted: int) -> int:
            key = (subset, cumulative | accepted)
            state = index.get(key)
            if state is None:
                state = index[key] = len(keys)
                keys.append(key)
                if len(keys) > max_states:
                    raise LimitExceeded("max_dwa_states", max_states, "parser DWA determinization",
                                        "the exact Parser DWA of this grammar is too large (known for deep "
                                        "operator-precedence grammars, see docs/ARCHITECTURE.md 'Known limits')")
            return state

        out: dict[int, int] = {}
        for subset, accepted, labels in labelled:
            out.update(dict.fromkeys(labels, target(subset, accepted)))
        edges.append(out)
        default.append(target(*otherwise) if otherwise is not None else NO_STATE)
    return edges, default, [acc for _, acc in keys]


# A subset's moves: (target subset, its accepted outcomes, the labels that lead there) per distinct
# target, and the (subset, accepted) that any other label leads to (None: the walk stops).
_Moves = tuple[list[tuple[frozenset[int], int, tuple[int, ...]]], tuple[frozenset[int], int] | None]


def _moves(nfa: ReadNFA, closure: "_Closures", members: frozenset[int]) -> _Moves:
    buckets: dict[int, list[int]] = {}
    for m in members:
        for label, targets in nfa.reads[m].items():
            buckets.setdefault(label, []).extend(targets)
    any_targets = buckets.pop(ANY, [])
    otherwise = closure.of(any_targets)         # part of every label's target
    by_target: dict[frozenset[int], list[int]] = {}
    for label in sorted(buckets):
        by_target.setdefault(closure.of(buckets[label], otherwise), []).append(label)
    labelled = [(subset, closure.accepted(subset), tuple(labels)) for subset, labels in by_target.items()]
    return labelled, (otherwise, closure.accepted(otherwise)) if any_targets else None


class _Closures:
    """Epsilon closures of NFA node sets, memoized per node (the NFA is acyclic)."""

    def __init__(self, nfa: ReadNFA):
        self.nfa = nfa
        self._of_node: dict[int, frozenset[int]] = {}
        self._accepted: dict[frozenset[int], int] = {}
        self._interned: dict[frozenset[int], frozenset[int]] = {}

    def _node(self, node: int) -> frozenset[int]:
        cached = self._of_node.get(node)
        if cached is None:
            found, todo = {node}, [node]
            while todo:
                for nxt in self.nfa.epsilon[todo.pop()]:
                    if nxt not in found:
                        found.add(nxt)
                        todo.append(nxt)
            # Keep only nodes that matter: those with reads or acceptance.
            cached = frozenset(n for n in found if self.nfa.reads[n] or self.nfa.accepted[n])
            self._of_node[node] = cached
        return cached

    def of(self, nodes: list[int], base: frozenset[int] = frozenset()) -> frozenset[int]:
        """The closure of `nodes`, united with `base` (a closure already taken); equal closures are
        one object (memory: a subset's moves keep theirs; speed: its hash is computed once)."""
        subset = base.union(*map(self._node, set(nodes)))
        return self._interned.setdefault(subset, subset)

    def accepted(self, subset: frozenset[int]) -> int:
        acc = self._accepted.get(subset)
        if acc is None:
            acc = 0
            for node in subset:
                acc |= self.nfa.accepted[node]
            self._accepted[subset] = acc
        return acc


def minimize(edges: list[dict[int, int]], default: list[int], outcomes: list[int],
             roots: Sequence[int] = (0,)) -> ParserDWA:
    """Merge equivalent states of an acyclic DWA (same cumulative outcomes, same edges) by hashing
    signatures in reverse topological order; number the result topologically from the roots."""
    n = len(default)
    order = _topological_order(n, lambda s: _targets(edges[s], default[s]), roots)
    canon = [0] * n
    signature_index: dict[tuple, int] = {}
    representative: list[int] = []
    for state in reversed(order):
        dflt = canon[default[state]] if default[state] != NO_STATE else NO_STATE
        out = tuple(sorted((label, canon[t]) for label, t in edges[state].items() if canon[t] != dflt))
        signature = (outcomes[state], dflt, out)
        cls = signature_index.get(signature)
        if cls is None:
            cls = signature_index[signature] = len(representative)
            representative.append(state)
        canon[state] = cls
    merged_edges = [{label: canon[t] for label, t in edges[rep].items()} for rep in representative]
    merged_default = [canon[default[rep]] if default[rep] != NO_STATE else NO_STATE for rep in representative]
    new_order = _topological_order(len(representative), lambda c: _targets(merged_edges[c], merged_default[c]),
                                   [canon[root] for root in roots])
    new_id = {cls: i for i, cls in enumerate(new_order)}
    new_edges: list[dict[int, int]] = []
    new_default: list[int] = []
    new_outcomes: list[int] = []
    for cls in new_order:
        dflt = new_id[merged_default[cls]] if merged_default[cls] != NO_STATE else NO_STATE
        out = {label: new_id[t] for label, t in sorted(merged_edges[cls].items())}
        new_edges.append({label: t for label, t in out.items() if t != dflt})
        new_default.append(dflt)
        new_outcomes.append(outcomes[representative[cls]])
    return ParserDWA(tuple(new_edges), tuple(new_default), tuple(new_outcomes),
                     tuple(new_id[canon[root]] for root in roots))


def _targets(edges: dict[int, int], default: int) -> list[int]:
    out = [t for _, t in sorted(edges.items())]
    if default != NO_STATE:
        out.append(default)
    return list(dict.fromkeys(out))


def _topological_order(n: int, targets, roots: Sequence[int]) -> list[int]:
    """Kahn's algorithm over the states the roots reach; deterministic (FIFO, sorted edges, roots in
    order). A root that no state points to comes before everything it reaches."""
    starts = list(dict.fromkeys(roots))
    indegree: dict[int, int] = {root: 0 for root in starts}
    stack, seen = list(starts), set(starts)
    while stack:
        for t in targets(stack.pop()):
            indegree[t] = indegree.get(t, 0) + 1
            if t not in seen:
                seen.add(t)
                stack.append(t)
    order, head = [r for r in starts if indegree[r] == 0], 0
    while head < len(order):
        for t in targets(order[head]):
            indegree[t] -= 1
            if indegree[t] == 0:
                order.append(t)
        head += 1
    return order
