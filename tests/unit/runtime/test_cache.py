"""The expansion cache as a user sees it: a modified cache file is never used, the cache has a size
bound, and tests never touch the real cache directory."""

from __future__ import annotations

import hashlib
import mmap
import os
import random
import shutil
import stat
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import msgpack
import numpy as np
import pytest

import glrmask_runtime
from devtools.brute_force import random_walk
from devtools.builds import JSON_GRAMMAR, REPO_ROOT, built
from glrmask_runtime import cache
from glrmask_runtime.format import build_image, encode_container, read_container
from tests.support import session_cache


def test_test_session_never_writes_the_users_real_cache_dir(tmp_path):
    session, user = Path(session_cache.SESSION_CACHE_DIR), Path(session_cache.USER_CACHE_DIR)
    assert session != user and os.environ[cache.ENV_VAR] == str(session)
    path = tmp_path / "a.glrm"
    path.write_bytes(encode_container({"test": "session cache"}, {"a": np.arange(100, dtype=np.int32)}))
    key = read_container(path).file_sha256
    assert (session / (key + cache.SUFFIX)).is_file()
    assert not (user / (key + cache.SUFFIX)).exists()
    # A subprocess (the CLI, a multiprocessing worker) gets the same directory.
    child = subprocess.run([sys.executable, "-c", "from glrmask_runtime import cache; print(cache.cache_dir())"],
                           capture_output=True, text=True, check=True)
    assert child.stdout.strip() == str(session)


# ---------------------------------------------------------------- a modified cache file is never used


def force_crc32(data: bytearray, pos: int, target: int) -> None:
    """Rewrite data[pos:pos + 4] so that zlib.crc32(data) == target (crc32 is affine over GF(2))."""
    data[pos:pos + 4] = bytes(4)
    base = zlib.crc32(data)
    basis: list[tuple[int, int]] = []   # (vector, which input bits make it), distinct top bits, descending
    for bit in range(32):
        data[pos:pos + 4] = (1 << bit).to_bytes(4, "little")
        vector, combo = zlib.crc32(data) ^ base, 1 << bit
        for known, known_combo in basis:
            if vector ^ known < vector:
                vector, combo = vector ^ known, combo ^ known_combo
        if vector:
            basis = sorted(basis + [(vector, combo)], reverse=True)
    want, solution = target ^ base, 0
    for known, known_combo in basis:
        if want ^ known < want:
            want, solution = want ^ known, solution ^ known_combo
    assert want == 0
    data[pos:pos + 4] = solution.to_bytes(4, "little")
    assert zlib.crc32(data) == target


def section_span(image: bytes, name: str) -> tuple[int, int]:
    (index_size,) = struct.unpack_from("<Q", image)
    index = msgpack.unpackb(image[8:8 + index_size], raw=False)
    entry = next(e for e in index["sections"] if e[0] == name)
    return entry[3], entry[4]


def replace_file(path: Path, data: bytes) -> None:
    """Like another process would: a new file renamed over the old one (the old one may be mapped)."""
    temp = path.with_suffix(".forged")
    temp.write_bytes(data)
    os.replace(temp, path)


def tamper_keeping_crc32(image_file: Path) -> bytes:
    """Allow every token in every row of the row pool, then force the image's crc32 back."""
    good = image_file.read_bytes()
    offset, length = section_span(good, "rows.bits")
    forged = bytearray(good)
    forged[offset:offset + length] = b"\xff" * length
    force_crc32(forged, offset + length - 4, zlib.crc32(good))
    assert len(forged) == len(good) and zlib.crc32(forged) == zlib.crc32(good) and forged != good
    replace_file(image_file, bytes(forged))
    return good


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV_VAR, str(directory))
    monkeypatch.delenv(cache.MAX_BYTES_ENV_VAR, raising=False)
    return directory


def walk(artifact, seed: int) -> list[int]:
    tokens, _ = random_walk(artifact.matcher(), random.Random(seed), 40, 15, artifact.eos_token_ids)
    assert len(tokens) > 5
    return tokens


def first_masks(artifact, tokens) -> list[np.ndarray]:
    m, masks = artifact.matcher(), []
    for token in tokens:
        masks.append(m.mask().copy())
        m.commit(token)
    return masks + [m.mask().copy()]


