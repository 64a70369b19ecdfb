"""Stage 7a: splice stack effects into the Terminal DWA's paths -> the read NFA.

Input: the Terminal DWA (closed-lexeme trie + outcomes) and each terminal's stack effects. Output: a
read NFA (read_nfa.py) that accepts outcome o after reading, top first, any old-stack prefix from
which the parser can consume o's closed lexemes and then shift a terminal o's open lexeme can become.

The parser's position after some lexemes is (trie node, W), W = the states written above the
untouched rest of the old stack (top last). What was read before does not change what can happen
next, so (trie node, W) is an NFA node and the old-stack reads are its labelled edges. A terminal's
effects come as a shared graph (parser/stack_effects.py `EffectGraph`): its reads first cancel
against W (a mismatch kills the branch), the rest read the old stack, then its writes replace what
was read, the deepest read state staying (docs/ARCHITECTURE.md, "Parser" and "Parser DWA").
The open lexeme's terminal is not spliced: with canonical LR(1) tables (parser/lr.py) it can be
consumed iff the top state has an action on it, so its check reads at most the top state.
With lark's contextual lexer a trie node also names the context the rest of the token was lexed in
(`TerminalDWA.trie_start`, or several where the rest lexes alike in each: `node_contexts`): an effect
reaches that node only if the state it leaves on top (the last one written: always concrete) belongs
to one of them (`start_of`).
"""

from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

from glrmask_cli.errors import LimitExceeded
from glrmask_cli.limits import DEFAULTS
from glrmask_cli.parser.stack_effects import ANY, EffectGraph, Reach, children_first, reach_by_top
from glrmask_cli.parser_dwa.groups import Group, whole
from glrmask_cli.parser_dwa.read_nfa import ReadNFA
from glrmask_cli.terminal_dwa import FINAL_END, TerminalDWA

Written = tuple[int, ...]
MAX_NFA_NODES = DEFAULTS.max_nfa_nodes   # the default of limit max_nfa_nodes (limits.py); the pipeline passes it


