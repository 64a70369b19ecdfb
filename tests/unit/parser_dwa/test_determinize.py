"""The determinized, minimized Parser DWA must answer exactly what matching the read prefixes one by
one answers, for every stack."""

from unittest import mock

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import glrmask_cli.parser_dwa.determinize as determinize_module
from glrmask_cli.errors import LimitExceeded
from glrmask_cli.parser.stack_effects import ANY
from glrmask_cli.parser_dwa.determinize import NO_STATE, ParserDWA, StatePool, _topological_levels, determinize
from glrmask_cli.parser_dwa.read_nfa import ReadNFA
from tests.support.dwa_walk import walk

LABELS = [0, 1, 2, 3]


def matches(prefix, stack):
    return len(prefix) <= len(stack) and all(p == ANY or p == s for p, s in zip(prefix, stack, strict=False))


prefix = st.lists(st.sampled_from(LABELS + [ANY]), max_size=4).map(
    lambda p: tuple(p[: max((i + 1 for i, x in enumerate(p) if x != ANY), default=0)]))
prefix_sets = st.dictionaries(st.integers(0, 6), st.sets(prefix, min_size=1, max_size=4), max_size=7)
stacks = st.lists(st.sampled_from(LABELS), min_size=1, max_size=6)


@given(prefix_sets, st.lists(stacks, min_size=1, max_size=10))
def test_dwa_walk_equals_direct_prefix_matching(by_outcome, sample_stacks):
    dwa = determinize([ReadNFA.from_prefixes(by_outcome)])
    for stack in sample_stacks:
        expected = 0
        for outcome, prefixes in by_outcome.items():
            if any(matches(p, stack) for p in prefixes):
                expected |= 1 << outcome
        assert walk(dwa, stack) == expected


@given(prefix_sets)
def test_minimized_dwa_is_deterministic_and_layered(by_outcome):
    dwa = determinize([ReadNFA.from_prefixes(by_outcome)])
    again = determinize([ReadNFA.from_prefixes(dict(reversed(list(by_outcome.items()))))])
    for field in ("offsets", "labels", "targets", "default"):
        assert np.array_equal(getattr(dwa, field), getattr(again, field))
    assert dwa.outcomes == again.outcomes
    for d in range(dwa.n_states):
        for target in list(dwa.edges(d).values()) + [dwa.default[d]]:
            assert target == NO_STATE or target > d
    longest = max((len(p) for ps in by_outcome.values() for p in ps), default=0)
    assert dwa.depth() <= longest


def test_shared_prefixes_are_merged():
    # Two outcomes read the same prefix; a third reads only the top: three states at most.
    dwa = determinize([ReadNFA.from_prefixes({0: {(1, 2)}, 1: {(1, 2)}, 2: {(1,)}})])
    assert dwa.n_states == 3


@given(prefix_sets, prefix_sets, st.lists(stacks, min_size=1, max_size=10))
def test_groups_sharing_a_pool_walk_as_their_own_automata(first, second, sample_stacks):
    # The grouped layout hashes every group into one StatePool; each root must answer like that
    # group's automaton alone, and a group's size is its own minimal size (it decides merging).
    pool = StatePool()
    parts = [pool.add_group(ReadNFA.from_prefixes(p)) for p in (first, second)]
    together = pool.dwa([part.root for part in parts])
    for part, prefixes, root in zip(parts, (first, second), together.roots, strict=True):
        alone = determinize([ReadNFA.from_prefixes(prefixes)])
        assert part.n_states == alone.n_states
        for stack in sample_stacks:
            assert walk(together, stack, root) == walk(alone, stack)
    assert together.n_states <= sum(part.n_states for part in parts)


def test_a_group_over_the_state_limit_adds_nothing_to_the_pool():
    pool = StatePool()
    pool.add_group(ReadNFA.from_prefixes({0: {(1, 2)}}))
    size = len(pool.signatures)
    with pytest.raises(LimitExceeded):
        pool.add_group(ReadNFA.from_prefixes({0: {(1, 2, 3)}, 1: {(2, 3, 1)}, 2: {(3, 1, 2)}}), max_states=3)
    assert len(pool.signatures) == size


@given(st.lists(prefix_sets, min_size=1, max_size=4))
def test_groups_absorbed_from_their_own_pools_give_the_same_pool(groups):
    # A worker process builds its group into a pool of its own; the parent absorbs that pool's states.
    # The shared pool must come out exactly as if every group had been added to it directly.
    direct, absorbed = StatePool(), StatePool()
    for prefixes in groups:
        part = direct.add_group(ReadNFA.from_prefixes(prefixes))
        own = StatePool()
        own_part = own.add_group(ReadNFA.from_prefixes(prefixes))
        assert absorbed.absorb(own.signatures, own_part) == part
    assert absorbed.signatures == direct.signatures


