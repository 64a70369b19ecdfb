"""Artifact container: round trips, determinism, encoder misuse, the atomic writer and the image cache."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
import zlib

import numpy as np
import pytest

from glrmask_cli import output as writer
from glrmask_cli.artifact import write_artifact
from glrmask_runtime import cache, format
from glrmask_runtime.errors import ArtifactError
from glrmask_runtime.format import build_image, encode_container, read_container

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
SHAPES = [(), (0,), (1,), (7,), (3, 5), (0, 4), (4, 0), (2, 3, 2)]


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV_VAR, str(directory))
    return directory


def random_array(rng: np.random.Generator, dtype: str, shape: tuple) -> np.ndarray:
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def save(tmp_path, data: bytes, name: str = "a.glrm"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


# ---------------------------------------------------------------- round trips


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_round_trip_every_dtype_and_shape(tmp_path, dtype, shape):
    rng = np.random.default_rng(zlib.crc32(repr((dtype, shape)).encode()))
    array = random_array(rng, dtype, shape)
    path = tmp_path / "a.glrm"
    write_artifact(path, {}, {"x": array})
    loaded = read_container(path).sections["x"]
    assert loaded.dtype == np.dtype(dtype).newbyteorder("<") and loaded.shape == shape
    np.testing.assert_array_equal(loaded, array)
    assert not loaded.flags.writeable


def test_round_trip_many_sections_big_endian_and_strided(tmp_path):
    rng = np.random.default_rng(1)
    base = random_array(rng, "int64", (6, 9))
    sections = {
        "lexer.transitions": base.astype(">i8"),          # big-endian input, little-endian on disk
        "rows.bits": base[:, ::2].astype(np.uint32),      # non-contiguous input
        "vocab/token:data": random_array(rng, "uint8", (1001,)),
        "empty": np.zeros((0, 3), np.int16),
        "a": random_array(rng, "bool", (65,)),
    }
    path = tmp_path / "a.glrm"
    write_artifact(path, {"n": 1}, sections)
    loaded = read_container(path)
    assert list(loaded.sections) == sorted(sections)
    for name, array in sections.items():
        np.testing.assert_array_equal(loaded.sections[name], array)


def test_metadata_round_trip(tmp_path):
    metadata = {
        "compiler": "glrmask 0.1.0", "big": 2**64 - 1, "small": -(2**63), "ratio": 0.25, "none": None,
        "flag": True, "blob": b"\x00\xff", "ids": (1, 2, 3), "nested": {"z": [{"b": 1, "a": [None]}], "a": {}},
        "numpy": np.int64(7), "unicode": "h\u00e9llo \U0001f600",
    }
    path = save(tmp_path, encode_container(metadata, {}))
    loaded = read_container(path).metadata
    expected = dict(metadata, ids=[1, 2, 3], numpy=7)
    assert loaded == expected
    assert list(loaded) == sorted(expected) and list(loaded["nested"]["z"][0]) == ["a", "b"]


def test_container_fields(tmp_path):
    sections = {"a": np.arange(1000, dtype=np.int32), "b": np.ones((3, 3), np.uint8)}
    path = tmp_path / "a.glrm"
    size = write_artifact(path, {"k": "v"}, sections)
    loaded = read_container(path)
    data = path.read_bytes()
    assert size == len(data) == loaded.compressed_size
    assert loaded.file_sha256 == hashlib.sha256(data).hexdigest()
    assert loaded.expanded_size == len(build_image({"k": "v"}, sections))
    assert loaded.path == str(path)
    with pytest.raises(TypeError):
        loaded.sections["c"] = np.zeros(1)  # the mapping itself is read-only too


def test_sections_are_aligned_views(tmp_path):
    sections = {f"s{i}": np.arange(i * 7 + 1, dtype=np.uint8) for i in range(6)}
    path = save(tmp_path, encode_container({}, sections))
    for array in read_container(path).sections.values():
        assert array.ctypes.data % format.ALIGN == 0
        with pytest.raises(ValueError):
            array[...] = 0


def test_identical_inputs_identical_bytes():
    rng = np.random.default_rng(5)
    arrays = {name: random_array(rng, dtype, (17,)) for name, dtype in zip("qwertyuio", DTYPES, strict=True)}
    meta_a = {"b": {"y": 1, "x": [1, "2"]}, "a": b"x"}
    meta_b = {"a": b"x", "b": {"x": [1, "2"], "y": 1}}
    first = encode_container(meta_a, arrays)
    second = encode_container(meta_b, dict(reversed(list(arrays.items()))))
    assert first == second
    assert encode_container(meta_a, {**arrays, "q": arrays["q"] ^ 1}) != first


ENCODE_IN_CHILD = """
import hashlib, sys
import numpy as np
from glrmask_runtime.format import encode_container
sections = {name: np.arange(50, dtype=np.int16) * i for i, name in enumerate(["b", "a", "c.d", "e"])}
meta = {"m": {k: len(k) for k in ("q", "w", "e", "r")}, "b": b"x"}
sys.stdout.write(hashlib.sha256(encode_container(meta, sections)).hexdigest())
"""


def test_identical_bytes_across_processes_and_hash_seeds():
    digests = {subprocess.run([sys.executable, "-c", ENCODE_IN_CHILD], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(digests) == 1 and len(digests.pop()) == 64


@pytest.mark.parametrize("size", [1 << 20, format.SMALL_IMAGE + (1 << 20)])    # level 3, level 9
def test_compressed_bytes_do_not_depend_on_the_number_of_cores(monkeypatch, size):
    """zstd compresses on every core; the file must be the same on a 1-core and a 16-core machine."""
    rng = np.random.default_rng(7)
    image = np.repeat(rng.integers(0, 50, size // 64, dtype=np.uint8), 64).tobytes()   # compressible, not trivial
    bodies = set()
    for cores in (1, 3, 16):
        monkeypatch.setattr(os, "cpu_count", lambda cores=cores: cores)
        bodies.add(format.wrap_image(image))
    assert len(bodies) == 1


def test_index_grows_past_an_alignment_step():
    # Offsets are written into the index, which precedes the sections: the layout must still be
    # canonical when the offsets' msgpack encoding pushes the index over a 64-byte boundary.
    for pad in range(0, 140, 3):
        sections = {f"s{i:02d}": np.zeros(300, np.uint8) for i in range(5)}
        image = build_image({"p": "x" * pad}, sections)
        assert len(image) % format.ALIGN == 0
        format._parse_index("mem", image, deep=True)


# ---------------------------------------------------------------- encoder misuse


@pytest.mark.parametrize("metadata, error, fragment", [
    ({"s": {1, 2}}, TypeError, "got set"),
    ({1: "x"}, TypeError, "expected str keys"),
    ({"n": 2**64}, ValueError, "fits in 64 bits"),
    ({"n": object()}, TypeError, "got object"),
    ([1], TypeError, "expected a dict"),
], ids=["set", "int-key", "int-too-big", "object", "not-a-dict"])
def test_encode_rejects_bad_metadata(metadata, error, fragment):
    with pytest.raises(error, match=fragment):
        encode_container(metadata, {})


def test_encode_rejects_deep_metadata():
    deep: dict = {}
    for _ in range(format.MAX_DEPTH + 2):
        deep = {"d": deep}
    with pytest.raises(ValueError, match="levels of nesting"):
        encode_container(deep, {})


@pytest.mark.parametrize("sections, error, fragment", [
    ({"x": [1, 2]}, TypeError, "expected a numpy array, got list"),
    ({"x": np.zeros(3, np.float32)}, TypeError, "got float32"),
    ({"x": np.array([object()])}, TypeError, "expected dtype"),
    ({"": np.zeros(1, np.uint8)}, ValueError, "section name"),
    ({"a b": np.zeros(1, np.uint8)}, ValueError, "section name"),
    ({"x": np.zeros((1,) * 9, np.uint8)}, ValueError, "at most 8 dimensions"),
], ids=["list", "float", "object", "empty-name", "space-name", "ndim"])
def test_encode_rejects_bad_sections(sections, error, fragment):
    with pytest.raises(error, match=fragment):
        encode_container({}, sections)


@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_unreadable_path_is_an_artifact_error(tmp_path, kind):
    path = tmp_path / "nope.glrm" if kind == "missing" else tmp_path
    with pytest.raises(ArtifactError, match="cannot read artifact"):
        read_container(path)


# ---------------------------------------------------------------- atomic writer


def test_writer_leaves_only_the_artifact(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    write_artifact(out / "a.glrm", {"x": 1}, {"s": np.arange(5, dtype=np.int32)})
    assert os.listdir(out) == ["a.glrm"]


def test_writer_unserializable_section_writes_nothing(tmp_path):
    with pytest.raises(TypeError):
        write_artifact(tmp_path / "a.glrm", {}, {"s": np.zeros(2, np.float64)})
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("failure", ["write", "fsync", "replace"])
def test_writer_failure_leaves_no_file_and_no_temp(tmp_path, monkeypatch, failure):
    def half_write(fd, data):
        os.write(fd, data[:len(data) // 2])
        raise OSError(28, "No space left on device")

    def fail(*args):
        raise OSError(5, "Input/output error")

    target = {"write": (writer, "_write_all", half_write), "fsync": (writer.os, "fsync", fail),
              "replace": (writer.os, "replace", fail)}[failure]
    monkeypatch.setattr(*target)
    with pytest.raises(ArtifactError, match="cannot write") as info:
        write_artifact(tmp_path / "a.glrm", {}, {"s": np.arange(100, dtype=np.int64)})
    assert str(tmp_path / "a.glrm") in str(info.value)
    assert os.listdir(tmp_path) == []


def test_writer_failure_keeps_the_previous_artifact(tmp_path, monkeypatch):
    path = tmp_path / "a.glrm"
    write_artifact(path, {"v": 1}, {})
    before = path.read_bytes()
    monkeypatch.setattr(writer.os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(5, "I/O error")))
    with pytest.raises(ArtifactError):
        write_artifact(path, {"v": 2}, {})
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["a.glrm"]


def test_writer_missing_directory(tmp_path):
    with pytest.raises(ArtifactError, match="cannot create a file"):
        write_artifact(tmp_path / "no" / "a.glrm", {}, {})
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------- cache


def artifact_with_data(tmp_path):
    rng = np.random.default_rng(9)
    sections = {"a": random_array(rng, "int32", (500, 7)), "b": random_array(rng, "bool", (999,))}
    return save(tmp_path, encode_container({"m": 1}, sections)), sections


def image_files(directory) -> list[str]:
    """The cache's files other than seals (each image's seal is checked where it matters)."""
    if not directory.exists():
        return []
    return sorted(name for name in os.listdir(directory) if not name.endswith(cache.SEAL_SUFFIX))


def test_two_loads_share_one_expansion(tmp_path, cache_dir, monkeypatch):
    path, sections = artifact_with_data(tmp_path)
    first = read_container(path)
    files = image_files(cache_dir)
    assert files == [first.file_sha256 + cache.SUFFIX]
    mtime = (cache_dir / files[0]).stat().st_mtime_ns
    monkeypatch.setattr(format, "_expand", lambda *args: pytest.fail("warm load decompressed again"))
    second = read_container(path)
    assert image_files(cache_dir) == files and (cache_dir / files[0]).stat().st_mtime_ns == mtime
    for name, array in sections.items():
        np.testing.assert_array_equal(second.sections[name], array)


@pytest.mark.parametrize("damage", ["flip", "truncate", "extend", "empty"])
def test_damaged_cache_file_is_detected_and_rebuilt(tmp_path, cache_dir, damage):
    path, sections = artifact_with_data(tmp_path)
    key = read_container(path).file_sha256
    image_file = cache_dir / (key + cache.SUFFIX)
    good = image_file.read_bytes()
    damaged = {"flip": good[:5000] + bytes([good[5000] ^ 0x10]) + good[5001:], "truncate": good[:-64],
               "extend": good + b"\0" * 64, "empty": b""}[damage]
    image_file.write_bytes(damaged)
    loaded = read_container(path)
    for name, array in sections.items():
        np.testing.assert_array_equal(loaded.sections[name], array)
    assert image_file.read_bytes() == good


def test_cache_dir_env_var_and_default(tmp_path, monkeypatch):
    path, _ = artifact_with_data(tmp_path)
    monkeypatch.delenv(cache.ENV_VAR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    key = read_container(path).file_sha256
    assert image_files(tmp_path / "xdg" / "glrmask") == [key + cache.SUFFIX]
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "moved"))
    read_container(path)
    assert image_files(tmp_path / "moved") == [key + cache.SUFFIX]


def test_empty_env_var_disables_the_cache(tmp_path, monkeypatch):
    path, sections = artifact_with_data(tmp_path)
    monkeypatch.setenv(cache.ENV_VAR, "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    loaded = read_container(path)
    np.testing.assert_array_equal(loaded.sections["a"], sections["a"])
    assert not (tmp_path / "xdg").exists()


def assert_in_memory_fallback(path, sections) -> None:
    loaded = read_container(path)
    for name, array in sections.items():
        view = loaded.sections[name]
        np.testing.assert_array_equal(view, array)
        assert not view.flags.writeable and view.ctypes.data % format.ALIGN == 0


def test_unusable_cache_dir_falls_back_to_memory(tmp_path, monkeypatch):
    path, sections = artifact_with_data(tmp_path)
    (tmp_path / "file").write_bytes(b"")
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "file" / "cache"))  # a regular file as parent
    assert_in_memory_fallback(path, sections)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root ignores directory permissions")
def test_read_only_cache_dir_falls_back_to_memory(tmp_path, cache_dir):
    path, sections = artifact_with_data(tmp_path)
    cache_dir.mkdir()
    cache_dir.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        assert_in_memory_fallback(path, sections)
        assert image_files(cache_dir) == []
    finally:
        cache_dir.chmod(stat.S_IRWXU)


LOAD_IN_CHILD = """
import sys
from glrmask_runtime.format import read_container
container = read_container(sys.argv[1])
sys.stdout.write(str(int(container.sections["a"].sum())))
"""


def test_concurrent_first_loads_agree_and_leave_one_image(tmp_path, cache_dir):
    path, sections = artifact_with_data(tmp_path)
    children = [subprocess.Popen([sys.executable, "-c", LOAD_IN_CHILD, str(path)], stdout=subprocess.PIPE,
                                 text=True, env=dict(os.environ)) for _ in range(3)]
    outputs = {child.communicate()[0] for child in children}
    assert outputs == {str(int(sections["a"].sum()))}
    assert image_files(cache_dir) == [read_container(path).file_sha256 + cache.SUFFIX]


def test_cache_entry_that_is_a_directory_falls_back(tmp_path, cache_dir):
    path, sections = artifact_with_data(tmp_path)
    key = hashlib.sha256(path.read_bytes()).hexdigest()
    (cache_dir / (key + cache.SUFFIX)).mkdir(parents=True)
    assert_in_memory_fallback(path, sections)
    assert [name for name in image_files(cache_dir) if name.endswith(".tmp")] == []


def test_artifact_replaced_between_loads_gets_its_own_image(tmp_path, cache_dir):
    path, _ = artifact_with_data(tmp_path)
    first = read_container(path)
    write_artifact(path, {"m": 2}, {"a": np.arange(3, dtype=np.int8)})
    second = read_container(path)
    assert second.metadata == {"m": 2} and second.file_sha256 != first.file_sha256
    assert image_files(cache_dir) == sorted(c.file_sha256 + cache.SUFFIX for c in (first, second))