class _Splicer:
    """Builds the read NFA. Nodes: ("at", trie node, W) between lexemes; ("mid", terminal, effect-graph
    node, last read, trie node) while the terminal consumed at that trie node reads the old stack. A
    mid node depends neither on W nor on which child lexeme follows (that is decided when the effect
    ends), so paths that reach into the old stack share it."""

    def __init__(self, scope: _Scope, graphs: Sequence[EffectGraph], max_nodes: int, index: EffectIndex) -> None:
        self.scope, self.graphs, self.max_nodes = scope, graphs, max_nodes
        self.start_of, self.node_contexts = scope.start_of, scope.node_contexts
        self.ignored, self.enters, self.counts = scope.ignored, scope.enters, scope.counts
        self.next_nodes, self.terminals_after = scope.next_nodes, scope.terminals_after
        self.outcomes_at, self.finals_of = scope.outcomes_at, scope.finals_of
        self.tops_with_action = scope.tops_with_action
        self.roots_by_top = index.roots_by_top
        self.exits = index.exits
        self.nfa = ReadNFA()
        n_outcomes = len(scope.tdwa.outcomes)
        if n_outcomes + 1 > max_nodes:     # one acceptance node per outcome, and the start
            raise LimitExceeded("max_nfa_nodes", max_nodes, "parser DWA splice",
                                f"{n_outcomes:,} token outcomes need as many nodes; see docs/ARCHITECTURE.md")
        self.accept: dict[int, int] = {}     # outcome id -> its acceptance node, made when first reached
        self.index: dict[tuple, int] = {("at", 0, ()): self.nfa.start}
        self._accepted: dict[tuple[int, int], list[int]] = {}     # accepted_at
        self.matching_edges = index.matching_edges
        self.todo: list[tuple] = [("at", 0, ())]
        self.future = _Future(scope, index)     # holds the scope, not the splicer: no reference cycle
        self.reach = self.future.reach
        self._useful: dict[tuple[int, int], _Useful] = {}    # useful_at

    def useful_at(self, trie_node: int, terminal: int) -> _Useful:
        """Whether consuming `terminal` at `trie_node` can lead anywhere, per exit set (cached)."""
        found = self._useful.get((trie_node, terminal))
        if found is None:
            found = self._useful[(trie_node, terminal)] = _Useful(self.future, trie_node, terminal)
        return found

    def node(self, key: tuple) -> int:
        found = self.index.get(key)
        if found is None:
            found = self.index[key] = self.nfa.add_node()
            self.todo.append(key)
            if len(self.nfa.accepted) > self.max_nodes:
                raise LimitExceeded("max_nfa_nodes", self.max_nodes, "parser DWA splice",
                                    "too many (lexeme position, stack) combinations; see docs/ARCHITECTURE.md")
        return found

    def targets(self, trie_node: int, terminal: int, written: Written) -> list[int]:
        """The positions reached by consuming `terminal` at `trie_node` with `written` on top: one per
        trie child whose lexeme can be `terminal`."""
        found = []
        enters, node = self.enters, self.node
        if not written:
            return [node(("at", child, written)) for child in self.next_nodes[(trie_node, terminal)] if enters[child]]
        top, depth = written[-1], len(written)
        node_contexts = self.node_contexts
        context = self.start_of[top] if self.start_of is not None and node_contexts is not None else None
        for child in self.next_nodes[(trie_node, terminal)]:
            if not enters[child]:
                continue
            if context is not None and node_contexts is not None:
                needed = node_contexts[child]
                if needed is not None and context not in needed:
                    continue    # the rest of the token was lexed in another context
            visible = self.reach(child, top)    # the rest of the token never looks deeper than this
            if not visible:
                continue        # nothing below the child can happen on this top
            found.append(node(("at", child, written[depth - visible:] if depth > visible else written)))
        return found

    def run(self) -> ReadNFA:
        while self.todo:
            key = self.todo.pop()
            if key[0] == "at":
                self.expand_position(key[1], key[2], self.index[key])
            else:
                self.expand_mid(key, self.index[key])
        return self.nfa

    def expand_position(self, trie_node: int, written: Written, source: int) -> None:
        if self.counts[trie_node]:
            if written:
                for outcome_id in self.accepted_at(trie_node, written[-1]):
                    self.nfa.add_epsilon(source, self.acceptance(outcome_id))
            else:
                for outcome_id, final in self.outcomes_at.get(trie_node, ()):
                    self.accept_on_reads(source, outcome_id, final)
        for terminal in self.terminals_after.get(trie_node, ()):
            if any(self.enters[child] for child in self.next_nodes[(trie_node, terminal)]):
                self.consume(source, written, terminal, trie_node)

    def acceptance(self, outcome_id: int) -> int:
        """The node that accepts the outcome, made when first reached."""
        accept = self.accept.get(outcome_id)
        if accept is None:
            accept = self.accept[outcome_id] = self.nfa.add_node(1 << outcome_id)
        return accept

    def accepted_at(self, trie_node: int, top: int) -> list[int]:
        """The outcomes ending at `trie_node` that are accepted with `top` on top: their open
        lexeme's terminal (or END) has an action there, or may be ignored (cached)."""
        key = (trie_node, top)
        found = self._accepted.get(key)
        if found is None:
            found = self._accepted[key] = [
                outcome_id for outcome_id, final in self.outcomes_at.get(trie_node, ())
                if self.ignored.intersection(finals := self.finals_of(final))
                or top in self.tops_with_action(finals)[1]]
        return found

    def accept_on_reads(self, source: int, outcome_id: int, final: int) -> None:
        """Accept the outcome after reading a top with an action on its open lexeme's terminal (or
        END), with nothing written above the old stack."""
        finals, accept = self.finals_of(final), self.acceptance(outcome_id)
        if self.ignored.intersection(finals):
            self.nfa.add_epsilon(source, accept)
        else:
            for top in self.tops_with_action(finals)[0]:
                self.nfa.add_read(source, top, accept)

    def consume(self, source: int, written: Written, terminal: int, trie_node: int) -> None:
        """Splice one terminal's effect graph in after the written states `written`."""
        if terminal in self.ignored:
            for target in self.targets(trie_node, terminal, written):
                self.nfa.add_epsilon(source, target)
            return
        graph = self.graphs[terminal]
        exits, useful = self.exits(terminal), self.useful_at(trie_node, terminal)
        if not written:
            for top, graph_node in graph.roots:
                if useful[exits[graph_node]]:
                    self.nfa.add_read(source, top, self.node(("mid", terminal, graph_node, top, trie_node)))
            return
        by_top = self.roots_by_top[terminal]
        for graph_node in by_top.get(written[-1], ()) + by_top.get(ANY, ()):
            if useful[exits[graph_node]]:
                self.walk_written(source, written, terminal, graph_node, trie_node)

    def walk_written(self, source: int, written: Written, terminal: int, root: int, trie_node: int) -> None:
        """Follow the effect graph while its reads cancel against the written states. A graph node is
        visited once per number of written states matched (the graph shares nodes between paths)."""
        graph = self.graphs[terminal]
        finals, graph_edges = graph.finals, graph.edges
        exits, useful = self.exits(terminal), self.useful_at(trie_node, terminal)
        targets, add_epsilon, matching_edges = self.targets, self.nfa.add_epsilon, self.matching_edges
        depth = len(written)
        todo, seen = [(root, 1)], set()
        while todo:
            key = todo.pop()
            if key in seen:
                continue
            seen.add(key)
            graph_node, matched = key
            if finals[graph_node]:
                keep = written[:depth - matched + 1]      # the deepest read state stays on the stack
                for writes in finals[graph_node]:
                    for target in targets(trie_node, terminal, keep + writes):
                        add_epsilon(source, target)
            left = depth - matched
            edges = graph_edges[graph_node] if not left else matching_edges(terminal, graph_node, written, left)
            for labels, next_node in edges:
                if not useful[exits[next_node]]:
                    continue
                if len(labels) <= left:
                    todo.append((next_node, matched + len(labels)))
                else:
                    rest = labels[left:]
                    self.nfa.connect(source, rest, self.node(("mid", terminal, next_node, rest[-1], trie_node)))

    def expand_mid(self, key: tuple, source: int) -> None:
        _, terminal, graph_node, last, trie_node = key
        graph = self.graphs[terminal]
        if graph.finals[graph_node] and last == ANY:
            raise AssertionError("an effect must end on a concrete read (the exposed state)")
        for writes in graph.finals[graph_node]:
            for target in self.targets(trie_node, terminal, (last,) + writes):
                self.nfa.add_epsilon(source, target)
        exits, useful = self.exits(terminal), self.useful_at(trie_node, terminal)
        for labels, next_node in graph.edges[graph_node]:
            if not useful[exits[next_node]]:
                continue
            new_last = labels[-1] if labels else last
            self.nfa.connect(source, labels, self.node(("mid", terminal, next_node, new_last, trie_node)))

