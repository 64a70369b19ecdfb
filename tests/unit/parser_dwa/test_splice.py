"""Splicing stack effects: cancellation rules, and the whole splice + determinize stage against a
direct simulation of the effects on concrete stacks."""

import itertools

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from glrmask_cli.parser.stack_effects import ANY, StackEffect, StackEffects
from glrmask_cli.parser_dwa.determinize import NO_STATE, determinize
from glrmask_cli.parser_dwa.splice import apply_effect, build_read_nfa, consuming_effects
from glrmask_cli.terminal_dwa import FINAL_END, Outcome, TerminalDWA

B, C, P, R, S, U = 10, 11, 12, 13, 14, 15


def test_effects_are_rewritten_to_consume_what_they_read():
    # StackEffects keep the deepest read state; apply_effect's effects pop it and write it back.
    effects = StackEffects(((StackEffect((P, ANY, B), (C,)),),), 3)
    assert consuming_effects(effects) == ((StackEffect((P, ANY, B), (B, C)),),)


def test_write_read_pairs_cancel():
    # seed notes: x = b- b+ p+, ] = p- b- c+; together b- c+
    reads, written = apply_effect((), StackEffect((B,), (B, P)))
    assert (reads, written) == ((B,), (B, P))
    assert apply_effect(written, StackEffect((P, B), (C,))) == ((), (C,))


def test_mismatched_write_read_kills_the_path():
    assert apply_effect((R, S), StackEffect((R,), ())) is None


def test_wildcard_reads_match_written_states():
    assert apply_effect((P, R, S), StackEffect((ANY, ANY, P), (P, U))) == ((), (P, U))


def test_reads_past_written_states_read_the_old_stack():
    assert apply_effect((R, S), StackEffect((S, R, ANY, U), (U, C))) == ((ANY, U), (U, C))


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
    empty = np.zeros((0, 0), dtype=np.int32)
    return TerminalDWA(np.array(parent), np.array(tset), tuple(outcomes), np.zeros(0, np.int32), empty, 0)


def simulate(tdwa, outcome, by_terminal, stack):
    """Does some choice of terminals and effects consume the outcome from this concrete stack?"""
    sets = [term_sets[s] for s in tdwa.lexeme_sequence(outcome.node)]
    sets.append((END,) if outcome.final == FINAL_END else term_sets[outcome.final])
    for choice in itertools.product(*sets):
        stacks = [tuple(stack)]
        for terminal in choice:
            stacks = [e.apply(s) for s in stacks for e in by_terminal[terminal] if e.matches(s)]
        if stacks:
            return True
    return False


def walk(dwa, stack):
    d = 0
    for symbol in stack:
        nxt = dwa.edges[d].get(symbol, dwa.default[d])
        if nxt == NO_STATE:
            break
        d = nxt
    return dwa.outcomes[d]


@given(effects_strategy, paths, st.lists(st.lists(st.sampled_from(LABELS), min_size=1, max_size=7), max_size=12))
def test_dwa_equals_direct_simulation(by_terminal, path_list, stacks):
    tdwa = make_tdwa(path_list)
    effects = StackEffects(tuple(tuple(e) for e in by_terminal), 3)
    dwa = determinize(build_read_nfa(tdwa, term_sets, effects, frozenset(), END))
    for stack in stacks:
        expected = sum(1 << o for o, outcome in enumerate(tdwa.outcomes)
                       if simulate(tdwa, outcome, by_terminal, stack))
        assert walk(dwa, stack) == expected
