"""Splicing stack effects into lexeme paths (write/read cancellation, reads into the old stack): the
whole splice + determinize stage against a direct simulation of the effects on concrete stacks. The
open lexeme's terminal is checked on the top state only (the canonical LR(1) contract, parser/lr.py)."""

import gc
import itertools

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from glrmask_cli.parser.stack_effects import ANY, EffectGraph, StackEffect
from glrmask_cli.parser_dwa.determinize import determinize
from glrmask_cli.parser_dwa.splice import build_read_nfa
from glrmask_cli.terminal_dwa import FINAL_END, Outcome, TerminalDWA
from glrmask_runtime.tables import START
from tests.support.dwa_walk import walk

B, C, P, R, S, U = 10, 11, 12, 13, 14, 15


# ---- the whole stage against direct simulation ----------------------------------------------

LABELS = [0, 1, 2]
TERMINALS = [0, 1, 2]
END = 3

effect = st.builds(
    lambda body, last, writes: StackEffect(tuple(body) + (last,), tuple(writes)),
    st.lists(st.sampled_from(LABELS + [ANY]), max_size=2), st.sampled_from(LABELS),
    st.lists(st.sampled_from(LABELS), max_size=2))
effects_strategy = st.lists(st.lists(effect, max_size=3), min_size=4, max_size=4)
term_sets = [(0,), (1,), (2,), (0, 1)]
paths = st.lists(st.tuples(st.lists(st.integers(0, 3), max_size=3), st.integers(-1, 3)), min_size=1, max_size=5)


def graph_of(terminal, effects):
    """Flat effects as an unshared EffectGraph: root (first read) -> one edge (other reads) -> writes."""
    roots, edges, finals = [], [], []
    for effect in effects:
        head, tail = len(edges), len(edges) + 1
        roots.append((effect.reads[0], head))
        edges += [((effect.reads[1:], tail),), ()]
        finals += [(), (effect.writes,)]
    return EffectGraph(terminal, tuple(roots), tuple(edges), tuple(finals))


def has_action(by_terminal):
    """An LR table's `has action` cells for flat effects: some effect of t starts by reading p."""
    table = np.zeros((16, END + 1), dtype=bool)
    for terminal, effects in enumerate(by_terminal):
        for e in effects:
            table[:, terminal] |= e.reads[0] == ANY
            if e.reads[0] != ANY:
                table[e.reads[0], terminal] = True
    return table


def test_seed_notes_example_cancels_to_one_read():
    # x = b- b+ p+ and ] = p- b- c+ (here: reads keep their deepest state); "x]" reads only b.
    x = StackEffect((B,), (P,))
    bracket = StackEffect((P, B), (C,))
    after = StackEffect((C,), (U,))
    tdwa = make_tdwa([([0, 1], 2)])          # closed lexemes x and ], then the open lexeme
    by_terminal = [[x], [bracket], [after], []]
    graphs = [graph_of(t, effects) for t, effects in enumerate(by_terminal)]
    dwa = determinize([build_read_nfa(tdwa, term_sets, graphs, has_action(by_terminal), frozenset(), END)])
    assert walk(dwa, [B, S]) == 1 and walk(dwa, [P, B]) == 0 and dwa.depth() == 1


def test_a_splice_leaves_no_reference_cycle():
    # builds pace the collector (glrmask_cli/collector.py): a splice's memos must be freed when it
    # ends, by reference counting, not at the collector's next pass
    tdwa = make_tdwa([([0, 1], 2)])
    by_terminal = [[StackEffect((B,), (P,))], [StackEffect((P, B), (C,))], [StackEffect((C,), (U,))], []]
    graphs = [graph_of(t, effects) for t, effects in enumerate(by_terminal)]
    gc.collect()
    gc.disable()
    try:
        build_read_nfa(tdwa, term_sets, graphs, has_action(by_terminal), frozenset(), END)
        assert gc.collect() == 0
    finally:
        gc.enable()


def make_tdwa(path_list):
    parent, tset, index = [0], [0], {}
    outcomes = []
    for lexemes, final in path_list:
        node = 0
        for set_id in lexemes:
            key = (node, set_id)
            if key not in index:
                index[key] = len(parent)
                parent.append(node)
                tset.append(set_id)
            node = index[key]
        outcome = Outcome(node, FINAL_END if final < 0 else final)
        if outcome not in outcomes:
            outcomes.append(outcome)
    return TerminalDWA(np.array(parent), np.array(tset), np.full(len(parent), START), tuple(outcomes),
                       np.zeros(0, np.int32), 0,
                       np.zeros(2, np.int64), np.zeros((0, 257), np.int32), np.zeros(1, np.int64), (),
                       np.zeros((0, 0), np.int32), np.zeros(0, np.int32))


def simulate(tdwa, outcome, by_terminal, stack):
    """Does some choice of terminals and effects consume the closed lexemes from this concrete stack and
    leave a top state with an action on a terminal the open lexeme can become?"""
    sets = [term_sets[s] for s in tdwa.lexeme_sequence(outcome.node)]
    finals = (END,) if outcome.final == FINAL_END else term_sets[outcome.final]
    table = has_action(by_terminal)
    for choice in itertools.product(*sets):
        stacks = [tuple(stack)]
        for terminal in choice:
            stacks = [e.apply(s) for s in stacks for e in by_terminal[terminal] if e.matches(s)]
        if any(table[s[0], list(finals)].any() for s in stacks):
            return True
    return False


@given(effects_strategy, paths, st.lists(st.lists(st.sampled_from(LABELS), min_size=1, max_size=7), max_size=12))
def test_dwa_equals_direct_simulation(by_terminal, path_list, stacks):
    tdwa = make_tdwa(path_list)
    graphs = [graph_of(terminal, effects) for terminal, effects in enumerate(by_terminal)]
    dwa = determinize([build_read_nfa(tdwa, term_sets, graphs, has_action(by_terminal), frozenset(), END)])
    for stack in stacks:
        expected = sum(1 << o for o, outcome in enumerate(tdwa.outcomes)
                       if simulate(tdwa, outcome, by_terminal, stack))
        assert walk(dwa, stack) == expected
