"""Bitmask helpers against a per-bit Python reference of the vLLM/xgrammar layout."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from glrmask_runtime.bitmask import (
    allocate_bitmask,
    apply_bitmask_inplace,
    bitmask_shape,
    bitmask_to_bool,
    bool_to_bitmask,
)


def reference_pack(allowed: list[bool]) -> list[int]:
    """Token v sets bit v % 32 of word v // 32; words as signed int32 values."""
    words = [0] * ((len(allowed) + 31) // 32)
    for v, ok in enumerate(allowed):
        if ok:
            words[v // 32] |= 1 << (v % 32)
    return [w - (1 << 32) if w >= 1 << 31 else w for w in words]


def reference_unpack(words: list[int], vocab_size: int) -> list[bool]:
    return [bool((words[v // 32] & 0xFFFFFFFF) >> (v % 32) & 1) for v in range(vocab_size)]


bool_rows = hnp.arrays(np.bool_, st.integers(1, 200))
bool_batches = hnp.arrays(np.bool_, hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=70))


@pytest.mark.parametrize("vocab_size, words", [(1, 1), (31, 1), (32, 1), (33, 2), (64, 2), (50257, 1571)])
def test_bitmask_shape(vocab_size, words):
    assert bitmask_shape(3, vocab_size) == (3, -(-vocab_size // 32)) == (3, words)


def test_allocate_bitmask_allows_everything():
    bitmask = allocate_bitmask(2, 70)
    assert bitmask.dtype == np.int32 and bitmask.shape == (2, 3)
    assert bitmask_to_bool(bitmask, 70).all()


@given(bool_rows)
def test_bool_to_bitmask_matches_reference(allowed):
    packed = bool_to_bitmask(allowed)
    assert packed.dtype == np.int32
    assert packed.tolist() == reference_pack(allowed.tolist())


@given(bool_batches)
def test_bool_to_bitmask_batch(allowed):
    packed = bool_to_bitmask(allowed)
    assert packed.tolist() == [reference_pack(row) for row in allowed.tolist()]


@given(st.lists(st.integers(-(2**31), 2**31 - 1), min_size=1, max_size=8), st.data())
def test_bitmask_to_bool_matches_reference(words, data):
    vocab_size = data.draw(st.integers(1, 32 * len(words)))
    row = np.array(words, dtype=np.int32)
    unpacked = bitmask_to_bool(row, vocab_size)
    assert unpacked.dtype == np.bool_ and unpacked.tolist() == reference_unpack(words, vocab_size)
    assert bitmask_to_bool(row[None, :], vocab_size).tolist() == [unpacked.tolist()]


@given(bool_batches)
def test_round_trip(allowed):
    np.testing.assert_array_equal(bitmask_to_bool(bool_to_bitmask(allowed), allowed.shape[-1]), allowed)


@given(bool_batches, st.sampled_from([np.float16, np.float32, np.float64]))
def test_apply_bitmask_inplace_matches_reference(allowed, dtype):
    rng = np.random.default_rng(allowed.size)
    logits = rng.normal(size=allowed.shape).astype(dtype)
    expected = [[x if ok else float("-inf") for x, ok in zip(row, oks, strict=True)]
                for row, oks in zip(logits.tolist(), allowed.tolist(), strict=True)]
    bitmask = bool_to_bitmask(allowed)
    apply_bitmask_inplace(logits, bitmask)
    assert logits.tolist() == expected
    row = logits[0].copy()
    apply_bitmask_inplace(row, bitmask[0])
    assert row.tolist() == expected[0]


def test_apply_ignores_padding_bits_and_extra_words():
    logits = np.zeros((1, 33))
    bitmask = np.full((1, 4), -1, np.int32)  # wider than needed, padding bits set
    bitmask[0, 1] = 0  # tokens 32..63: only token 32 is in range
    apply_bitmask_inplace(logits, bitmask)
    assert np.isneginf(logits[0, 32]) and not np.isinf(logits[0, :32]).any()


@pytest.mark.parametrize("call, error, fragment", [
    (lambda: bitmask_shape(0, 5), ValueError, "batch_size: expected >= 1, got 0"),
    (lambda: bitmask_shape(1, 2.0), TypeError, "vocab_size: expected an int, got float"),
    (lambda: bool_to_bitmask(np.zeros(4, np.int32)), TypeError, "expected a numpy bool array"),
    (lambda: bool_to_bitmask(np.zeros((1, 2, 3), bool)), ValueError, r"got \(1, 2, 3\)"),
    (lambda: bitmask_to_bool(np.zeros(2, np.int64), 40), TypeError, "expected a numpy int32 array"),
    (lambda: bitmask_to_bool(np.zeros(1, np.int32), 40), ValueError, r"W >= 2 for 40 tokens, got \(1,\)"),
    (lambda: apply_bitmask_inplace(np.zeros(40, np.int32), np.zeros(2, np.int32)), TypeError, "floating"),
    (lambda: apply_bitmask_inplace(np.zeros((2, 40)), np.zeros((3, 2), np.int32)), ValueError, "batch shape"),
    (lambda: apply_bitmask_inplace(np.zeros(40), np.zeros((1, 2), np.int32)), ValueError, "batch shape"),
], ids=["batch0", "float-vocab", "int-allowed", "3d-allowed", "int64-mask", "short-mask", "int-logits",
        "batch-mismatch", "ndim-mismatch"])
def test_misuse_raises_with_expected_and_got(call, error, fragment):
    with pytest.raises(error, match=fragment):
        call()


def test_apply_rejects_read_only_logits():
    logits = np.zeros(8)
    logits.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        apply_bitmask_inplace(logits, np.zeros(1, np.int32))