class EffectIndex:
    """What every group's splice looks up in the effect graphs, computed once per build: each
    graph's roots by the top state they read, and on first use (3,000 keywords have 3,000 graphs,
    most never consumed inside a token) its `reach_by_top` and its `exits`."""

    def __init__(self, graphs: Sequence[EffectGraph]) -> None:
        self._graphs = graphs
        self.roots_by_top = [_roots_by_top(graph) for graph in graphs]
        self._reach: dict[int, dict[int, Reach]] = {}
        self._exits: dict[int, list[frozenset[int]]] = {}
        self._edge_lookup: dict[tuple[int, int], tuple[int, dict[int, list]]] = {}   # matching_edges

    def reach(self, terminal: int) -> dict[int, Reach]:
        found = self._reach.get(terminal)
        if found is None:
            found = self._reach[terminal] = reach_by_top(self._graphs[terminal])
        return found

    def matching_edges(self, terminal: int, graph_node: int, written: Written,
                       left: int) -> list[tuple[tuple[int, ...], int]]:
        """The graph node's edges whose reads agree with the `left` written states still above the
        old stack (read top first: label i meets written[left - 1 - i]; ANY meets anything), found by
        lookup rather than by trying every edge (a goto branches over hundreds of states). Order:
        edges without reads, then those reading ANY first, then the others, each in graph order."""
        lookup = self._edge_lookup.get((terminal, graph_node))
        if lookup is None:
            edges = self._graphs[terminal].edges[graph_node]
            lookup = self._edge_lookup[(terminal, graph_node)] = (max((len(e[0]) for e in edges), default=0), {})
        longest, by_cap = lookup
        cap = min(left, longest)
        groups = by_cap.get(cap)
        if groups is None:
            groups = by_cap[cap] = self._edge_groups(terminal, graph_node, cap)
        hits = []
        for positions, by_values in groups:
            hit = by_values.get(tuple([written[left - 1 - p] for p in positions]))
            if hit is not None:
                hits.append(hit)
        if len(hits) == 1:
            return hits[0][1]
        order = sorted((key, edge) for keys, edges in hits for key, edge in zip(keys, edges))
        return [edge for _, edge in order]

    def _edge_groups(self, terminal: int, graph_node: int, cap: int) -> list:
        """The edges by which of their first `cap` reads are concrete (not ANY) and by those states:
        [(positions, {states: ([(rank, index)], [edge])})], each list in the order matching_edges gives."""
        groups: dict[tuple[int, ...], dict[tuple[int, ...], list]] = {}
        for i, edge in enumerate(self._graphs[terminal].edges[graph_node]):
            labels = edge[0]
            rank = 0 if not labels else 1 if labels[0] == ANY else 2
            positions = tuple(p for p, label in enumerate(labels[:cap]) if label != ANY)
            states = tuple(labels[p] for p in positions)
            groups.setdefault(positions, {}).setdefault(states, []).append(((rank, i), edge))
        for by_values in groups.values():
            for found in by_values.values():
                found.sort()
        return [(positions, {states: ([key for key, _ in found], [edge for _, edge in found])
                             for states, found in by_values.items()})
                for positions, by_values in groups.items()]

    def exits(self, terminal: int) -> list[frozenset[int]]:
        """Per node of the terminal's graph, the states its effects from there leave on top (where
        the terminal is shifted; ANY for an effect that writes nothing, whose top is the state it
        read last); equal sets are one object (sql.lark: 6k sets for 652k nodes)."""
        found = self._exits.get(terminal)
        if found is None:
            graph = self._graphs[terminal]
            found = [frozenset()] * len(graph.edges)
            interned: dict[frozenset[int], frozenset[int]] = {}
            for node in children_first(graph):
                tops = {writes[-1] if writes else ANY for writes in graph.finals[node]}
                below = {id(found[nxt]): found[nxt] for _, nxt in graph.edges[node]}
                exits = frozenset(tops).union(*below.values()) if below else frozenset(tops)
                found[node] = interned.setdefault(exits, exits)
            self._exits[terminal] = found
        return found


