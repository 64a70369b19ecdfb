"""Stage 6a: splice stack effects into the Terminal DWA's paths -> the read NFA.

Input: the Terminal DWA (closed-lexeme trie + outcomes) and each terminal's stack effects. Output: a
read NFA (read_nfa.py) that accepts outcome o after reading, top first, any old-stack prefix from
which the parser can consume o's closed lexemes and then shift a terminal o's open lexeme can become.

The parser's position after some lexemes is (trie node, W), W = the states written above the
untouched rest of the old stack (top last). What was read before does not change what can happen
next, so (trie node, W) is an NFA node and the old-stack reads are its labelled edges. A terminal's
effects come as a shared graph (parser/stack_effects.py `EffectGraph`): its reads first cancel
against W (a mismatch kills the branch), the rest read the old stack, then its writes replace what
was read, the deepest read state staying (DESIGN 3a, seed notes "Stack effects").
"""

from __future__ import annotations

import functools
from typing import Sequence

from glrmask_cli.errors import LimitExceeded
from glrmask_cli.parser.stack_effects import ANY, EffectGraph
from glrmask_cli.parser_dwa.read_nfa import ReadNFA
from glrmask_cli.terminal_dwa import FINAL_END, TerminalDWA

Written = tuple[int, ...]
MAX_NFA_NODES = 5_000_000


class _Splicer:
    """Builds the read NFA. Nodes: ("at", trie node, W) between lexemes; ("mid", terminal, effect-graph
    node, last read, continuation) while one terminal's effect reads the old stack. A mid node depends
    neither on W nor on where it came from, so paths that reach into the old stack share it."""

    def __init__(self, tdwa: TerminalDWA, term_sets: list[tuple[int, ...]], graphs: Sequence[EffectGraph],
                 ignored: frozenset[int], end_terminal: int):
        self.tdwa, self.term_sets, self.graphs = tdwa, term_sets, graphs
        self.ignored, self.end_terminal = ignored, end_terminal
        self.roots_by_top = [_roots_by_top(g) for g in graphs]
        self.nfa = ReadNFA()
        self.accept = [self.nfa.add_node(1 << o) for o in range(len(tdwa.outcomes))]
        self.index: dict[tuple, int] = {("at", 0, ()): self.nfa.start}
        self.todo: list[tuple] = [("at", 0, ())]

    def node(self, key: tuple) -> int:
        found = self.index.get(key)
        if found is None:
            found = self.index[key] = self.nfa.add_node()
            self.todo.append(key)
            if len(self.nfa.accepted) > MAX_NFA_NODES:
                raise LimitExceeded("max_nfa_nodes", MAX_NFA_NODES, "parser DWA splice",
                                    "too many (lexeme position, stack) combinations; see docs/ARCHITECTURE.md")
        return found

    def target(self, continuation: tuple[str, int], written: Written) -> int:
        """Where a terminal's effect leads: the next lexeme position, or an outcome's acceptance."""
        kind, value = continuation
        return self.accept[value] if kind == "accept" else self.node(("at", value, written))

    def run(self) -> ReadNFA:
        while self.todo:
            key = self.todo.pop()
            if key[0] == "at":
                self.expand_position(key[1], key[2], self.index[key])
            else:
                self.expand_mid(key, self.index[key])
        return self.nfa

    def expand_position(self, trie_node: int, written: Written, source: int) -> None:
        for outcome_id in self.outcomes_at.get(trie_node, ()):
            final = self.tdwa.outcomes[outcome_id].final
            finals = (self.end_terminal,) if final == FINAL_END else self.term_sets[final]
            for terminal in finals:
                self.consume(source, written, terminal, ("accept", outcome_id))
        for child in self.children.get(trie_node, ()):
            for terminal in self.term_sets[int(self.tdwa.trie_set[child])]:
                self.consume(source, written, terminal, ("trie", child))

    def consume(self, source: int, written: Written, terminal: int, continuation: tuple[str, int]) -> None:
        """Splice one terminal's effect graph in after the written states `written`."""
        if terminal in self.ignored:
            self.nfa.add_epsilon(source, self.target(continuation, written))
            return
        graph = self.graphs[terminal]
        if not written:
            for top, graph_node in graph.roots:
                self.nfa.add_read(source, top, self.node(("mid", terminal, graph_node, top, continuation)))
            return
        by_top = self.roots_by_top[terminal]
        for graph_node in by_top.get(written[-1], ()) + by_top.get(ANY, ()):
            self.walk_written(source, written, terminal, graph_node, continuation)

    def walk_written(self, source: int, written: Written, terminal: int, root: int,
                     continuation: tuple[str, int]) -> None:
        """Follow the effect graph while its reads cancel against the written states. A graph node is
        visited once per number of written states matched (the graph shares nodes between paths)."""
        graph = self.graphs[terminal]
        todo, seen = [(root, 1)], set()
        while todo:
            graph_node, matched = todo.pop()
            if (graph_node, matched) in seen:
                continue
            seen.add((graph_node, matched))
            keep = written[:len(written) - matched + 1]      # the deepest read state stays on the stack
            for writes in graph.finals[graph_node]:
                self.nfa.add_epsilon(source, self.target(continuation, keep + writes))
            for labels, next_node in graph.edges[graph_node]:
                inside = min(len(labels), len(written) - matched)
                if any(label != ANY and label != written[len(written) - matched - 1 - i]
                       for i, label in enumerate(labels[:inside])):
                    continue
                if inside == len(labels):
                    todo.append((next_node, matched + inside))
                else:
                    rest = labels[inside:]
                    self.nfa.connect(source, rest, self.node(("mid", terminal, next_node, rest[-1], continuation)))

    def expand_mid(self, key: tuple, source: int) -> None:
        _, terminal, graph_node, last, continuation = key
        graph = self.graphs[terminal]
        if graph.finals[graph_node] and last == ANY:
            raise AssertionError("an effect must end on a concrete read (the exposed state)")
        for writes in graph.finals[graph_node]:
            self.nfa.add_epsilon(source, self.target(continuation, (last,) + writes))
        for labels, next_node in graph.edges[graph_node]:
            new_last = labels[-1] if labels else last
            self.nfa.connect(source, labels, self.node(("mid", terminal, next_node, new_last, continuation)))

    @functools.cached_property
    def children(self) -> dict[int, list[int]]:
        children: dict[int, list[int]] = {}
        for node in range(1, len(self.tdwa.trie_parent)):
            children.setdefault(int(self.tdwa.trie_parent[node]), []).append(node)
        return children

    @functools.cached_property
    def outcomes_at(self) -> dict[int, list[int]]:
        found: dict[int, list[int]] = {}
        for outcome_id, outcome in enumerate(self.tdwa.outcomes):
            found.setdefault(outcome.node, []).append(outcome_id)
        return found


def _roots_by_top(graph: EffectGraph) -> dict[int, tuple[int, ...]]:
    by_top: dict[int, list[int]] = {}
    for top, node in graph.roots:
        by_top.setdefault(top, []).append(node)
    return {top: tuple(nodes) for top, nodes in by_top.items()}


def build_read_nfa(tdwa: TerminalDWA, term_sets: list[tuple[int, ...]], graphs: Sequence[EffectGraph],
                   ignored: frozenset[int], end_terminal: int) -> ReadNFA:
    """The read NFA of every outcome of the Terminal DWA (see the module docstring)."""
    return _Splicer(tdwa, term_sets, graphs, ignored, end_terminal).run()
