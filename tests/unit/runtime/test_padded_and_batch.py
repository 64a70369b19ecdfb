"""Padded vocabularies (a bitmask wider than the tokenizer) and batch fill (`fill_bitmasks`)."""

from __future__ import annotations

import numpy as np
import pytest

import glrmask_runtime
from devtools.builds import JSON_GRAMMAR, built
from glrmask_runtime.bitmask import bitmask_to_bool


@pytest.fixture(scope="module")
def b():
    return built(JSON_GRAMMAR, "gpt2")


def matchers(b, texts):
    out = []
    for text in texts:
        m = b.artifact.matcher()
        for t in b.vocab.encode(text):
            m.commit(t)
        out.append(m)
    return out


def test_a_padded_bitmask_gets_the_mask_and_forbids_the_padding(b):
    vocab = b.artifact.vocab_size                    # 50,257; a padded head has 50,304 logits
    (m,) = matchers(b, ['{"a": '])
    bitmask = glrmask_runtime.allocate_bitmask(2, 50_304)
    m.fill_bitmask(bitmask, 1)
    allowed = bitmask_to_bool(bitmask[1], 50_304)
    assert np.array_equal(allowed[:vocab], m.mask()) and not allowed[vocab:].any()
    assert (bitmask[0] == -1).all()
    logits = np.zeros((2, 50_304), np.float32)
    glrmask_runtime.apply_bitmask_inplace(logits, bitmask)
    assert np.isneginf(logits[1, vocab:]).all() and np.isfinite(logits[1, :vocab][m.mask()]).all()


def test_a_bitmask_narrower_than_the_vocabulary_is_refused(b):
    (m,) = matchers(b, ["["])
    bitmask = glrmask_runtime.allocate_bitmask(1, b.artifact.vocab_size - 64)
    with pytest.raises(TypeError, match="W >= 1571"):
        m.fill_bitmask(bitmask)
    assert (bitmask == -1).all()


def test_batch_fill_equals_one_fill_per_row(b):
    ms = matchers(b, ["", "[1", '{"k": tr', "[1, 2]"])
    batch = glrmask_runtime.allocate_bitmask(6, b.artifact.vocab_size)
    glrmask_runtime.fill_bitmasks(ms, batch, [5, 0, 3, 1])
    for m, row in zip(ms, [5, 0, 3, 1]):
        single = glrmask_runtime.allocate_bitmask(1, b.artifact.vocab_size)
        m.fill_bitmask(single)
        assert np.array_equal(batch[row], single[0])
    assert (batch[[2, 4]] == -1).all()
    glrmask_runtime.fill_bitmasks(ms, batch)                  # rows 0..3 in order
    assert np.array_equal(bitmask_to_bool(batch[3], b.artifact.vocab_size), ms[3].mask())


@pytest.mark.parametrize("indices, error", [([0, 1], "2 indices"), ([0, 1, 9, 2], "out of range"),
                                            ([0, 1, True, 2], "index must be an int")])
def test_batch_fill_refuses_bad_indices_and_writes_nothing(b, indices, error):
    ms = matchers(b, ["", "[", "{", "[1"])
    batch = glrmask_runtime.allocate_bitmask(4, b.artifact.vocab_size)
    with pytest.raises((ValueError, TypeError), match=error):
        glrmask_runtime.fill_bitmasks(ms, batch, indices)
    assert (batch == -1).all()
