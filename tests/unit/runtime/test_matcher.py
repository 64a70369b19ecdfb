"""The Matcher's contract: rejected tokens leave the state unchanged, rollback/copy are exact,
fill_bitmask and mask agree, EOS finishes the output."""

from __future__ import annotations

import numpy as np
import pytest

import glrmask_runtime
from devtools.builds import JSON_GRAMMAR, built
from glrmask_runtime.bitmask import bitmask_to_bool


@pytest.fixture(scope="module")
def b():
    return built(JSON_GRAMMAR, "gpt2")


def encode(b, text):
    return b.vocab.encode(text)


def test_rejected_token_leaves_state_unchanged(b):
    m = b.artifact.matcher()
    for t in encode(b, '{"a": [1'):
        m.commit(t)
    before = m.mask().copy()
    bad = encode(b, "}")[0]
    assert not before[bad]
    with pytest.raises(glrmask_runtime.TokenRejected) as info:
        m.commit(bad)
    assert info.value.token_id == bad and info.value.step == m.steps
    assert np.array_equal(m.mask(), before)
    for t in encode(b, "]}"):
        m.commit(t)
    assert m.is_accepting()


def test_rollback_and_copy_restore_exact_masks(b):
    m = b.artifact.matcher()
    ids = encode(b, '[{"k": "v"}, 2.5e3, null]')
    masks = []
    for t in ids:
        masks.append(m.mask().copy())
        m.commit(t)
    fork = m.copy()
    m.rollback(3)
    assert np.array_equal(m.mask(), masks[-3])
    assert fork.is_accepting() and not m.is_accepting()
    m.rollback(len(ids) - 3)
    assert np.array_equal(m.mask(), masks[0])
    with pytest.raises(ValueError):
        m.rollback(1)


def test_fill_bitmask_matches_mask(b):
    m = b.artifact.matcher()
    batch = glrmask_runtime.allocate_bitmask(3, b.artifact.vocab_size)
    for t in encode(b, '{"x": [true, "y"'):
        m.fill_bitmask(batch, index=1)
        assert np.array_equal(bitmask_to_bool(batch[1], b.artifact.vocab_size), m.mask())
        m.commit(t)
    assert (batch[0] == -1).all() and (batch[2] == -1).all()
    with pytest.raises(TypeError):
        m.fill_bitmask(np.zeros((1, 3), dtype=np.int32))


def test_eos_finishes_and_nothing_follows(b):
    m = b.artifact.matcher()
    for t in encode(b, "[1]"):
        m.commit(t)
    eos = b.artifact.eos_token_ids[0]
    before = np.zeros((1, b.artifact.rows.shape[1]), dtype=np.int32)
    m.fill_bitmask(before)          # the mask before EOS (EOS in it) is the one kept for this state
    m.commit(eos)
    after = np.full_like(before, -1)
    m.fill_bitmask(after)
    assert m.is_finished() and not m.is_accepting() and not m.mask().any() and not after.any()
    with pytest.raises(glrmask_runtime.TokenRejected):
        m.commit(encode(b, " ")[0])
    m.rollback(1)
    assert not m.is_finished() and m.is_accepting()
    m.fill_bitmask(after)
    assert np.array_equal(after, before)


def test_commit_bytes_and_out_of_range_ids(b):
    m = b.artifact.matcher()
    m.commit_bytes(b'{"key": ')
    with pytest.raises(glrmask_runtime.InputRejected):
        m.commit_bytes(b"}")
    m.commit_bytes(b'"value"}')
    assert m.is_accepting()
    with pytest.raises(ValueError):
        m.commit(b.artifact.vocab_size)


def test_special_tokens_are_never_allowed(b):
    m = b.artifact.matcher()
    specials = sorted(set(b.vocab.special_ids) - set(b.vocab.eos_ids))
    for t in encode(b, '["a", '):
        assert not m.mask()[specials].any()
        m.commit(t)


def test_mask_rows_unpacked_are_kept_within_their_bound(b, monkeypatch):
    """`mask()` keeps the rows it unpacks in a bounded cache: with room for two, a document's masks
    (single pool rows on JSON) still equal the packed bitmask's bits, and at most two are kept."""
    art = b.artifact
    monkeypatch.setattr(art._bool_rows, "limit", 2)
    art._bool_rows.clear()
    m = art.matcher()
    bitmask = glrmask_runtime.allocate_bitmask(1, art.vocab_size)
    for t in encode(b, '{"k": [1, 2.5, "s", {"n": null}], "t": true}'):
        m.fill_bitmask(bitmask)
        assert np.array_equal(m.mask(), bitmask_to_bool(bitmask[0], art.vocab_size))
        assert len(art._bool_rows) <= 2
        m.commit(t)
    assert len(art._bool_rows) == 2
