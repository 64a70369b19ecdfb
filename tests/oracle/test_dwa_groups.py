"""Every Parser DWA layout gives exactly the masks of brute force: "runtime-close" (tokens that close
the open lexeme with their first byte are decided on the real stack, from START) and "grouped" (one
automaton per first closed lexeme: the gate that walks a group only from tops with an action on its
first terminals, the walks from several roots and the OR of their rows). Also: big artifacts build
their edge and row dicts lazily, with the same masks."""

from __future__ import annotations

import collections
import dataclasses

import numpy as np
import pytest

import glrmask_runtime
import glrmask_runtime.artifact
import glrmask_runtime.matcher
import glrmask_runtime.schema
from devtools.brute_force import sampled_states
from devtools.builds import JSON_GRAMMAR, LARK_GRAMMARS, Built, built
from devtools.data import corpus_path
from devtools.documents import csv_documents, json_documents, lark_documents
from glrmask_cli.limits import BuildLimits
from tests.support.masks import assert_masks_equal

# No group is merged back (small grammars would merge all of them back into one): these tests are
# about several groups. test_small_groups_are_merged_back_into_one checks the merge.
APART = BuildLimits(max_merged_states=0)

CASES = {
    "json": (JSON_GRAMMAR, json_documents),
    "lark": (LARK_GRAMMARS / "lark.lark", lark_documents),
    "csv": ("grammars/lark-1.3.1-sdist/composition/csv.lark", csv_documents),
}


def grouped(name: str, layout: str = "grouped") -> Built:
    grammar, _ = CASES[name]
    return built(corpus_path(grammar) if isinstance(grammar, str) else grammar, "small-gpt2", layout=layout,
                 limits=APART)


