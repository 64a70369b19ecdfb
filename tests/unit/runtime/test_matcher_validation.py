"""Matcher input validation: wrong types and out-of-range values raise TypeError/ValueError (never a
wrong answer, a raw IndexError or a silent conversion), and a refused call leaves the state unchanged."""

from __future__ import annotations

import numpy as np
import pytest

import glrmask_runtime
from devtools.builds import JSON_GRAMMAR, built


@pytest.fixture(scope="module")
def b():
    return built(JSON_GRAMMAR, "gpt2")


def started(b, text='{"a": [1'):
    m = b.artifact.matcher()
    for t in b.vocab.encode(text):
        m.commit(t)
    return m


def snapshot(m):
    """Everything a caller can observe about the state."""
    return m.steps, m.is_accepting(), m.is_finished(), m.mask().copy()


def assert_unchanged(m, before):
    steps, accepting, finished, mask = before
    assert (m.steps, m.is_accepting(), m.is_finished()) == (steps, accepting, finished)
    assert np.array_equal(m.mask(), mask)


def allowed_token(b, m) -> int:
    return int(np.flatnonzero(m.mask())[0])


@pytest.mark.parametrize("bad", [58.7, "58", True, False, None, np.float64(58.0), np.bool_(True), np.array([58])],
                         ids=["float", "str", "True", "False", "None", "numpy-float", "numpy-bool", "array"])
def test_commit_with_a_non_integer_token_id_raises_type_error(b, bad):
    m = started(b)
    before = snapshot(m)
    with pytest.raises(TypeError, match="token id must be an int"):
        m.commit(bad)
    assert_unchanged(m, before)


@pytest.mark.parametrize("bad", [58.7, "58", True, None], ids=["float", "str", "True", "None"])
def test_is_allowed_with_a_non_integer_token_id_raises_type_error(b, bad):
    with pytest.raises(TypeError, match="token id must be an int"):
        started(b).is_allowed(bad)


@pytest.mark.parametrize("kind", [int, np.int64, np.int32, np.uint16])
def test_commit_and_is_allowed_accept_python_and_numpy_integers(b, kind):
    m = started(b)
    token = allowed_token(b, m)
    assert m.is_allowed(kind(token))
    m.commit(kind(token))
    assert m.steps == len(b.vocab.encode('{"a": [1')) + 1


def test_is_allowed_with_a_negative_token_id_raises_value_error(b):
    m = started(b, "[1]")
    eos = b.artifact.eos_token_ids[0]
    assert m.is_allowed(eos)
    wrapped = eos - b.artifact.rows.shape[1] * 32   # a word index and bit that numpy would wrap to EOS
    for bad in (wrapped, -1, -32):
        with pytest.raises(ValueError, match="out of range"):
            m.is_allowed(bad)


def test_is_allowed_past_the_vocabulary_raises_value_error_not_index_error(b):
    m = started(b)
    for bad in (b.artifact.vocab_size, b.artifact.vocab_size + 100, 2**40):
        with pytest.raises(ValueError, match="out of range"):
            m.is_allowed(bad)


def test_commit_out_of_range_token_raises_value_error_and_keeps_state(b):
    m = started(b)
    before = snapshot(m)
    for bad in (-1, b.artifact.vocab_size, np.int64(b.artifact.vocab_size + 100)):
        with pytest.raises(ValueError, match="out of range"):
            m.commit(bad)
    assert_unchanged(m, before)


@pytest.mark.parametrize("bad", [5, 5.0, "5", None, [49, 50]], ids=["int", "float", "str", "None", "list"])
def test_commit_bytes_with_a_non_bytes_argument_raises_type_error(b, bad):
    m = started(b)
    before = snapshot(m)
    with pytest.raises(TypeError, match="bytes, bytearray or memoryview"):
        m.commit_bytes(bad)
    assert_unchanged(m, before)


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
def test_commit_bytes_accepts_bytes_like_input(b, kind):
    m = started(b)
    m.commit_bytes(kind(b", 2]"))
    m.commit_bytes(kind(b"}"))
    assert m.is_accepting() and m.steps == len(b.vocab.encode('{"a": [1')) + 2


def test_commit_bytes_of_empty_input_is_not_a_step(b):
    m = started(b)
    before = snapshot(m)
    m.commit_bytes(b"")
    m.commit_bytes(bytearray())
    assert_unchanged(m, before)
    m.rollback(1)  # undoes the last real token, not an empty commit
    assert m.steps == before[0] - 1 and np.array_equal(m.mask(), started(b, '{"a": [').mask())


def test_rejected_bytes_leave_state_unchanged(b):
    m = started(b)
    before = snapshot(m)
    with pytest.raises(glrmask_runtime.InputRejected):
        m.commit_bytes(b"]]")
    assert_unchanged(m, before)
    m.commit_bytes(b"]}")
    assert m.is_accepting()


def test_rejected_token_after_eos_leaves_state_unchanged(b):
    m = started(b, "[1]")
    m.commit(b.artifact.eos_token_ids[0])
    before = snapshot(m)
    with pytest.raises(glrmask_runtime.TokenRejected):
        m.commit(b.vocab.encode(" ")[0])
    with pytest.raises(glrmask_runtime.InputRejected):
        m.commit_bytes(b" ")
    assert_unchanged(m, before)


@pytest.mark.parametrize("bad", [-1, 3, 100], ids=["minus-one", "batch-size", "far"])
def test_fill_bitmask_index_outside_the_batch_raises_value_error(b, bad):
    m = started(b)
    bitmask = glrmask_runtime.allocate_bitmask(3, b.artifact.vocab_size)
    with pytest.raises(ValueError, match="out of range"):
        m.fill_bitmask(bitmask, bad)
    assert (bitmask == -1).all()   # nothing written, in particular not the last row for -1


@pytest.mark.parametrize("bad", [slice(0, 2), [0, 1], True, 1.0, None, np.array([1])],
                         ids=["slice", "list", "True", "float", "None", "array"])
def test_fill_bitmask_index_of_the_wrong_type_raises_type_error(b, bad):
    m = started(b)
    bitmask = glrmask_runtime.allocate_bitmask(3, b.artifact.vocab_size)
    with pytest.raises(TypeError, match="index must be an int"):
        m.fill_bitmask(bitmask, bad)
    assert (bitmask == -1).all()


def test_fill_bitmask_accepts_a_numpy_integer_index(b):
    m = started(b)
    bitmask = glrmask_runtime.allocate_bitmask(3, b.artifact.vocab_size)
    m.fill_bitmask(bitmask, np.int64(2))
    assert np.array_equal(glrmask_runtime.bitmask.bitmask_to_bool(bitmask[2], b.artifact.vocab_size), m.mask())
    assert (bitmask[:2] == -1).all()


@pytest.mark.parametrize("bad", [[[0] * 1571], None, "bitmask"], ids=["list", "None", "str"])
def test_fill_bitmask_with_a_non_array_raises_type_error_not_attribute_error(b, bad):
    with pytest.raises(TypeError, match="int32 array or CPU tensor"):
        started(b).fill_bitmask(bad)