@given(prefix_sets, st.lists(st.sampled_from(LABELS), min_size=1, max_size=9),
       st.lists(stacks, min_size=1, max_size=10))
def test_relabelled_dwa_walks_real_states_as_the_quotient_walks_their_classes(by_outcome, state_class, sample_stacks):
    # The Parser DWA is built over classes of LR states and relabelled to the real states: a walk
    # down real states must answer what the quotient's walk down their classes answers.
    dwa = determinize([ReadNFA.from_prefixes(by_outcome)])
    state_class = np.asarray(state_class, dtype=np.int64)
    real = dwa.relabel(state_class)
    for d in range(real.n_states):
        labels = real.labels[real.offsets[d]:real.offsets[d + 1]]
        assert (np.diff(labels) > 0).all()
    for stack in sample_stacks:
        stack = [s % len(state_class) for s in stack]
        assert walk(real, stack) == walk(dwa, [int(state_class[s]) for s in stack])


@st.composite
def _dags(draw):
    """A DAG as successor lists (edges only to larger ids, each target once per state) and roots
    (possibly repeated, possibly with predecessors)."""
    n = draw(st.integers(1, 40))
    succ = [sorted(draw(st.sets(st.integers(i + 1, n - 1), max_size=4))) if i + 1 < n else [] for i in range(n)]
    for targets in succ:
        draw(st.randoms()).shuffle(targets)       # the lists' own order matters to the numbering
    roots = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4))
    return succ, roots


def _fifo_kahn(succ: list[list[int]], roots: list[int]) -> list[int]:
    """Kahn's algorithm one state at a time with a FIFO queue, over the states the roots reach
    (roots in order, first occurrences; a root with predecessors waits for them)."""
    starts = list(dict.fromkeys(roots))
    indegree = {root: 0 for root in starts}
    stack, seen = list(starts), set(starts)
    while stack:
        for t in succ[stack.pop()]:
            indegree[t] = indegree.get(t, 0) + 1
            if t not in seen:
                seen.add(t)
                stack.append(t)
    order, head = [r for r in starts if indegree[r] == 0], 0
    while head < len(order):
        for t in succ[order[head]]:
            indegree[t] -= 1
            if indegree[t] == 0:
                order.append(t)
        head += 1
    return order


@given(_dags())
def test_topological_levels_is_fifo_kahn(dag):
    """The numpy generation-at-a-time numbering of a group's and the layout's automata is exactly
    the FIFO Kahn order (the artifact's state numbers depend on it)."""
    succ, roots = dag
    offsets = np.zeros(len(succ) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(t) for t in succ])
    flat = np.asarray([t for targets in succ for t in targets], dtype=np.int64)
    assert _topological_levels(offsets, flat, roots) == _fifo_kahn(succ, roots)


@given(st.data())
def test_successors_and_depth_across_blocks(data):
    """`successors_backward` reads the edges a block of states at a time; with blocks of three states,
    random layered automata (repeated targets, defaults equal to an edge's target) must give every
    state's distinct successors, last state first, and `depth()` the longest path a direct search finds."""
    n = data.draw(st.integers(1, 12))
    edges = [data.draw(st.lists(st.integers(d + 1, n - 1), max_size=5)) if d + 1 < n else [] for d in range(n)]
    default = [data.draw(st.sampled_from([NO_STATE] + list(range(d + 1, n)))) for d in range(n)]
    offsets = np.cumsum([0] + [len(e) for e in edges]).astype(np.int64)
    flat = np.asarray([t for e in edges for t in e], dtype=np.int64)
    dwa = ParserDWA(offsets, np.arange(len(flat), dtype=np.int64), flat, np.asarray(default, dtype=np.int64),
                    (0,) * n, roots=(0,))

    def nexts(d):
        return set(edges[d]) | ({default[d]} if default[d] != NO_STATE else set())

    def longest(d):   # states on the longest path from d
        return 1 + max((longest(t) for t in nexts(d)), default=0)

    with mock.patch.object(determinize_module, "_BLOCK", 3):
        found = list(dwa.successors_backward())
        depth = dwa.depth()
    assert [state for state, _ in found] == list(reversed(range(n)))
    for state, successors in found:
        assert sorted(successors) == sorted(nexts(state))      # each once
    assert depth == longest(0) - 1
