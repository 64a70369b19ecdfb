"""Every Parser DWA layout gives exactly the masks of brute force: "runtime-close" (tokens that close
the open lexeme with their first byte are decided on the real stack, from START) and "grouped" (one
automaton per first closed lexeme: the gate that walks a group only from tops with an action on its
first terminals, the walks from several roots and the OR of their rows). Also: big artifacts build
their edge and row dicts lazily, with the same masks."""

from __future__ import annotations

import numpy as np
import pytest

import glrmask_runtime
import glrmask_runtime.artifact
from tests.oracle.test_brute_force import (assert_masks_equal, csv_documents, json_documents, lark_documents,
                                          sampled_states)
from tests.support.builds import JSON_GRAMMAR, LARK_GRAMMARS, Built, built
from tests.support.data import corpus_path

CASES = {
    "json": (JSON_GRAMMAR, json_documents),
    "lark": (LARK_GRAMMARS / "lark.lark", lark_documents),
    "csv": ("grammars/lark-1.3.1-sdist/composition/csv.lark", csv_documents),
}


@pytest.fixture(autouse=True)
def _no_merging(monkeypatch):
    """Keep every group apart (small grammars would merge all of them back into one): these tests
    are about several groups. test_small_groups_are_merged_back_into_one checks the merge."""
    from glrmask_cli.parser_dwa import layout
    monkeypatch.setattr(layout, "MERGE_STATES", 0)


def grouped(name: str, layout: str = "grouped") -> Built:
    grammar, _ = CASES[name]
    return built(corpus_path(grammar) if isinstance(grammar, str) else grammar, "small-gpt2", layout=layout)


@pytest.mark.parametrize("layout", ["runtime-close", "grouped"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_layout_masks_equal_brute_force(name, layout):
    b = grouped(name, layout)
    assert b.artifact.metadata["dwa"]["layout"] == layout
    assert (b.artifact.metadata["dwa"]["n_groups"] > 1) == (layout == "grouped")
    assert any(b.artifact.closes)          # some lexer states close their lexeme at run time
    assert_masks_equal(b, sampled_states(b, CASES[name][1](), 150, seed=11))


def test_runtime_close_leaves_fewer_outcomes():
    one, closing = grouped("json", "one"), grouped("json", "runtime-close")
    assert len(closing.compiled.terminal_dwa.outcomes) < len(one.compiled.terminal_dwa.outcomes)
    assert not any(one.artifact.closes)


def test_groups_are_gated_by_the_top_state():
    """Some tops start fewer walks than there are groups: a group whose first terminals have no
    action on the top is skipped."""
    art = grouped("json").artifact
    n_groups = art.metadata["dwa"]["n_groups"]
    walks = [len(roots) for roots in art.dwa_roots]
    assert min(walks) < n_groups and max(walks) <= n_groups


def test_lazily_built_dicts_give_the_same_masks(monkeypatch):
    eager = built(JSON_GRAMMAR, "small-gpt2")
    monkeypatch.setattr(glrmask_runtime.artifact, "EAGER_DWA_STATES", 0)
    lazy = glrmask_runtime.load(eager.path)
    assert len(lazy.dwa_edges) == 0 and len(lazy.row_maps) == 0     # nothing built at load
    b = Built(lazy, eager.vocab, eager.compiled, eager.path)
    states = sampled_states(b, json_documents(), 60, seed=12)
    for matcher in states:
        twin = eager.artifact.matcher()
        twin._state = matcher._state
        assert np.array_equal(matcher.mask(), twin.mask())
    assert 0 < len(lazy.dwa_edges) <= lazy.n_dwa_states


def test_groups_too_large_are_split_by_their_next_lexeme(monkeypatch, tmp_path):
    """With a node budget that the largest first-lexeme groups exceed but their parts do not, those
    groups are split one lexeme deeper, and the masks stay exact."""
    from glrmask_cli.parser_dwa import groups as G
    from glrmask_cli.parser_dwa import layout
    from glrmask_cli.pipeline import build_artifact
    from glrmask_cli.terminal_dwa import build_terminal_dwa
    from tests.support.builds import vocabulary

    b = grouped("lark", "runtime-close")
    c = b.compiled
    tdwa = build_terminal_dwa(c.lexer, c.vocab.token_bytes, c.vocab.special_ids, c.vocab.eos_ids, True)
    term_sets = [c.lexer.term_set(i) for i in range(c.lexer.n_term_sets)]
    has_action = (np.diff(c.lr.action_offsets) > 0).reshape(c.lr.n_states, c.lr.n_terminals)

    def size(group):
        nfa = layout.build_read_nfa(tdwa, term_sets, c.effects, has_action, frozenset(c.lexer.ignored.tolist()),
                                    c.lr.end_terminal, group)
        return len(nfa.accepted)

    firsts = G.by_first_lexeme(tdwa)
    target = max((group for group in firsts if G.split(tdwa, group)), key=size)
    budget = max(size(part) for part in [g for g in firsts if g != target] + G.split(tdwa, target))
    assert size(target) > budget          # only `target` is too large: it is split, everything else fits
    monkeypatch.setattr(layout, "MAX_NFA_NODES", budget)
    result = build_artifact(CASES["lark"][0], tmp_path / "split.glrm", tokenizer=vocabulary("small-gpt2"), layout="grouped")
    assert len(result.compiled.parser_dwa.groups) > len(firsts)
    split_built = Built(glrmask_runtime.load(result.path), b.vocab, result.compiled, result.path)
    assert_masks_equal(split_built, sampled_states(split_built, lark_documents(), 150, seed=13))


def test_small_groups_are_merged_back_into_one(monkeypatch, tmp_path):
    from glrmask_cli.parser_dwa import layout
    from glrmask_cli.pipeline import build_artifact
    from tests.support.builds import vocabulary

    apart = grouped("lark").artifact.metadata["dwa"]["n_groups"]
    monkeypatch.setattr(layout, "MERGE_STATES", 20_000)
    result = build_artifact(CASES["lark"][0], tmp_path / "merged.glrm", tokenizer=vocabulary("small-gpt2"),
                            layout="grouped")
    assert len(result.compiled.parser_dwa.groups) < apart
    merged = Built(glrmask_runtime.load(result.path), result.compiled.vocab, result.compiled, result.path)
    assert_masks_equal(merged, sampled_states(merged, lark_documents(), 150, seed=14))
