"""Oracle 2 (DESIGN 6): the DWA mask equals the brute-force mask (feed every token's bytes to the
recognizer) at sampled states: document prefixes cut at arbitrary bytes, and random-walk states."""

from __future__ import annotations

import random

import numpy as np
import pytest

from devtools.data import corpus_path, tokenizer_file
from devtools.documents import csv_documents, json_documents, lark_documents
from glrmask_runtime.errors import InputRejected
from tests.support.brute_force import TokenTrie, brute_force_mask
from tests.support.builds import JSON_GRAMMAR, LARK_GRAMMARS, built


def sampled_states(b, documents: list[bytes], n_states: int, seed: int) -> list:
    """Matchers at byte prefixes of valid documents, then along seeded random walks."""
    rng = random.Random(seed)
    states = []
    for doc in documents:
        for cut in sorted({0, len(doc), *(rng.randrange(len(doc) + 1) for _ in range(3))}):
            matcher = b.artifact.matcher()
            try:
                matcher.commit_bytes(doc[:cut])
            except InputRejected:   # a documented scanner difference (no backtracking): skip
                continue
            states.append(matcher)
    rng.shuffle(states)
    states = states[: n_states // 2]
    while len(states) < n_states:
        matcher = b.artifact.matcher()
        for _ in range(rng.randrange(1, 12)):
            allowed = np.flatnonzero(matcher.mask())
            allowed = allowed[~np.isin(allowed, b.artifact.eos_token_ids)]
            if not len(allowed):
                break
            matcher.commit(int(allowed[rng.randrange(len(allowed))]))
            states.append(matcher.copy())
    return states[:n_states]


def assert_masks_equal(b, states) -> None:
    trie = TokenTrie(b.vocab.token_bytes, b.vocab.special_ids)
    for i, matcher in enumerate(states):
        expected = brute_force_mask(b.artifact.recognizer, matcher._state, trie, b.artifact.vocab_size,
                                    b.artifact.eos_token_ids)
        got = matcher.mask()
        if not np.array_equal(got, expected):
            missing = [b.vocab.token_bytes[t] for t in np.flatnonzero(expected & ~got)[:5]]
            extra = [b.vocab.token_bytes[t] for t in np.flatnonzero(got & ~expected)[:5]]
            pytest.fail(f"state {i}: DWA mask differs from brute force; missing {missing}, extra {extra}")
        assert matcher.is_accepting() == bool(expected[list(b.artifact.eos_token_ids)].any())


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
