"""`glrmask inspect`'s worst-case mask cost (report.mask_cost) against brute force: every mask of
many reachable states is recomputed here walk by walk, exactly as the matcher does it (the masks
must come out equal, so the count is of what the matcher really does), and no walk, row count or
number of walks ever exceeds what the report claims; on a small grammar whose stacks can all be
enumerated, the longest walk observed is the reported depth (the bound is tight)."""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass

import numpy as np
import pytest
from click.testing import CliRunner

import glrmask_runtime
from devtools.brute_force import sampled_states
from devtools.builds import JSON_GRAMMAR, LARK_GRAMMARS, Built, built, vocabulary
from devtools.documents import json_documents, lark_documents
from glrmask_cli.cli import cli
from glrmask_cli.limits import BuildLimits
from glrmask_cli.pipeline import build_artifact
from glrmask_cli.report import mask_cost
from glrmask_cli.vocab.vocabulary import Vocabulary
from tests.support.ambiguous import AMBIGUOUS_GRAMMAR, EXPRESSIONS

NO_STATE = -1


@dataclass
class Cost:
    steps: list[int]          # DWA steps of every walk
    emits: list[int]          # emitting states every walk passed
    walks: int
    rows: int                 # rows OR-ed into the mask (closing rows included)
    paths: int                # the most paths of one set of stacks walked (1: linear stacks)
    roots: int                # the most roots one top listed


def _paths(node) -> list[tuple[int, ...]]:
    """Every path of a graph-structured stack from `node` down, top first."""
    if not node.parents:
        return [(node.state,)]
    return [(node.state,) + rest for parent in node.parents for rest in _paths(parent)]


def _walk_rows(art, lexer_state: int, stacks, cost: Cost, allowed=None) -> list[int]:
    rows = []
    paths = [path for top in stacks for path in _paths(top)]
    cost.paths = max(cost.paths, len(paths))
    for path in paths:
        roots = [d for d in art.dwa_roots[path[0]]
                 if d in art.q_roots[lexer_state] and (allowed is None or d in allowed)]
        cost.roots = max(cost.roots, len(roots))
        for d in roots:
            steps = passed = 0
            for state in path:
                nxt = art.dwa_edges[d].get(state, art.dwa_default[d])
                if nxt == NO_STATE:
                    break
                if d in art.emitting:           # the walk takes the row of an emitting state it passes
                    rows.append(art.row_maps[lexer_state].get(art.accept_of[d], 0))
                    passed += 1
                d, steps = nxt, steps + 1
            cost.steps.append(steps)
            cost.emits.append(passed)
            cost.walks += 1
            rows.append(art.row_maps[lexer_state].get(art.accept_of[d], 0))
    return rows


def brute_cost(art, matcher) -> Cost:
    """The mask of `matcher` recomputed walk by walk, with what it cost; checked against the matcher."""
    cost = Cost([], [], 0, 0, 0, 0)
    mask = np.zeros(art.rows.shape[1], art.rows.dtype)
    paths = 0
    for lexer_state, stacks in art.threads(matcher._state):     # the contextual lexer's threads, OR-ed
        cost.paths = 0
        rows = _walk_rows(art, lexer_state, stacks, cost)
        mask = mask | np.bitwise_or.reduce(art.rows[rows], axis=0)
        cost.rows += len(rows)
        for set_id, closing, allowed in art.closes[lexer_state]:
            closed = art.recognizer.close_lexeme(stacks, set_id)
            # each stack lexes on from its top's context's START (START alone with the basic lexer)
            after = [row for start, part in art.split_by_start(closed)
                     for row in _walk_rows(art, start, part, cost, allowed)]
            if closed:
                mask = mask | (art.rows[closing] & np.bitwise_or.reduce(art.rows[after], axis=0))
                cost.rows += 1 + len(after)
        paths += cost.paths
    cost.paths = paths                    # the claims are per path of each thread
    expected = np.zeros((1, art.rows.shape[1]), dtype=np.int32)
    matcher.fill_bitmask(expected)
    assert np.array_equal(mask.view(np.int32), expected[0]), "the brute-force walk is not the matcher's"
    return cost


def assert_within(art, states) -> dict[str, int]:
    claimed = mask_cost(art)
    seen = {"depth": 0, "emits": 0, "walks": 0, "rows": 0, "roots": 0, "paths": 0}
    for matcher in states:
        cost = brute_cost(art, matcher)
        seen = {"depth": max(seen["depth"], *cost.steps, 0), "emits": max(seen["emits"], *cost.emits, 0),
                "walks": max(seen["walks"], cost.walks),
                "rows": max(seen["rows"], cost.rows), "roots": max(seen["roots"], cost.roots),
                "paths": max(seen["paths"], cost.paths)}
        assert max(cost.steps, default=0) <= claimed["max_walk_depth"]
        assert max(cost.emits, default=0) <= claimed["max_emits_per_walk"]
        assert cost.roots <= claimed["max_roots_per_lr_state"]
        if claimed["one_stack_path"]:
            assert cost.paths == 1
        # the claims are per path of the stack
        assert cost.walks <= claimed["max_walks_per_mask"] * cost.paths
        assert cost.rows <= claimed["max_rows_ored"] * cost.paths
    return seen


UNMERGED = BuildLimits(max_merged_states=0)