class TrieIndex:
    """What every group's splice looks up in one Terminal DWA's lexeme trie, computed once per
    Terminal DWA (the grouped layout of 1,000 keywords builds 1,000 groups):
    next_nodes[(trie node, terminal)]: the children whose closed lexeme can be that terminal;
    terminals_after[trie node]: those terminals, sorted; outcomes_at[trie node]: (outcome id, final)
    of the outcome paths that end there; node_contexts: `TerminalDWA.node_contexts` (the contextual
    lexer's; made on first use, once per process)."""

    def __init__(self, tdwa: TerminalDWA, term_sets: list[tuple[int, ...]]) -> None:
        self._tdwa = tdwa
        parent, set_of = tdwa.trie_parent.tolist(), tdwa.trie_set.tolist()
        found: dict[tuple[int, int], list[int]] = {}
        for child in range(1, len(parent)):
            for terminal in term_sets[set_of[child]]:
                found.setdefault((parent[child], terminal), []).append(child)
        self.next_nodes = {key: tuple(children) for key, children in found.items()}
        after: dict[int, set[int]] = {}
        for node, terminal in self.next_nodes:
            after.setdefault(node, set()).add(terminal)
        self.terminals_after = {node: sorted(terminals) for node, terminals in after.items()}
        self.outcomes_at: dict[int, list[tuple[int, int]]] = {}   # trie node -> (outcome id, final) per path
        for outcome_id, outcome in enumerate(tdwa.outcomes):
            for node, final in outcome.paths:
                self.outcomes_at.setdefault(node, []).append((outcome_id, final))

    @functools.cached_property
    def node_contexts(self) -> list[frozenset[int] | None]:
        return self._tdwa.node_contexts()