@pytest.mark.parametrize("source", ["format 3", "format 2"])
def test_cached_image_modified_with_its_crc32_kept_is_rebuilt_not_used(tmp_path, private_cache, source):
    """Format 3 names its image's sha256; format 2 does not, so its loads expand again and share the
    cache file only if it is equal. Either way a forged cache file is never used."""
    original = {"format 3": built(JSON_GRAMMAR, "small-gpt2").path,
                "format 2": REPO_ROOT / "tests" / "data" / "compat" / "json-small-gpt2.format2.glrm"}[source]
    path = tmp_path / "json.glrm"
    shutil.copyfile(original, path)
    first = glrmask_runtime.load(path)
    tokens = walk(first, 1)
    expected = first_masks(first, tokens)
    image_file = private_cache / (read_container(path).file_sha256 + cache.SUFFIX)
    good = tamper_keeping_crc32(image_file)
    masks = first_masks(glrmask_runtime.load(path), tokens)
    assert all(np.array_equal(a, e) for a, e in zip(masks, expected, strict=True))
    assert not masks[0].all()   # the forged pool would allow every token
    assert image_file.read_bytes() == good   # the forged file was replaced by the real image


def test_cached_image_modified_in_place_with_its_mtime_put_back_is_hashed_again_and_rebuilt(tmp_path, private_cache):
    """A warm load trusts the image's seal only while the file's identity (ctime included) is the
    one recorded when its sha256 was checked; no way of editing the file keeps its ctime."""
    path = tmp_path / "json.glrm"
    shutil.copyfile(built(JSON_GRAMMAR, "small-gpt2").path, path)
    first = glrmask_runtime.load(path)
    tokens = walk(first, 2)
    expected = first_masks(first, tokens)
    image_file = private_cache / (first.fingerprint + cache.SUFFIX)
    assert image_file.with_suffix(cache.SEAL_SUFFIX).exists()
    good = image_file.read_bytes()
    before = image_file.stat()
    offset, length = section_span(good, "rows.bits")
    with open(image_file, "r+b") as handle:   # same inode, same size
        handle.seek(offset)
        handle.write(b"\xff" * length)
    os.utime(image_file, ns=(before.st_atime_ns, before.st_mtime_ns))
    masks = first_masks(glrmask_runtime.load(path), tokens)
    assert all(np.array_equal(m, e) for m, e in zip(masks, expected, strict=True))
    assert image_file.read_bytes() == good


def test_untouched_cache_file_of_a_format_2_artifact_is_shared_not_rewritten(tmp_path, private_cache):
    path = tmp_path / "old.glrm"
    shutil.copyfile(REPO_ROOT / "tests" / "data" / "compat" / "json-small-gpt2.format2.glrm", path)
    key = read_container(path).file_sha256
    image_file = private_cache / (key + cache.SUFFIX)
    before = image_file.stat()
    second = read_container(path)
    assert image_file.stat().st_ino == before.st_ino and image_file.stat().st_mtime_ns == before.st_mtime_ns
    base = second.sections["rows.bits"]
    while isinstance(base, (np.ndarray, memoryview)):
        base = base.base if isinstance(base, np.ndarray) else base.obj
    assert isinstance(base, mmap.mmap)


# ---------------------------------------------------------------- size bound and eviction


