"""Oracle 2 of `make exactness` (docs/ARCHITECTURE.md, "Exactness"): the DWA mask equals the brute-force
mask (feed every token's bytes to the recognizer) at sampled states: document prefixes cut at arbitrary
bytes, and random-walk states."""

from __future__ import annotations

import pytest

from devtools.brute_force import sampled_states
from devtools.builds import JSON_GRAMMAR, LARK_GRAMMARS, built
from devtools.data import corpus_path, tokenizer_file
from devtools.documents import csv_documents, json_documents, lark_documents
from glrmask_cli.limits import BuildLimits
from tests.support.masks import assert_masks_equal


@pytest.mark.parametrize("grammar, documents, start", [
    (JSON_GRAMMAR, json_documents, None),
    (LARK_GRAMMARS / "lark.lark", lark_documents, None),
    ("grammars/lark-1.3.1-sdist/composition/csv.lark", csv_documents, None),
], ids=["json", "lark", "csv"])
def test_small_vocabulary_many_states(grammar, documents, start):
    if isinstance(grammar, str):
        grammar = corpus_path(grammar)
    b = built(grammar, "small-gpt2", start)
    assert_masks_equal(b, sampled_states(b, documents(), 220, seed=1))


@pytest.mark.parametrize("grammar, documents, layout", [
    (JSON_GRAMMAR, json_documents, "one"),
    (LARK_GRAMMARS / "lark.lark", lark_documents, "one"),
    (LARK_GRAMMARS / "lark.lark", lark_documents, "runtime-close"),
], ids=["json-one", "lark-one", "lark-runtime-close"])
def test_emitting_states(grammar, documents, layout):
    """DWA states that emit what they accepted (from the first state on, not only past
    max_cumulative_states): walks take the rows of the emitting states they pass."""
    b = built(grammar, "small-gpt2", layout=layout, limits=BuildLimits(max_cumulative_states=0))
    assert b.artifact.emitting
    assert_masks_equal(b, sampled_states(b, documents(), 150, seed=6))


def test_full_gpt2_vocabulary():
    b = built(JSON_GRAMMAR, "gpt2")
    assert_masks_equal(b, sampled_states(b, json_documents(), 30, seed=2))


def test_full_sentencepiece_vocabulary_with_identical_bytes_ids():
    """Mistral's SentencePiece vocabulary: byte-fallback ids share bytes with pieces; all are allowed together."""
    b = built(JSON_GRAMMAR, str(tokenizer_file("mistral-v1.model")))
    assert_masks_equal(b, sampled_states(b, json_documents(), 60, seed=4))


@pytest.mark.slow
def test_full_gpt2_vocabulary_many_states():
    b = built(JSON_GRAMMAR, "gpt2")
    assert_masks_equal(b, sampled_states(b, json_documents(), 250, seed=3))