@pytest.mark.parametrize("layout", ["runtime-close", "grouped"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_layout_masks_equal_brute_force(name, layout):
    b = grouped(name, layout)
    assert b.artifact.metadata["dwa"]["layout"] == layout
    assert (b.artifact.metadata["dwa"]["n_groups"] > 1) == (layout == "grouped")
    assert b.artifact.n_runtime_closes > 0          # some lexer states close their lexeme at run time
    assert_masks_equal(b, sampled_states(b, CASES[name][1](), 150, seed=11))


def test_runtime_close_leaves_fewer_outcomes():
    one, closing = grouped("json", "one"), grouped("json", "runtime-close")
    assert len(closing.compiled.terminal_dwa.outcomes) < len(one.compiled.terminal_dwa.outcomes)
    assert one.artifact.n_runtime_closes == 0 and closing.artifact.n_runtime_closes > 0


def test_groups_are_gated_by_the_top_state():
    """Some tops start fewer walks than there are groups: a group whose first terminals have no
    action on the top is skipped."""
    art = grouped("json").artifact
    n_groups = art.metadata["dwa"]["n_groups"]
    walks = [len(art.dwa_roots[p]) for p in range(art.lr.n_states)]
    assert min(walks) < n_groups and max(walks) <= n_groups


@pytest.mark.parametrize("name", ["json", "lark"])
def test_walk_filters_skip_only_walks_that_give_nothing(name):
    """The walk filters (roots that can give a row at a lexer state, or accept a closing token after
    a runtime close) change no mask: the same artifact loaded without them walks every root."""
    b = grouped(name)
    art = b.artifact
    filters = glrmask_runtime.schema.WALK_FILTERS
    bare = glrmask_runtime.artifact.Artifact(dataclasses.replace(
        art.container, sections={k: v for k, v in art.container.sections.items() if k not in filters}))
    assert any(len(art.roots_at(q, p)) < len(bare.roots_at(q, p))
               for q in range(art.lexer.n_states) for p in range(art.lr.n_states))
    for matcher in sampled_states(b, CASES[name][1](), 100, seed=15):
        twin = glrmask_runtime.matcher.Matcher(bare, matcher._state)
        assert np.array_equal(matcher.mask(), twin.mask())


def test_per_state_views_are_built_on_first_use():
    """Loading builds none of the per-state Python views (a load costs the same whatever the DWA's
    size); masks build those they reach, each equal to its entry in the mapped arrays."""
    b = built(JSON_GRAMMAR, "small-gpt2", layout="runtime-close", lexer="basic")
    art = glrmask_runtime.load(b.path)
    views = (art.dwa_edges, art.row_maps, art.dwa_roots, art.q_roots, art.closes,
             art.recognizer.scanner.trans_rows, art.recognizer.lexeme_action)
    assert not any(views)
    for matcher in sampled_states(Built(art, b.vocab, b.compiled, b.path), json_documents(), 60, seed=12):
        matcher.mask()
    assert all(views)
    s = art.container.sections
    for d, edges in art.dwa_edges.items():
        lo, hi = s["dwa.edge_offsets"][d], s["dwa.edge_offsets"][d + 1]
        stored = {int(k): int(v) for k, v in zip(s["dwa.edge_labels"][lo:hi], s["dwa.edge_targets"][lo:hi])}
        assert art.dwa_edge_map(d) == stored
        default = art.dwa_default[d]
        assert all(edges.get(label, default) == stored.get(label, default) for label in range(art.lr.n_states))
    for q, row in art.recognizer.scanner.trans_rows.items():
        assert row == tuple(s["lexer.transitions"][q].tolist())
    for q, closes in art.closes.items():
        lo, hi = s["rows.close_offsets"][q], s["rows.close_offsets"][q + 1]
        assert [(c, r) for c, r, _ in closes] == list(zip(s["rows.close_sets"][lo:hi].tolist(),
                                                          s["rows.close_rows"][lo:hi].tolist()))


def _declare_too_large(monkeypatch, too_large) -> None:
    """Make the grouped layout treat a group as too large to build when `too_large(tdwa, group)` and
    the group can be split, so that it is split (layout._grouped's LimitExceeded path)."""
    from glrmask_cli.errors import LimitExceeded
    from glrmask_cli.parser_dwa import groups as G
    from glrmask_cli.parser_dwa import layout

    real_build = layout.build_read_nfa

    def build_read_nfa(tdwa, *args):
        group = args[5]
        if too_large(tdwa, group) and G.split(tdwa, group):
            raise LimitExceeded("max_nfa_nodes", 0, "test", "declared too large")
        return real_build(tdwa, *args)

    monkeypatch.setattr(layout, "build_read_nfa", build_read_nfa)


def _deeper_tokens_allowed(tdwa, states) -> collections.Counter:
    """First-lexeme trie node -> how many allowed tokens (over `states`) close that lexeme and at least
    one more: the tokens that a split of that node's group moves into deeper groups."""
    from glrmask_cli.parser_dwa.groups import first_lexeme_of
    from glrmask_cli.terminal_dwa import NO_OUTCOME
    from glrmask_runtime.tables import START

    found = collections.Counter()
    for matcher in states:
        q = matcher._state.lexer_state
        classes = tdwa.class_of_token[np.flatnonzero(matcher.mask())]
        outcomes = np.where(tdwa.close_row(q)[classes] != 0,      # decided from START at run time
                            tdwa.outcome_row(START)[classes], tdwa.outcome_row(q)[classes])
        for o in outcomes[outcomes != NO_OUTCOME].tolist():
            node = tdwa.outcomes[o].node
            if node and tdwa.trie_parent[node]:
                found[first_lexeme_of(tdwa, node)] += 1
    return found


def test_groups_too_large_are_split_by_their_next_lexeme(monkeypatch, tmp_path):
    """A group too large to build is split by its next lexeme, again if its parts are too (here the
    first-lexeme group whose deeper tokens the sampled states allow most is declared too large, and
    so is every splittable part of it). The masks stay exact, and the states do allow tokens of the
    split-off groups. Basic lexer: a runtime close then hands over to START alone, which
    `_deeper_tokens_allowed` reads."""
    from glrmask_cli.parser_dwa import groups as G
    from glrmask_cli.pipeline import build_artifact

    b = built(CASES["lark"][0], "gpt2", layout="runtime-close", lexer="basic")   # gpt2: tokens of several lexemes
    tdwa = b.compiled.terminal_dwa
    ((first, _),) = _deeper_tokens_allowed(tdwa, sampled_states(b, lark_documents(), 150, seed=13)).most_common(1)
    _declare_too_large(monkeypatch, lambda tdwa, group: any(G.first_lexeme_of(tdwa, node) == first
                                                            for node in group.subtrees))
    result = build_artifact(CASES["lark"][0], tmp_path / "split.glrm", tokenizer=b.vocab, layout="grouped",
                            limits=APART, lexer="basic")
    groups = result.compiled.parser_dwa.groups
    depths = [len(tdwa.lexeme_sequence(node)) for group in groups for node in group.subtrees]
    assert max(depths) >= 3                      # split twice
    split_built = Built(glrmask_runtime.load(result.path), b.vocab, result.compiled, result.path)
    states = sampled_states(split_built, lark_documents(), 150, seed=13)
    assert_masks_equal(split_built, states)
    assert _deeper_tokens_allowed(tdwa, states)[first] > 0


def test_small_groups_are_merged_back_into_one(tmp_path):
    from devtools.builds import vocabulary
    from glrmask_cli.pipeline import build_artifact

    apart = grouped("lark").artifact.metadata["dwa"]["n_groups"]
    result = build_artifact(CASES["lark"][0], tmp_path / "merged.glrm", tokenizer=vocabulary("small-gpt2"),
                            layout="grouped", limits=BuildLimits(max_merged_states=20_000))
    assert len(result.compiled.parser_dwa.groups) < apart
    merged = Built(glrmask_runtime.load(result.path), result.compiled.vocab, result.compiled, result.path)
    assert_masks_equal(merged, sampled_states(merged, lark_documents(), 150, seed=14))


def test_a_union_too_large_is_halved_until_it_fits(monkeypatch, tmp_path):
    """When the smallest groups together make too large an automaton, they are merged in smaller
    runs (here: no run of more than 3 groups fits), with the same masks."""
    from devtools.builds import vocabulary
    from glrmask_cli.errors import LimitExceeded
    from glrmask_cli.parser_dwa.determinize import StatePool
    from glrmask_cli.pipeline import build_artifact

    real = StatePool.add_union
    runs = []

    def at_most_three(self, roots, max_states):
        if len(roots) > 3:
            raise LimitExceeded("max_dwa_states", max_states, "parser DWA union", "test: too many groups")
        union = real(self, roots, max_states)   # may itself be too large (twice the parts' states)
        runs.append(len(roots))
        return union

    monkeypatch.setattr(StatePool, "add_union", at_most_three)
    apart = grouped("lark").artifact.metadata["dwa"]["n_groups"]
    result = build_artifact(CASES["lark"][0], tmp_path / "runs.glrm", tokenizer=vocabulary("small-gpt2"),
                            layout="grouped", limits=BuildLimits(max_merged_states=20_000))
    groups = len(result.compiled.parser_dwa.groups)
    assert len(runs) >= 2 and groups == apart - sum(n - 1 for n in runs)
    merged = Built(glrmask_runtime.load(result.path), result.compiled.vocab, result.compiled, result.path)
    assert_masks_equal(merged, sampled_states(merged, lark_documents(), 100, seed=16))


@pytest.mark.slow
def test_sql_string_alias_after_a_column_when_its_group_is_split(monkeypatch, tmp_path):
    """Regression (sql x cl100k_base, brute-force oracle): after `SELECT cost_of_tr` the token `"",\\n`
    (a string alias, a comma, a newline) was masked: its group (first lexeme: the string) had been
    split, and a group of a subtree below the first lexeme never entered that subtree. Rebuilt here
    with a small vocabulary and the split forced."""
    from devtools.brute_force import TokenTrie, brute_force_mask
    from devtools.exactness import CASES as MATRIX
    from glrmask_cli.pipeline import build_artifact
    from glrmask_cli.vocab.vocabulary import Vocabulary

    extra = [b'"",\n', b'"",', b'""', b',\n', b' "",\n', b' "",\r\n']
    tokens = [bytes([byte]) for byte in range(256)] + extra + [b""]
    vocab = Vocabulary.from_tokens("bytes-and-aliases", tokens, eos_ids=[len(tokens) - 1])
    grammar = next(case for case in MATRIX if case.name == "sql").path()
    _declare_too_large(monkeypatch, lambda tdwa, group: any(tdwa.trie_parent[node] == 0 for node in group.subtrees))
    result = build_artifact(grammar, tmp_path / "sql.glrm", tokenizer=vocab, layout="grouped", limits=APART)
    tdwa = result.compiled.terminal_dwa
    assert any(tdwa.trie_parent[node] != 0 for group in result.compiled.parser_dwa.groups
               for node in group.subtrees)       # the split happened: a group below a first lexeme
    art = glrmask_runtime.load(result.path)
    matcher = art.matcher()
    matcher.commit_bytes(b"SELECT cost_of_tr")
    expected = brute_force_mask(art.recognizer, matcher._state, TokenTrie(vocab.token_bytes, vocab.special_ids),
                                art.vocab_size, art.eos_token_ids)
    assert all(expected[tokens.index(token)] for token in (b'"",\n', b' "",\n'))
    assert np.array_equal(matcher.mask(), expected)
