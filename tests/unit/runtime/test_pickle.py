"""Pickling: an Artifact by path + file sha256, a Matcher by its artifact + what it committed; the
copy (in this process, or in a spawned worker) continues the sequence with the same masks."""

from __future__ import annotations

import gc
import multiprocessing
import pickle
import shutil
import weakref

import numpy as np
import pytest

import glrmask_runtime
from devtools.builds import JSON_GRAMMAR, built

DOCUMENT = '{"name": "x", "items": [1, 2.5e3, true, null], "nested": {"k": []}}'


@pytest.fixture(scope="module")
def b():
    return built(JSON_GRAMMAR, "gpt2")


@pytest.fixture
def own_copy(b, tmp_path):
    """The artifact file at a path of this test's own, loaded from there."""
    path = tmp_path / "json.glrm"
    shutil.copyfile(b.path, path)
    return path


def packed_masks(matcher, tokens) -> np.ndarray:
    """fill_bitmask before each token and after the last one; commits the tokens."""
    out = glrmask_runtime.allocate_bitmask(len(tokens) + 1, matcher._art.vocab_size)
    for i, token in enumerate(tokens):
        matcher.fill_bitmask(out, i)
        matcher.commit(token)
    matcher.fill_bitmask(out, len(tokens))
    return out


def continue_in_worker(matcher, tokens):
    """Runs in a spawned process: the unpickled matcher goes on; returns its masks and itself."""
    masks = packed_masks(matcher, tokens)
    return masks, matcher.steps, matcher.is_accepting(), matcher


def test_matcher_round_trip_continues_with_the_same_masks(b):
    tokens = b.vocab.encode(DOCUMENT)
    half = len(tokens) // 2
    m = b.artifact.matcher()
    packed_masks(m, tokens[:half])
    restored = pickle.loads(pickle.dumps(m))
    assert restored.steps == m.steps == half
    assert np.array_equal(packed_masks(restored, tokens[half:]), packed_masks(m, tokens[half:]))
    assert restored.is_accepting() and m.is_accepting()


def test_restored_matcher_rolls_back_like_the_original(b):
    tokens = b.vocab.encode(DOCUMENT)
    m = b.artifact.matcher()
    masks = [m.mask().copy()]
    for token in tokens:
        m.commit(token)
        masks.append(m.mask().copy())
    restored = pickle.loads(pickle.dumps(m))
    restored.rollback(7)
    assert np.array_equal(restored.mask(), masks[-8]) and restored.steps == len(tokens) - 7


def test_commit_bytes_steps_and_eos_survive_pickling(b):
    m = b.artifact.matcher()
    m.commit_bytes(b'{"forced": ')
    for token in b.vocab.encode("[1, 2]"):
        m.commit(token)
    m.commit_bytes(bytearray(b"}"))
    m.commit(np.int64(b.artifact.eos_token_ids[0]))
    restored = pickle.loads(pickle.dumps(m))
    assert restored.is_finished() and restored.steps == m.steps
    restored.rollback(2)   # EOS, then the forced "}"
    assert not restored.is_finished() and not restored.is_accepting()
    restored.commit_bytes(b"}")
    assert restored.is_accepting()


def test_artifact_pickles_by_path_and_fingerprint_not_by_content(b):
    data = pickle.dumps(b.artifact)
    assert len(data) < 1000 < b.path.stat().st_size
    restored = pickle.loads(data)
    # a live artifact of that file is reused, not reloaded (other tests may have loaded the file too)
    assert pickle.loads(data) is restored and restored.fingerprint == b.artifact.fingerprint
    assert restored.path == b.artifact.path


def test_unpickling_in_a_process_without_it_reloads_and_verifies(own_copy):
    artifact = glrmask_runtime.load(own_copy)
    m = artifact.matcher()
    m.commit_bytes(b"[1, ")
    data = pickle.dumps(m)
    expected = m.mask().copy()
    alive = weakref.ref(artifact)
    del artifact, m
    gc.collect()
    assert alive() is None
    restored = pickle.loads(data)
    assert restored._art.fingerprint == glrmask_runtime.load(own_copy).fingerprint
    assert np.array_equal(restored.mask(), expected)


def test_unpickling_after_the_artifact_file_changed_raises_artifact_error(own_copy):
    artifact = glrmask_runtime.load(own_copy)
    m = artifact.matcher()
    m.commit_bytes(b"[1, ")
    data = pickle.dumps(m)
    del artifact, m
    gc.collect()
    other = built(JSON_GRAMMAR, "small-gpt2").path   # same grammar, another vocabulary: masks would differ
    shutil.copyfile(other, own_copy)
    with pytest.raises(glrmask_runtime.ArtifactError, match="changed since it was pickled"):
        pickle.loads(data)


def test_unpickling_after_the_artifact_file_was_removed_raises_artifact_error(own_copy):
    data = pickle.dumps(glrmask_runtime.load(own_copy))
    gc.collect()
    own_copy.unlink()
    with pytest.raises(glrmask_runtime.ArtifactError, match="cannot read artifact"):
        pickle.loads(data)


def test_matcher_made_from_a_raw_state_refuses_to_pickle(b):
    m = b.artifact.matcher()
    m.commit_bytes(b"[")
    raw = glrmask_runtime.Matcher(b.artifact, m._state)
    with pytest.raises(TypeError, match="raw ParseState"):
        pickle.dumps(raw)
    raw.reset()
    assert pickle.loads(pickle.dumps(raw)).steps == 0


def test_spawned_worker_continues_the_sequence_with_the_same_masks(b):
    tokens = b.vocab.encode(DOCUMENT)
    half = len(tokens) // 3
    m = b.artifact.matcher()
    packed_masks(m, tokens[:half])
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        masks, steps, accepting, back = pool.apply(continue_in_worker, (m, tokens[half:]))
    assert np.array_equal(masks, packed_masks(m, tokens[half:]))
    assert steps == m.steps == len(tokens) and accepting
    # and back again, into this process: onto a live artifact of the same file
    assert back._art.fingerprint == b.artifact.fingerprint and back.steps == m.steps
    assert np.array_equal(back.mask(), m.mask())


def test_a_copy_of_a_matcher_pickles_like_the_original(b):
    m = b.artifact.matcher()
    tokens = b.vocab.encode(DOCUMENT)
    for t in tokens[:5]:
        m.commit(t)
    fork = pickle.loads(pickle.dumps(m.copy()))
    assert fork.steps == m.steps and np.array_equal(fork.mask(), m.mask())