class _Scope:
    """What one group's splice reads and never changes: the Terminal DWA's trie (`TrieIndex`), which
    trie nodes the group enters and counts, and the LR states with an action on a terminal set
    (shared by the splicer and its `_Future`)."""

    def __init__(self, tdwa: TerminalDWA, term_sets: list[tuple[int, ...]], has_action: np.ndarray,
                 ignored: frozenset[int], end_terminal: int, group: Group, trie: TrieIndex,
                 start_of: Sequence[int] | None) -> None:
        self.tdwa, self.term_sets, self.has_action = tdwa, term_sets, has_action
        self.ignored, self.end_terminal, self.group = ignored, end_terminal, group
        self.start_of = start_of
        self.node_contexts = trie.node_contexts if start_of is not None else None
        self.next_nodes, self.terminals_after = trie.next_nodes, trie.terminals_after
        self.outcomes_at = trie.outcomes_at
        self._tops: dict[tuple[int, ...], tuple[tuple[int, ...], frozenset[int]]] = {}
        self.counts, self.enters = self._nodes()

    def _nodes(self) -> tuple[list[bool], list[bool]]:
        """Per trie node: its outcomes belong to the group (inside a subtree, or an exact node); the
        splice may reach it (inside a subtree, or on the way to a group node)."""
        parent, subtrees, exact = self.tdwa.trie_parent, self.group.subtrees, self.group.exact
        inside = [False] * len(parent)
        for node in range(len(parent)):          # parents are numbered before their children
            inside[node] = node in subtrees or (node != 0 and inside[int(parent[node])])
        counts = [flag or node in exact for node, flag in enumerate(inside)]
        enters = list(inside)
        for node in subtrees | exact:
            enters[node] = True
            node = int(parent[node])    # a subtree's root is inside, its ancestors are not
            while node and not enters[node]:
                enters[node] = True
                node = int(parent[node])
        return counts, enters

    def finals_of(self, final: int) -> tuple[int, ...]:
        return (self.end_terminal,) if final == FINAL_END else self.term_sets[final]

    def tops_with_action(self, finals: tuple[int, ...]) -> tuple[tuple[int, ...], frozenset[int]]:
        """The LR states with an action on one of `finals`, in order and as a set (cached per set)."""
        found = self._tops.get(finals)
        if found is None:
            tops = tuple(int(p) for p in np.flatnonzero(self.has_action[:, list(finals)].any(axis=1)))
            found = self._tops[finals] = (tops, frozenset(tops))
        return found


class _Useful(dict[frozenset[int], bool]):
    """`_Future.useful` at one (trie node, terminal), by exit set, computed when first asked
    (`useful[exits]`: a dict lookup, which the splice makes millions of times; exit sets are
    interned, so equal ones are one object and hash once)."""

    __slots__ = ("_future", "_node", "_terminal")

    def __init__(self, future: _Future, node: int, terminal: int) -> None:
        super().__init__()
        self._future, self._node, self._terminal = future, node, terminal

    def __missing__(self, exits: frozenset[int]) -> bool:
        found = self[exits] = self._future.useful(self._node, self._terminal, exits)
        return found


