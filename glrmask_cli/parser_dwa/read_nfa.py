"""The read NFA: a nondeterministic automaton over old-stack labels (LR states, top first, plus ANY).

Reading a word p from the start and ending in a node that accepts outcome o means: o's token can be
consumed from every stack that starts with p (ANY matches any state). Epsilon edges carry the
parser's work that does not look at the old stack. Nodes are numbered in creation order; the graph
is acyclic.
"""

from __future__ import annotations

from typing import Iterable, Mapping


class ReadNFA:
    def __init__(self) -> None:
        self.epsilon: list[list[int]] = []
        self.reads: list[dict[int, dict[int, None]]] = []   # node -> label -> targets (an ordered set)
        self.accepted: list[int] = []          # bitset of outcome ids accepted at the node
        self._chains: dict[tuple[tuple[int, ...], int], int] = {}
        self.start = self.add_node()

    def add_node(self, accepted: int = 0) -> int:
        self.epsilon.append([])
        self.reads.append({})
        self.accepted.append(accepted)
        return len(self.accepted) - 1

    def add_read(self, source: int, label: int, target: int) -> None:
        self.reads[source].setdefault(label, {})[target] = None

    def add_epsilon(self, source: int, target: int) -> None:
        if target != source and target not in self.epsilon[source]:
            self.epsilon[source].append(target)

    def chain(self, labels: tuple[int, ...], target: int) -> int:
        """A node from which reading exactly `labels` leads to `target` (shared between callers)."""
        node = target
        for i in range(len(labels) - 1, -1, -1):
            key = (labels[i:], target)
            cached = self._chains.get(key)
            if cached is None:
                cached = self._chains[key] = self.add_node()
                self.add_read(cached, labels[i], node)
            node = cached
        return node

    def connect(self, source: int, labels: tuple[int, ...], target: int) -> None:
        """Add a path source --labels--> target (an epsilon edge if labels is empty)."""
        if not labels:
            self.add_epsilon(source, target)
            return
        self.add_read(source, labels[0], self.chain(labels[1:], target))

    @classmethod
    def from_prefixes(cls, prefixes_by_outcome: Mapping[int, Iterable[tuple[int, ...]]]) -> "ReadNFA":
        """An NFA accepting each outcome exactly at its listed read prefixes."""
        nfa = cls()
        for outcome_id in sorted(prefixes_by_outcome):
            accept = nfa.add_node(1 << outcome_id)
            for prefix in sorted(prefixes_by_outcome[outcome_id]):
                nfa.connect(nfa.start, tuple(prefix), accept)
        return nfa