def container_of_size(tmp_path, name: str, n_bytes: int) -> tuple[Path, int]:
    """An artifact whose image is a bit over `n_bytes`; returns its path and exact image size."""
    path = tmp_path / f"{name}.glrm"
    data = np.frombuffer(hashlib.sha256(name.encode()).digest() * (n_bytes // 32), np.uint8)
    path.write_bytes(encode_container({"name": name}, {"data": data}))
    return path, len(build_image({"name": name}, {"data": data}))


def cached(directory: Path) -> set[str]:
    return {p.name for p in directory.glob("*" + cache.SUFFIX)} if directory.exists() else set()


def key_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() + cache.SUFFIX


def test_storing_past_max_bytes_evicts_the_least_recently_used_image(tmp_path, private_cache, monkeypatch):
    a, size = container_of_size(tmp_path, "a", 20_000)
    b, _ = container_of_size(tmp_path, "b", 20_000)
    c, _ = container_of_size(tmp_path, "c", 20_000)
    monkeypatch.setenv(cache.MAX_BYTES_ENV_VAR, str(2 * size + 100))   # room for two images
    read_container(a)
    read_container(b)
    assert cached(private_cache) == {key_of(a), key_of(b)}
    for path, ns in ((a, 1_000_000_000), (b, 2_000_000_000)):   # a: long unused...
        seal = (private_cache / key_of(path)).with_suffix(cache.SEAL_SUFFIX)
        os.utime(seal, ns=(ns, ns))
    image_a = (private_cache / key_of(a)).stat()
    read_container(a)                                           # ...until this warm hit
    after = (private_cache / key_of(a)).stat()
    assert (after.st_mtime_ns, after.st_ctime_ns) == (image_a.st_mtime_ns, image_a.st_ctime_ns)  # never rewritten
    read_container(c)
    assert cached(private_cache) == {key_of(a), key_of(c)}
    loaded = read_container(b)   # an evicted image is simply rebuilt
    assert loaded.metadata == {"name": "b"} and len(cached(private_cache)) == 2


def test_temp_file_left_by_a_killed_writer_is_removed_once_stale(tmp_path, private_cache):
    a, _ = container_of_size(tmp_path, "a", 20_000)
    b, _ = container_of_size(tmp_path, "b", 20_000)
    read_container(a)
    stale, fresh = private_cache / f".{'0' * 16}.x1.tmp", private_cache / f".{'1' * 16}.x2.tmp"
    for path in (stale, fresh):
        path.write_bytes(b"half an image")
    long_ago = time.time_ns() - (cache.STALE_TEMP_SECONDS + 60) * 10**9
    os.utime(stale, ns=(long_ago, long_ago))
    read_container(b)   # storing evicts: the stale temp goes, a writer's fresh one stays
    assert not stale.exists() and fresh.exists()
    assert cached(private_cache) == {key_of(a), key_of(b)}


def test_image_larger_than_max_bytes_loads_in_memory_and_is_not_cached(tmp_path, private_cache, monkeypatch):
    a, size = container_of_size(tmp_path, "a", 20_000)
    monkeypatch.setenv(cache.MAX_BYTES_ENV_VAR, str(size - 1))
    assert read_container(a).metadata == {"name": "a"}
    assert cached(private_cache) == set()
    monkeypatch.setenv(cache.MAX_BYTES_ENV_VAR, str(size))
    read_container(a)
    assert cached(private_cache) == {key_of(a)}


def test_max_bytes_zero_stores_nothing_and_empties_nothing_else(tmp_path, private_cache, monkeypatch):
    a, _ = container_of_size(tmp_path, "a", 5_000)
    read_container(a)
    monkeypatch.setenv(cache.MAX_BYTES_ENV_VAR, "0")
    b, _ = container_of_size(tmp_path, "b", 5_000)
    assert read_container(b).metadata == {"name": "b"}
    assert cached(private_cache) == {key_of(a)}   # eviction runs when storing, and nothing was stored


@pytest.mark.parametrize("value", ["lots", "-5", "4GB"])
def test_invalid_max_bytes_warns_and_uses_the_default(value, monkeypatch):
    monkeypatch.setenv(cache.MAX_BYTES_ENV_VAR, value)
    with pytest.warns(RuntimeWarning, match=cache.MAX_BYTES_ENV_VAR):
        assert cache.max_bytes() == cache.DEFAULT_MAX_BYTES


def test_default_max_bytes_is_a_few_gib(monkeypatch):
    monkeypatch.delenv(cache.MAX_BYTES_ENV_VAR, raising=False)
    assert cache.max_bytes() == 4 << 30
    monkeypatch.setenv(cache.MAX_BYTES_ENV_VAR, "1_000")
    assert cache.max_bytes() == 1000


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_cache_directory_is_created_private(tmp_path, private_cache):
    a, _ = container_of_size(tmp_path, "a", 5_000)
    read_container(a)
    assert stat.S_IMODE(private_cache.stat().st_mode) & 0o077 == 0