class _Future:
    """What the rest of a token can still do in one group, from a trie node with a given state on
    top (the splice asks after each lexeme):
    reach(node, top): how many states below the top (the top included) the rest of the token reads,
    as an upper bound; 0 when none of the group's outcomes below `node` can be accepted with `top`
    on top. Written states deeper than that cannot matter, so positions keep only the visible ones
    (exact, and far fewer positions: a bound per terminal alone grows with every lexeme of a long
    token, and a bound over the whole trie with every lexeme the group does not contain).
    useful(node, terminal, exits): whether consuming `terminal` at `node` and leaving one of the
    states `exits` on top can lead to an outcome of the group (the splice follows an effect graph
    only where it can: most of a terminal's effects end on tops that the next lexeme of the group
    cannot follow)."""

    def __init__(self, scope: _Scope, index: EffectIndex) -> None:
        self._s = scope
        self._reach_of = index.reach
        self._reach: dict[tuple[int, int], int] = {}
        self._follows: dict[tuple[int, int, int], bool] = {}

    def reach(self, node: int, top: int) -> int:
        memo = self._reach
        found = memo.get((node, top))
        if found is not None:
            return found
        todo = [(node, top)]
        while todo:
            key = todo[-1]
            if key in memo:
                todo.pop()
                continue
            needed, missing = self._reach_from(*key)
            if missing:
                todo.extend(missing)
            else:
                memo[key] = needed
                todo.pop()
        return memo[(node, top)]

    def useful(self, node: int, terminal: int, exits: frozenset[int]) -> bool:
        return any(top == ANY or self.follows(node, terminal, top) for top in exits)

    def follows(self, node: int, terminal: int, top: int) -> bool:
        """Whether some child of `node` by `terminal` can lead to an outcome with `top` on top."""
        key = (node, terminal, top)
        found = self._follows.get(key)
        if found is None:
            found = self._follows[key] = any(self.reach(child, top) for child in self._children(node, terminal, top))
        return found

    def _children(self, node: int, terminal: int, top: int) -> list[int]:
        """The children of `node` by `terminal` in the group whose context `top` is of."""
        s = self._s
        children = [child for child in s.next_nodes[(node, terminal)] if s.enters[child]]
        if s.start_of is None or s.node_contexts is None:
            return children
        context, contexts = s.start_of[top], s.node_contexts
        return [child for child in children if (needed := contexts[child]) is None or context in needed]

    def _accepts(self, node: int, top: int) -> bool:
        """Some outcome of the group that ends at `node` can be accepted with `top` on top."""
        s = self._s
        if not s.counts[node]:
            return False
        for _, final in s.outcomes_at.get(node, ()):
            finals = s.finals_of(final)
            if s.ignored.intersection(finals) or top in s.tops_with_action(finals)[1]:
                return True
        return False

    def _reach_from(self, node: int, top: int) -> tuple[int, list[tuple[int, int]]]:
        """(the reach at (node, top), []) once every child's reach it needs is known, else (0, those)."""
        memo, missing, s = self._reach, [], self._s
        needed = 1 if self._accepts(node, top) else 0
        for terminal in s.terminals_after.get(node, ()):
            if terminal in s.ignored:
                for child in self._children(node, terminal, top):
                    below = memo.get((child, top))
                    if below is None:
                        missing.append((child, top))
                    else:
                        needed = max(needed, below)
                continue
            by_top = self._reach_of(terminal)
            for start in (top, ANY):
                reach = by_top.get(start)
                if reach is None:
                    continue
                for after, lowered, reads in reach.after:
                    for child in self._children(node, terminal, after):
                        below = memo.get((child, after))
                        if below is None:
                            missing.append((child, after))
                        elif below:
                            needed = max(needed, reads, lowered + below)
        return needed, missing


def _roots_by_top(graph: EffectGraph) -> dict[int, tuple[int, ...]]:
    by_top: dict[int, list[int]] = {}
    for top, node in graph.roots:
        by_top.setdefault(top, []).append(node)
    return {top: tuple(nodes) for top, nodes in by_top.items()}


def build_read_nfa(tdwa: TerminalDWA, term_sets: list[tuple[int, ...]], graphs: Sequence[EffectGraph],
                   has_action: np.ndarray, ignored: frozenset[int], end_terminal: int,
                   group: Group | None = None, max_nodes: int = MAX_NFA_NODES,
                   index: EffectIndex | None = None, trie: TrieIndex | None = None,
                   start_of: Sequence[int] | None = None) -> ReadNFA:
    """The read NFA of the outcomes of `group` (default: all) of the Terminal DWA (see the module
    docstring). `has_action[p, t]`: LR state p has an action on terminal t. LimitExceeded past
    `max_nodes` nodes. `index`: `EffectIndex(graphs)`, `trie`: `TrieIndex(tdwa, ...)` (pass them
    when building many groups). `start_of[p]`: the START of LR state p's context, with lark's
    contextual lexer (None: the basic lexer, nothing to check)."""
    group = group if group is not None else whole(tdwa)[0]
    index = index if index is not None else EffectIndex(graphs)
    trie = trie if trie is not None else TrieIndex(tdwa, term_sets)
    scope = _Scope(tdwa, term_sets, has_action, ignored, end_terminal, group, trie, start_of)
    return _Splicer(scope, graphs, max_nodes, index).run()
