"""Canonical LR(1) tables with conflicts kept: lark as the judge of conflicts, of LALR state counts
(our cores) and of the accepted language; the correct-prefix property the Parser DWA relies on."""

from __future__ import annotations

import numpy as np
import pytest
from lark import Lark
from lark.exceptions import GrammarError

from devtools.cfg_text import as_normalized, cfg_from_text, sentences_and_mutations
from devtools.lark_judge import EarleyJudge, cfg_to_lark
from glrmask_cli.parser.cfg import CFG, Rule
from glrmask_cli.parser.lr import build_lr, build_lr_tables
from glrmask_runtime.glr import GLRParser
from glrmask_runtime.tables import ACCEPT, REDUCE, SHIFT, unpack_action

GRAMMARS = {
    "expr": "e: e + t | t\nt: t * f | f\nf: ( e ) | N",
    "lalr_not_slr": "s: l = r | r\nl: * r | i\nr: l",
    "lr1_not_lalr": "s: a x c | a y d | b y c | b x d\nx: e\ny: e",
    "dangling_else": "s: i s | i s l s | o",
    "ambiguous": "e: e + e | e * e | N",
    "lists": "s: [ xs ] | [ ]\nxs: xs , x | x\nx: N | s",
    "unit_chain": "s: a | s ; a\na: b\nb: c\nc: N | ( s )",
}


def _accepts(parser: GLRParser, terminals: tuple[int, ...]) -> bool:
    stacks = parser.initial()
    for t in terminals:
        stacks = parser.shift(stacks, [t])
        if not stacks:
            return False
    return parser.accepts_end(stacks)


def _lark_lalr_verdict(cfg: CFG) -> str:
    """'ok', or 'reduce/reduce' when lark's LALR analysis refuses the grammar (it resolves S/R as shift)."""
    try:
        Lark(cfg_to_lark(cfg), parser="lalr")
    except GrammarError as e:
        assert "Reduce/Reduce" in str(e), str(e)
        return "reduce/reduce"
    return "ok"


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_language_matches_earley(name):
    cfg = cfg_from_text(GRAMMARS[name])
    parser = GLRParser(build_lr_tables(as_normalized(cfg)))
    judge = EarleyJudge.from_cfg(cfg)
    cases = sentences_and_mutations(cfg, seed=7, n=60)
    assert any(judge.accepts_terminals(s) for s in cases) and not all(judge.accepts_terminals(s) for s in cases)
    for s in cases:
        assert _accepts(parser, s) == judge.accepts_terminals(s), s


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_reduce_reduce_conflicts_only_where_lark_lalr_has_them(name):
    """Canonical LR(1) never has a reduce/reduce conflict that LALR(1) lacks (LALR merges states)."""
    cfg = cfg_from_text(GRAMMARS[name])
    build = build_lr(as_normalized(cfg))
    reduce_reduce = [c for c in build.conflicts
                     if sum(unpack_action(a)[0] == REDUCE for a in c.actions) > 1]
    if _lark_lalr_verdict(cfg) == "ok":
        assert not reduce_reduce
    for c in build.conflicts:
        cell = build.tables.actions_of(c.lr_state, c.terminal_id).tolist()
        assert list(c.actions) == cell and len(cell) > 1


def test_lr1_grammar_that_lalr_refuses_has_no_conflict():
    cfg = cfg_from_text(GRAMMARS["lr1_not_lalr"])
    assert _lark_lalr_verdict(cfg) == "reduce/reduce"
    assert build_lr(as_normalized(cfg)).conflicts == ()