def _apart(grammar, tmp_path, layout: str, limits: BuildLimits = UNMERGED) -> Built:
    """A build whose groups are kept apart (several walks per mask)."""
    vocab = vocabulary("small-gpt2")
    result = build_artifact(grammar, tmp_path / "apart.glrm", tokenizer=vocab, layout=layout, limits=limits)
    return Built(glrmask_runtime.load(result.path), vocab, result.compiled, result.path)


def test_one_layout_json(tmp_path):
    b = built(JSON_GRAMMAR, "small-gpt2", layout="one")
    claimed = mask_cost(b.artifact)
    assert (claimed["max_walks_per_mask"], claimed["max_rows_ored"], claimed["one_stack_path"]) == (1, 1, True)
    assert claimed["max_walk_depth"] == b.compiled.parser_dwa.dwa.depth()     # one root: the whole DWA
    seen = assert_within(b.artifact, sampled_states(b, json_documents(), 150, seed=21))
    assert seen["walks"] == seen["rows"] == 1


def test_grouped_json_several_walks_and_closes(tmp_path):
    b = _apart(JSON_GRAMMAR, tmp_path, "grouped")
    claimed = mask_cost(b.artifact)
    assert claimed["max_roots_per_lr_state"] > 1 and claimed["max_runtime_closes"] >= 1
    seen = assert_within(b.artifact, sampled_states(b, json_documents(), 150, seed=22))
    assert seen["walks"] > 1 and seen["rows"] > seen["walks"] - 1      # the states exercise the OR
    assert seen["roots"] == claimed["max_roots_per_lr_state"]


def test_emitting_states_lark(tmp_path):
    """States that emit from the first one on: walks take the rows of the emitting states they pass."""
    b = _apart(LARK_GRAMMARS / "lark.lark", tmp_path, "runtime-close", BuildLimits(max_cumulative_states=0))
    claimed = mask_cost(b.artifact)
    assert b.artifact.emitting and claimed["max_emits_per_walk"] > 0
    seen = assert_within(b.artifact, sampled_states(b, lark_documents(), 150, seed=24))
    assert seen["emits"] > 0


def test_runtime_close_with_a_graph_structured_stack(tmp_path):
    """An ambiguous grammar (tests/support/ambiguous.py): walks down every path of the stack."""
    grammar = tmp_path / "ambiguous.lark"
    grammar.write_text(AMBIGUOUS_GRAMMAR)
    b = built(grammar, "small-gpt2", layout="runtime-close")
    claimed = mask_cost(b.artifact)
    assert claimed["one_stack_path"] is False
    assert_within(b.artifact, sampled_states(b, EXPRESSIONS, 150, seed=23))


def test_depth_is_tight_on_a_grammar_whose_stacks_are_enumerated(tmp_path):
    """Nested parentheses with tokens that close up to three levels at once: every state within 8
    tokens is visited, and the longest walk seen is the reported maximum walk depth."""
    grammar = tmp_path / "parens.lark"
    grammar.write_text('start: "(" start ")" | "x"\n')
    tokens = [b"(", b")", b"x", b"))", b")))", b"x)", b"x))", b"(x", b""]
    vocab = Vocabulary.from_tokens("parens", tokens, special_names={len(tokens) - 1: "<eos>"},
                                   eos_ids=[len(tokens) - 1])
    result = build_artifact(grammar, tmp_path / "parens.glrm", tokenizer=vocab, layout="one")
    art = glrmask_runtime.load(result.path)
    claimed = mask_cost(art)
    deepest, todo, seen = 0, deque([(art.matcher(), 0)]), set()
    while todo:
        matcher, n = todo.popleft()
        key = tuple((q, tuple(path for node in stacks for path in _paths(node)))
                    for q, stacks in art.threads(matcher._state))
        if key in seen:
            continue
        seen.add(key)
        deepest = max(deepest, *brute_cost(art, matcher).steps)
        if n < 8:
            for token in np.flatnonzero(matcher.mask()).tolist():
                if token not in art.eos_token_ids:
                    nxt = matcher.copy()
                    nxt.commit(token)
                    todo.append((nxt, n + 1))
    assert deepest == claimed["max_walk_depth"] > 1, (deepest, claimed)


def test_inspect_prints_the_mask_cost():
    path = built(JSON_GRAMMAR, "small-gpt2", layout="one").path
    runner = CliRunner()
    data = json.loads(runner.invoke(cli, ["inspect", str(path), "--json"]).output)
    assert data["mask_cost"] == mask_cost(glrmask_runtime.load(path))
    text = runner.invoke(cli, ["inspect", str(path)]).output
    cost = data["mask_cost"]
    assert (f"mask cost     at most 1 walk(s) of at most {cost['max_walk_depth']} steps, 1 row(s) OR-ed "
            "(stacks have one path)") in text


@pytest.mark.parametrize("fixture", ["format1", "format2", "format3", "format4"])
def test_older_formats_report_a_cost(fixture):
    from devtools.data import REPO_ROOT

    art = glrmask_runtime.load(REPO_ROOT / "tests" / "data" / "compat" / f"json-small-gpt2.{fixture}.glrm")
    cost = mask_cost(art)
    assert cost["max_walk_depth"] == art.metadata["dwa"]["depth"]
