"""Rows (stage 8) are the same whether a lexer state's classes are worked on densely (every class's
outcome) or sparsely (only the classes with one): the pool, its numbering and every table."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from glrmask_cli.json_schema import schema_to_lark
from glrmask_cli.parser_dwa import rows
from glrmask_cli.pipeline import compile_grammar
from glrmask_cli.terminal_dwa import lexer_contexts

# an open object (any extra member: the any-JSON value grammar) beside a closed enum and a number
SCHEMA = {"type": "object", "properties": {"kind": {"enum": ["a", "bc"]}, "size": {"type": "integer"}},
          "required": ["kind"]}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    path = tmp_path_factory.mktemp("rows") / "schema.lark"
    path.write_text(schema_to_lark(SCHEMA, "flexible", False))
    return compile_grammar(path, tokenizer="gpt2")


def _rows(compiled, monkeypatch, share: int, jobs: int = 1) -> rows.RowPool:
    monkeypatch.setattr(rows, "_SPARSE_SHARE", share)
    contexts = None if compiled.contextual is None else lexer_contexts(compiled.contextual, compiled.lr)
    return rows.build_rows(compiled.parser_dwa.dwa, compiled.parser_dwa.terminal_dwa, contexts=contexts, jobs=jobs)


def test_sparse_and_dense_lexer_states_give_the_same_pool(compiled, monkeypatch):
    tdwa = compiled.parser_dwa.terminal_dwa
    live = [np.count_nonzero(tdwa.outcome_row(q) >= 0) for q in range(tdwa.n_lexer_states)]
    assert min(live) * 8 < tdwa.n_classes <= max(live) * 8, "no lexer state of each kind: a weak test"
    dense = _rows(compiled, monkeypatch, 10**9)     # sparse only where no class has an outcome
    sparse = _rows(compiled, monkeypatch, 0)        # every lexer state sparse
    mixed = _rows(compiled, monkeypatch, 8)
    assert len(dense.rows) > 2
    for field in dataclasses.fields(rows.RowPool):
        assert np.array_equal(getattr(dense, field.name), getattr(sparse, field.name)), field.name
        assert np.array_equal(getattr(dense, field.name), getattr(mixed, field.name)), field.name


def test_rows_by_or_are_the_classes_of_each_masks_outcomes():
    """The many-masks form (`_rows_by_or`: each outcome's classes packed once, a mask's row their OR)
    against each mask's row taken directly: the classes whose outcome is one of the mask's."""
    rng = np.random.default_rng(7)
    n_classes, n_outcomes = 300, 40
    class_of_token = rng.integers(0, n_classes + 2, size=1000)
    some = rng.integers(0, n_outcomes, size=n_classes + 2)
    outcome = np.where(rng.random(n_classes + 2) < 0.7, some, rows.NO_OUTCOME)
    present_ids = np.unique(outcome[outcome != rows.NO_OUTCOME])
    members = [np.sort(rng.choice(len(present_ids), size=rng.integers(1, 8), replace=False)) for _ in range(60)]
    bits = np.concatenate(members)
    starts = np.concatenate([[0], np.cumsum([len(m) for m in members])])
    masks = rows._Masks(np.arange(len(members)), np.arange(len(members)), bits, starts)
    pool = rows._Pool(class_of_token, n_classes)
    found = rows._rows_by_or(outcome, present_ids, masks, pool)
    expected = [pool.token_row(np.isin(outcome, present_ids[m])) for m in members]
    assert found == expected
    assert len(set(found)) > 10