@pytest.mark.parametrize("name", ["expr", "lalr_not_slr", "lists", "unit_chain"])
def test_states_merged_by_core_are_lark_lalr_states(name):
    cfg = cfg_from_text(GRAMMARS[name])
    ours = build_lr(as_normalized(cfg))
    lark_parser = Lark(cfg_to_lark(cfg), parser="lalr")
    lark_states = len(lark_parser.parser.parser.parser.parse_table.states)
    # lark augments with its own `start: n<start>` rule, which adds exactly one state
    assert len(set(ours.kernels)) + 1 == lark_states
    assert ours.tables.n_states >= len(set(ours.kernels))


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_an_action_on_the_top_state_means_the_terminal_can_be_consumed(name):
    """The correct-prefix property: on every stack the parser reaches, a terminal is consumable iff some
    top state has an action on it (the Parser DWA checks a token's last terminal this way)."""
    cfg = cfg_from_text(GRAMMARS[name])
    tables = build_lr_tables(as_normalized(cfg))
    parser = GLRParser(tables)
    for sentence in sentences_and_mutations(cfg, seed=3, n=40):
        stacks = parser.initial()
        for t in sentence + (None,):
            for candidate in range(cfg.n_terminals - 1):
                on_top = any(len(tables.actions_of(node.state, candidate)) for node in stacks)
                assert bool(parser.shift(stacks, [candidate])) == on_top, (sentence, candidate)
            on_top_end = any(len(tables.actions_of(node.state, cfg.end)) for node in stacks)
            assert parser.accepts_end(stacks) == on_top_end
            if t is None:
                break
            stacks = parser.shift(stacks, [t])
            if not stacks:
                break


def test_accept_only_on_end_and_in_goto_of_start():
    cfg = cfg_from_text(GRAMMARS["expr"])
    tables = build_lr_tables(as_normalized(cfg))
    accepting = []
    for state in range(tables.n_states):
        for t in range(tables.n_terminals):
            for a in tables.actions_of(state, t).tolist():
                if unpack_action(a)[0] == ACCEPT:
                    accepting.append((state, t))
    start_nt = cfg.start - cfg.n_terminals
    assert accepting == [(int(tables.goto[0, start_nt]), cfg.end)]


def test_accepts_empty_adds_accept_in_state_zero():
    cfg = cfg_from_text(GRAMMARS["expr"])
    parser = GLRParser(build_lr_tables(as_normalized(cfg, accepts_empty=True)))
    assert parser.accepts_end(parser.initial())
    plain = GLRParser(build_lr_tables(as_normalized(cfg)))
    assert not plain.accepts_end(plain.initial())


def test_packed_cells_are_sorted_and_shift_targets_valid():
    tables = build_lr_tables(as_normalized(cfg_from_text(GRAMMARS["ambiguous"])))
    offsets = tables.action_offsets
    assert offsets[0] == 0 and offsets[-1] == len(tables.actions)
    for i in range(len(offsets) - 1):
        cell = tables.actions[offsets[i]:offsets[i + 1]].tolist()
        assert cell == sorted(set(cell))
        for a in cell:
            kind, arg = unpack_action(a)
            if kind == SHIFT:
                assert 0 < arg < tables.n_states
    assert (tables.rule_len >= 1).all()


def test_deterministic_bytes():
    cfg = cfg_from_text(GRAMMARS["lists"])
    a, b = build_lr_tables(as_normalized(cfg)), build_lr_tables(as_normalized(cfg))
    for field in ("action_offsets", "actions", "goto", "rule_lhs", "rule_len"):
        assert np.array_equal(getattr(a, field), getattr(b, field))


def test_empty_rule_is_refused():
    cfg = cfg_from_text("s: a b\na: N\nb: M")
    cfg = CFG(cfg.terminal_names, cfg.nonterminal_names, cfg.rules + (Rule(cfg.rules[1].lhs, ()),), cfg.start)
    with pytest.raises(ValueError, match="empty"):
        build_lr_tables(as_normalized(cfg))


def test_describe_names_rules():
    build = build_lr(as_normalized(cfg_from_text(GRAMMARS["ambiguous"])))
    conflict = build.conflicts[0]
    texts = [build.describe_action(a) for a in conflict.actions]
    assert any(t.startswith("shift ") for t in texts) and any(t.startswith("reduce e -> e") for t in texts)
