"""Stage 6b: read prefixes -> the deterministic Parser DWA over LR-state labels plus a default edge.

Input: for every outcome, its read prefixes (top first; ANY matches any state). Output: an acyclic
DWA whose walk down a concrete stack (top first) reaches, after each step, a state carrying the set of
outcomes whose read prefix matched *so far* (cumulative), so a walk's mask is the row of its last
state. Subset construction over labels (a state's explicit labels are those any member mentions; the
default edge follows the members' ANY edges), then minimization of the acyclic result by hashing
states bottom-up (equal cumulative set and equal edges -> one state).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from glrmask_cli.errors import LimitExceeded
from glrmask_cli.parser.stack_effects import ANY

NO_STATE = -1
MAX_DWA_STATES = 2_000_000


class ReadTrie:
    """A trie of read prefixes; each node knows the outcomes (as a bitset int) accepted there."""

    def __init__(self) -> None:
        self.children: list[dict[int, int]] = [{}]
        self.accepted: list[int] = [0]

    def add(self, prefix: Iterable[int], outcome_id: int) -> None:
        node = 0
        for label in prefix:
            nxt = self.children[node].get(label)
            if nxt is None:
                nxt = len(self.children)
                self.children[node][label] = nxt
                self.children.append({})
                self.accepted.append(0)
            node = nxt
        self.accepted[node] |= 1 << outcome_id


@dataclass(frozen=True)
class ParserDWA:
    """State 0 is the root. `edges[d]` maps an LR state to the next DWA state; `default[d]` is taken
    for any other LR state (NO_STATE: the walk stops). `outcomes[d]` is the cumulative outcome bitset."""

    edges: tuple[Mapping[int, int], ...]
    default: tuple[int, ...]
    outcomes: tuple[int, ...]

    @property
    def n_states(self) -> int:
        return len(self.default)

    @property
    def n_transitions(self) -> int:
        return sum(len(e) for e in self.edges) + sum(d != NO_STATE for d in self.default)

    def depth(self) -> int:
        """The longest walk: the maximum number of stack symbols the DWA ever reads."""
        depth = [0] * self.n_states
        for state in reversed(range(self.n_states)):  # children have larger ids (built breadth-first)
            targets = list(self.edges[state].values())
            if self.default[state] != NO_STATE:
                targets.append(self.default[state])
            depth[state] = 1 + max((depth[t] for t in targets), default=-1)
        return depth[0]


def build_read_trie(prefixes_by_outcome: Mapping[int, Iterable[tuple[int, ...]]]) -> ReadTrie:
    trie = ReadTrie()
    for outcome_id in sorted(prefixes_by_outcome):
        for prefix in sorted(prefixes_by_outcome[outcome_id]):
            trie.add(prefix, outcome_id)
    return trie


def determinize(trie: ReadTrie) -> ParserDWA:
    """Subset construction with cumulative acceptance, then bottom-up minimization."""
    key_of_root = (frozenset([0]), trie.accepted[0])
    index = {key_of_root: 0}
    keys = [key_of_root]
    edges: list[dict[int, int]] = []
    default: list[int] = []
    head = 0
    while head < len(keys):
        members, cumulative = keys[head]
        head += 1
        labels = sorted({label for m in members for label in trie.children[m] if label != ANY})
        any_targets = frozenset(trie.children[m][ANY] for m in members if ANY in trie.children[m])

        def target(nodes: frozenset[int]) -> int:
            if not nodes:
                return NO_STATE
            acc = cumulative
            for n in nodes:
                acc |= trie.accepted[n]
            key = (nodes, acc)
            state = index.get(key)
            if state is None:
                state = index[key] = len(keys)
                keys.append(key)
                if len(keys) > MAX_DWA_STATES:
                    raise LimitExceeded("max_dwa_states", MAX_DWA_STATES, "parser DWA determinization")
            return state

        out = {}
        for label in labels:
            nodes = any_targets | frozenset(trie.children[m][label] for m in members if label in trie.children[m])
            out[label] = target(nodes)
        edges.append(out)
        default.append(target(any_targets))
    return minimize(edges, default, [acc for _, acc in keys])


def minimize(edges: list[dict[int, int]], default: list[int], outcomes: list[int]) -> ParserDWA:
    """Merge equivalent states of the layered DWA that `determinize` builds (every edge goes one layer
    deeper, so children have larger ids); the result is numbered in topological order."""
    n = len(default)
    canon = [0] * n
    signature_index: dict[tuple, int] = {}
    for state in reversed(range(n)):
        dflt = canon[default[state]] if default[state] != NO_STATE else NO_STATE
        out = tuple(sorted((label, canon[t]) for label, t in edges[state].items() if canon[t] != dflt))
        signature = (outcomes[state], dflt, out)
        canon[state] = signature_index.setdefault(signature, len(signature_index))
    representative: dict[int, int] = {}
    for state in range(n):
        representative.setdefault(canon[state], state)
    order = _topological_order(canon[0], representative, canon, edges, default)
    new_id = {cls: i for i, cls in enumerate(order)}
    new_edges: list[dict[int, int]] = []
    new_default: list[int] = []
    new_outcomes: list[int] = []
    for cls in order:
        state = representative[cls]
        dflt = new_id[canon[default[state]]] if default[state] != NO_STATE else NO_STATE
        out = {label: new_id[canon[t]] for label, t in sorted(edges[state].items())}
        new_edges.append({label: t for label, t in out.items() if t != dflt})
        new_default.append(dflt)
        new_outcomes.append(outcomes[state])
    return ParserDWA(tuple(new_edges), tuple(new_default), tuple(new_outcomes))


def _topological_order(root: int, representative: dict[int, int], canon: list[int],
                       edges: list[dict[int, int]], default: list[int]) -> list[int]:
    """Kahn's algorithm over the merged states, so that every edge goes to a larger id."""
    def targets(cls: int) -> list[int]:
        state = representative[cls]
        out = [canon[t] for _, t in sorted(edges[state].items())]
        if default[state] != NO_STATE:
            out.append(canon[default[state]])
        return list(dict.fromkeys(out))

    indegree: dict[int, int] = {root: 0}
    stack, seen = [root], {root}
    while stack:
        for t in targets(stack.pop()):
            indegree[t] = indegree.get(t, 0) + 1
            if t not in seen:
                seen.add(t)
                stack.append(t)
    order, head = [root], 0
    while head < len(order):
        for t in targets(order[head]):
            indegree[t] -= 1
            if indegree[t] == 0:
                order.append(t)
        head += 1
    return order
