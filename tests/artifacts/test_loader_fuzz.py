"""Loader safety: every damaged or crafted artifact raises ArtifactError and nothing else.

Random damage (truncation, bit flips, magic, version) goes through the whole file; crafted images
(valid header and checksums around a bad index or section table) reach the structural checks.
A cache holding the good file's expansion is present throughout, so the warm path is attacked too.
"""

from __future__ import annotations

import hashlib
import struct
import zlib

import msgpack
import numpy as np
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glrmask_runtime import cache
from glrmask_runtime.errors import ArtifactError, ArtifactVersionError
from glrmask_runtime.format import (
    ALIGN,
    DTYPES,
    FORMAT_VERSION,
    HEADER,
    HEADER_CRC_AT,
    HEADER_SIZE,
    IMAGE_PREFIX,
    LEGACY_HEADER,
    MAGIC,
    READABLE_VERSIONS,
    Container,
    build_image,
    encode_container,
    read_container,
    wrap_image,
)

SECTIONS = {
    "flags": np.array([True, False, True]),
    "lexer.transitions": np.arange(24, dtype=np.int32).reshape(4, 6),
    "rows.bits": np.array([[1, 2**32 - 1]], dtype=np.uint32),
    "vocab.token_data": np.frombuffer(b"hello world", np.uint8).copy(),
}


def _good_metadata() -> dict:
    """Metadata padded so that the index ends mid-block: small index edits keep the section offsets."""
    for pad in range(64):
        metadata = {"kind": "test", "pad": "p" * pad, "tokenizer": {"eos_ids": [0], "vocab_size": 5}}
        image = build_image(metadata, SECTIONS)
        (index_size,) = IMAGE_PREFIX.unpack_from(image)
        if (IMAGE_PREFIX.size + index_size) % ALIGN == 32:
            return metadata
    raise AssertionError("no padding puts the index end mid-block")


METADATA = _good_metadata()
GOOD = encode_container(METADATA, SECTIONS)
GOOD_IMAGE = build_image(METADATA, SECTIONS)
GOOD_INDEX = msgpack.unpackb(GOOD_IMAGE[8:8 + IMAGE_PREFIX.unpack_from(GOOD_IMAGE)[0]], raw=False)
GOOD_BASE = GOOD_INDEX["sections"][0][3]
BIG = encode_container({"k": 1}, {"noise": np.random.default_rng(3).integers(0, 200, 150_000, dtype=np.uint8),
                                  "zeros": np.zeros(40_000, np.int64)})
msgpack_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats() | st.text(max_size=8)
    | st.binary(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12)
fuzz = settings(suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("fuzz")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(cache.ENV_VAR, str(directory / "cache"))
        for name, data in (("good.glrm", GOOD), ("big.glrm", BIG)):
            (directory / name).write_bytes(data)
            read_container(directory / name)  # warm cache for the undamaged files
        yield directory


def load(workdir, data: bytes) -> Container:
    path = workdir / "case.glrm"
    path.write_bytes(data)
    return read_container(path)


def rejected(workdir, data: bytes, fragment: str = "") -> ArtifactError:
    with pytest.raises(ArtifactError) as info:
        load(workdir, data)
    assert fragment in str(info.value)
    return info.value


def loads_or_rejects(workdir, data: bytes) -> Container | None:
    """The weaker property for crafted input that may happen to be valid."""
    try:
        container = load(workdir, data)
    except ArtifactError:
        return None
    for name, view in container.sections.items():
        assert view.nbytes <= container.expanded_size and view.dtype in DTYPES.values(), name
    return container


def with_header(body: bytes, image: bytes, header_crc: int | None = None, extra: bytes = b"", **fields) -> bytes:
    """A version-3 header around `body`; its own crc32 is recomputed unless `header_crc` is given."""
    values = dict(magic=MAGIC, version=FORMAT_VERSION, header_size=HEADER_SIZE + len(extra), crc=0, reserved=0,
                  body_size=len(body), image_size=len(image), sha=hashlib.sha256(body).digest(),
                  image_sha=hashlib.sha256(image).digest())
    values.update(fields)
    header = bytearray(HEADER.pack(*values.values()) + extra)
    struct.pack_into("<I", header, HEADER_CRC_AT, zlib.crc32(header) if header_crc is None else header_crc)
    return bytes(header) + body


def with_legacy_header(body: bytes, image: bytes, version: int = 2, **fields) -> bytes:
    """A version-1/2 header (no checksum of its own, crc32 of the image) around `body`."""
    values = dict(magic=MAGIC, version=version, crc=zlib.crc32(image), body_size=len(body),
                  image_size=len(image), sha=hashlib.sha256(body).digest())
    values.update(fields)
    return LEGACY_HEADER.pack(*values.values()) + body


def with_index(index: object = None, raw: bytes | None = None, payload: bytes = GOOD_IMAGE[GOOD_BASE:]) -> bytes:
    """An artifact whose image has the given index and the good file's section bytes at GOOD_BASE."""
    raw = msgpack.packb(index, use_bin_type=True) if raw is None else raw
    head = IMAGE_PREFIX.pack(len(raw)) + raw
    base = max(GOOD_BASE, -(-len(head) // ALIGN) * ALIGN)
    return wrap_image(head + bytes(base - len(head)) + payload)


def table_with(entry: int, field: int, value: object) -> dict:
    sections = [list(row) for row in GOOD_INDEX["sections"]]
    sections[entry][field] = value
    return {"metadata": GOOD_INDEX["metadata"], "sections": sections}


# ---------------------------------------------------------------- random damage


def test_good_files_load(workdir):
    assert load(workdir, GOOD).metadata == METADATA
    assert with_index(GOOD_INDEX) == GOOD  # the crafting helper reproduces the writer


def test_every_truncation_is_rejected(workdir):
    for length in range(len(GOOD)):
        error = rejected(workdir, GOOD[:length])
        assert "truncated" in error.what or "wrong magic" in error.what or length == 0


@fuzz
@given(st.data())
def test_sampled_truncations_of_a_larger_file(workdir, data):
    length = data.draw(st.integers(0, len(BIG) - 1))
    rejected(workdir, BIG[:length])


def test_every_single_bit_flip_in_the_header(workdir):
    for bit in range(HEADER_SIZE * 8):
        damaged = bytearray(GOOD)
        damaged[bit // 8] ^= 1 << (bit % 8)
        rejected(workdir, bytes(damaged))


@fuzz
@given(st.sampled_from([GOOD, BIG]).flatmap(
    lambda data: st.tuples(st.just(data), st.lists(st.integers(0, len(data) * 8 - 1), min_size=1, max_size=8,
                                                   unique=True))))
def test_random_bit_flips_are_rejected(workdir, case):
    data, bits = case
    damaged = bytearray(data)
    for bit in bits:
        damaged[bit // 8] ^= 1 << (bit % 8)
    rejected(workdir, bytes(damaged))


@given(st.binary(min_size=8, max_size=8).filter(lambda magic: magic != MAGIC))
def test_wrong_magic(workdir, magic):
    error = rejected(workdir, magic + GOOD[8:], "wrong magic")
    assert error.expected == MAGIC and error.found == magic


unknown_versions = st.integers(0, 2**32 - 1).filter(lambda version: version not in READABLE_VERSIONS)


def with_version(data: bytes, version: int) -> bytes:
    return data[:8] + struct.pack("<I", version) + data[12:]


@given(unknown_versions, st.integers(12, len(GOOD)))
def test_damaged_version_field_is_reported_as_corruption_not_as_a_newer_format(workdir, version, length):
    error = rejected(workdir, with_version(GOOD, version)[:length])
    assert not isinstance(error, ArtifactVersionError) and error.found == version
    assert "newer" not in str(error).replace("not newer", "") and "upgrade" not in str(error)
    assert "corrupted" in str(error) or "truncated" in str(error)


def test_version_field_and_a_body_byte_flipped_is_not_called_newer(workdir):
    damaged = bytearray(with_version(GOOD, FORMAT_VERSION + 4))
    damaged[HEADER_SIZE + 10] ^= 0x40
    error = rejected(workdir, bytes(damaged), "corrupted header")
    assert not isinstance(error, ArtifactVersionError) and "upgrade" not in str(error)
    assert "rebuild it" in str(error)


@given(st.integers(FORMAT_VERSION + 1, 2**32 - 1), st.binary(max_size=64))
def test_intact_header_of_a_newer_version_says_upgrade(workdir, version, extra):
    """A newer writer may grow the header; its own crc32 shows it is intact, so it is newer, not damaged."""
    newer = with_header(b"a body this runtime cannot read", GOOD_IMAGE, version=version, extra=extra)
    with pytest.raises(ArtifactVersionError, match="newer glrmask; upgrade glrmask-runtime") as info:
        load(workdir, newer)
    assert info.value.expected == FORMAT_VERSION and info.value.found == version


def test_newer_version_truncated_before_its_checksum_is_not_called_newer(workdir):
    newer = with_header(GOOD[HEADER_SIZE:], GOOD_IMAGE, version=FORMAT_VERSION + 1)
    error = rejected(workdir, newer[:18], "cannot be told from a damaged file")
    assert not isinstance(error, ArtifactVersionError)


def test_version_zero_is_corruption(workdir):
    error = rejected(workdir, with_version(GOOD, 0), "never written")
    assert not isinstance(error, ArtifactVersionError)


# ---------------------------------------------------------------- crafted images


@fuzz
@given(st.binary(max_size=200))
def test_garbage_index_bytes(workdir, raw):
    loads_or_rejects(workdir, with_index(raw=raw))


@fuzz
@given(msgpack_values)
def test_structured_garbage_index(workdir, index):
    loads_or_rejects(workdir, with_index(index))


@fuzz
@given(msgpack_values)
def test_garbage_metadata(workdir, metadata):
    container = loads_or_rejects(workdir, with_index({"metadata": metadata, "sections": GOOD_INDEX["sections"]}))
    if container is not None:  # compare encodings: NaN != NaN
        assert msgpack.packb(container.metadata) == msgpack.packb(metadata)


@fuzz
@given(st.integers(0, len(SECTIONS) - 1), st.integers(0, 5),
       msgpack_values | st.integers(-(2**63), 2**64 - 1) | st.sampled_from([*DTYPES, "float32", "<i4", "O", "i"]))
def test_section_table_field_replaced(workdir, entry, field, value):
    loads_or_rejects(workdir, with_index(table_with(entry, field, value)))


@fuzz
@given(st.text(max_size=10))
def test_dtype_strings(workdir, dtype):
    container = loads_or_rejects(workdir, with_index(table_with(1, 1, dtype)))
    if container is not None:
        assert DTYPES[dtype].itemsize == 4


# ---------------------------------------------------------------- named cases


def _other_frame() -> bytes:
    return zstandard.ZstdCompressor().compress(b"x")


def _frame(image: bytes, **options) -> bytes:
    return zstandard.ZstdCompressor(**{"write_checksum": True, **options}).compress(image)


NAMED_HEADER_CASES = {
    "empty_file": (b"", "truncated"),
    "partial_magic": (MAGIC[:3], "truncated"),
    "zip_file": (b"PK\x03\x04" + bytes(100), "wrong magic"),
    "header_only": (GOOD[:HEADER_SIZE], "truncated body"),
    "trailing_bytes": (GOOD + b"\0", "trailing bytes"),
    "body_sha_mismatch": (GOOD[:HEADER_SIZE] + bytes([GOOD[HEADER_SIZE] ^ 1]) + GOOD[HEADER_SIZE + 1:],
                          "body checksum"),
    "image_size_zero": (with_header(GOOD[HEADER_SIZE:], GOOD_IMAGE, image_size=0), "expanded size out of range"),
    "image_size_huge": (with_header(GOOD[HEADER_SIZE:], GOOD_IMAGE, image_size=2**50), "out of range"),
    "image_size_disagrees_with_frame": (
        with_header(GOOD[HEADER_SIZE:], GOOD_IMAGE, image_size=len(GOOD_IMAGE) + 64), "frame header disagrees"),
    "image_sha_wrong": (with_header(GOOD[HEADER_SIZE:], GOOD_IMAGE, image_sha=bytes(32)), "image checksum (sha256)"),
    "header_crc_wrong": (with_header(GOOD[HEADER_SIZE:], GOOD_IMAGE, header_crc=1), "header checksum"),
    "header_size_wrong": (with_header(GOOD[HEADER_SIZE:], GOOD_IMAGE, header_size=128), "header size"),
    "reserved_not_zero": (with_header(GOOD[HEADER_SIZE:], GOOD_IMAGE, reserved=1), "reserved field"),
    "header_truncated": (GOOD[:HEADER_SIZE - 1], "truncated header"),
    "legacy_header_truncated": (with_legacy_header(GOOD[HEADER_SIZE:], GOOD_IMAGE)[:63], "truncated header"),
    "legacy_header_only": (with_legacy_header(GOOD[HEADER_SIZE:], GOOD_IMAGE)[:64], "truncated body"),
    "legacy_image_crc_wrong": (with_legacy_header(GOOD[HEADER_SIZE:], GOOD_IMAGE, crc=zlib.crc32(GOOD_IMAGE) ^ 1),
                               "image checksum (crc32)"),
    "legacy_body_sha_mismatch": (with_legacy_header(GOOD[HEADER_SIZE:], GOOD_IMAGE, sha=bytes(32)),
                                 "body checksum"),
    "body_not_zstd": (with_header(b"not zstd at all", GOOD_IMAGE), "cannot be decompressed"),
    "frame_without_checksum": (with_header(_frame(GOOD_IMAGE, write_checksum=False), GOOD_IMAGE),
                               "frame header disagrees"),
    "second_frame_after_body": (with_header(GOOD[HEADER_SIZE:] + _other_frame(), GOOD_IMAGE),
                                "exactly one complete frame"),
    "truncated_frame": (with_header(GOOD[HEADER_SIZE:-4], GOOD_IMAGE), "exactly one complete frame"),
    "empty_body": (with_header(b"", GOOD_IMAGE), "cannot be decompressed"),
    "frame_without_content_size": (with_header(_frame(GOOD_IMAGE, write_content_size=False), GOOD_IMAGE),
                                   "frame header disagrees"),
    "frame_of_another_image": (with_header(_frame(bytes(len(GOOD_IMAGE))), GOOD_IMAGE), "image checksum"),
}


@pytest.mark.parametrize("name", sorted(NAMED_HEADER_CASES))
def test_named_header_cases(workdir, name):
    data, fragment = NAMED_HEADER_CASES[name]
    rejected(workdir, data, fragment)


def _deep(levels: int) -> list:
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


def _bool_two() -> bytes:
    payload = bytearray(GOOD_IMAGE[GOOD_BASE:])
    payload[1] = 2  # flags[1]
    index = table_with(0, 5, zlib.crc32(bytes(payload[:3])))
    return with_index(index, payload=bytes(payload))


def _nonzero_padding() -> bytes:
    payload = bytearray(GOOD_IMAGE[GOOD_BASE:])
    payload[10] = 1  # between `flags` (3 bytes) and the next 64-byte aligned section
    return with_index(GOOD_INDEX, payload=bytes(payload))


META, TABLE = GOOD_INDEX["metadata"], GOOD_INDEX["sections"]
NAMED_INDEX_CASES = {
    "index_length_past_image": (wrap_image(IMAGE_PREFIX.pack(2**40) + bytes(56)), "index length exceeds"),
    "invalid_msgpack_byte": (with_index(raw=b"\xc1"), "not valid msgpack"),
    "invalid_utf8": (with_index(raw=b"\xa2\xff\xfe"), "not valid msgpack"),
    "trailing_msgpack": (with_index(raw=msgpack.packb(GOOD_INDEX) + b"\x00"), "not valid msgpack"),
    "index_not_a_map": (with_index([META, TABLE]), "exactly the keys"),
    "index_extra_key": (with_index({"metadata": META, "sections": TABLE, "x": 1}), "exactly the keys"),
    "index_keys_reversed": (with_index(dict(sections=TABLE, metadata=META)), "exactly the keys"),
    "metadata_not_a_map": (with_index({"metadata": [1], "sections": TABLE}), "metadata must be a map"),
    "metadata_unsorted_keys": (with_index({"metadata": {"b": 1, "a": 2}, "sections": TABLE}),
                               "keys must be sorted"),
    "metadata_bytes_key": (with_index({"metadata": {b"k": 1}, "sections": TABLE}), "map key must be a string"),
    "metadata_ext_type": (with_index({"metadata": {"e": msgpack.ExtType(5, b"x")}, "sections": TABLE}),
                          "unsupported msgpack value"),
    "metadata_timestamp": (with_index({"metadata": {"t": msgpack.Timestamp(1)}, "sections": TABLE}),
                           "unsupported msgpack value"),
    "metadata_too_deep": (with_index({"metadata": {"d": _deep(40)}, "sections": TABLE}), "nested too deeply"),
    "non_canonical_int": (with_index(raw=msgpack.packb(GOOD_INDEX).replace(b"\xa4test", b"\xd9\x04test")),
                          "canonical form"),
    "table_not_a_list": (with_index({"metadata": META, "sections": {}}), "must be a list"),
    "entry_too_short": (with_index(table_with(0, 0, None) | {"sections": [TABLE[0][:5]] + TABLE[1:]}),
                        "6-item list"),
    "bad_name": (with_index(table_with(0, 0, "a b")), "bad name"),
    "unsorted_names": (with_index(table_with(1, 0, "zzz")), "unique and sorted"),
    "duplicate_names": (with_index(table_with(1, 0, TABLE[0][0])), "unique and sorted"),
    "dtype_float32": (with_index(table_with(1, 1, "float32")), "unknown dtype"),
    "dtype_numpy_str": (with_index(table_with(1, 1, "<i4")), "unknown dtype"),
    "dtype_object": (with_index(table_with(1, 1, "O")), "unknown dtype"),
    "dtype_not_str": (with_index(table_with(1, 1, 4)), "unknown dtype"),
    "dtype_wider_itemsize": (with_index(table_with(1, 1, "int64")), "length disagrees"),
    "shape_negative": (with_index(table_with(1, 2, [-4, -6])), "non-negative ints"),
    "shape_bool": (with_index(table_with(0, 2, [True])), "non-negative ints"),
    "shape_not_list": (with_index(table_with(0, 2, 3)), "non-negative ints"),
    "shape_too_many_dims": (with_index(table_with(0, 2, [1] * 9)), "at most 8"),
    "offset_out_of_bounds": (with_index(table_with(3, 3, 2**40)), "next aligned position"),
    "offset_negative": (with_index(table_with(0, 3, -64)), "next aligned position"),
    "length_mismatch": (with_index(table_with(1, 4, 95)), "length disagrees"),
    "section_past_image_end": (with_index(table_with(3, 2, [10**6]) | {"sections": TABLE[:3] + [
        TABLE[3][:2] + [[10**6], TABLE[3][3], 10**6, TABLE[3][5]]]}), "past the end"),
    "crc_negative": (with_index(table_with(2, 5, -1)), "must be a crc32"),
    "crc_mismatch": (with_index(table_with(2, 5, TABLE[2][5] ^ 1)), "checksum (crc32) mismatch"),
    "image_longer_than_table": (with_index(GOOD_INDEX, payload=GOOD_IMAGE[GOOD_BASE:] + bytes(ALIGN)),
                                "image size disagrees"),
    "bool_value_two": (_bool_two(), "bool values must be 0 or 1"),
    "nonzero_padding": (_nonzero_padding(), "padding"),
}


@pytest.mark.parametrize("name", sorted(NAMED_INDEX_CASES))
def test_named_index_cases(workdir, name):
    data, fragment = NAMED_INDEX_CASES[name]
    rejected(workdir, data, fragment)


def test_damaged_file_rejected_even_with_its_good_expansion_cached(workdir):
    good = load(workdir, GOOD)
    assert (workdir / "cache" / (good.file_sha256 + cache.SUFFIX)).exists()
    rejected(workdir, GOOD[:-1], "truncated body")
    rejected(workdir, GOOD[:-1] + bytes([GOOD[-1] ^ 0x80]), "body checksum")


# ---------------------------------------------------------------- a real artifact through load()


@pytest.fixture(scope="module", params=["basic", "contextual"])
def json_parts(request):
    """Metadata and sections of json.lark compiled for a tiny byte-level vocabulary (0.3 s), with
    either lexer (the contextual one adds format 4's lexer.restart and lr.lexer_start)."""
    from pathlib import Path

    from glrmask_cli.pipeline import artifact_metadata, artifact_sections, compile_grammar
    from glrmask_cli.vocab.vocabulary import Vocabulary

    extra = [b'{"', b'":', b"true", b"null", b", ", b"0.5", b'"}', b"[1", b"e+"]
    vocab = Vocabulary.from_tokens("tiny", [bytes([b]) for b in range(256)] + extra + [b""],
                                   eos_ids=[256 + len(extra)])
    grammar = Path(__file__).resolve().parents[2] / "grammars" / "json.lark"
    compiled = compile_grammar(grammar, tokenizer=vocab, lexer=request.param)
    return artifact_metadata(compiled), artifact_sections(compiled)


def load_artifact(workdir, metadata: dict, sections: dict):
    from glrmask_runtime.artifact import load

    path = workdir / "real.glrm"
    path.write_bytes(encode_container(metadata, sections))
    return load(path)


def test_real_artifact_loads(workdir, json_parts):
    metadata, sections = json_parts
    artifact = load_artifact(workdir, metadata, sections)
    assert artifact.metadata == metadata and artifact.vocab_size == 266


@fuzz
@given(st.data())
def test_real_artifact_with_one_value_changed(workdir, json_parts, data):
    """A valid container around inconsistent tables: the artifact loader must answer ArtifactError."""
    metadata, sections = json_parts
    name = data.draw(st.sampled_from(sorted(sections)))
    array = sections[name].copy()
    if array.size == 0:
        return
    info = np.iinfo(array.dtype)
    position = data.draw(st.integers(0, array.size - 1))
    near = [v for v in (-1, 0, 1, int(array.reshape(-1)[position]) + 1) if info.min <= v <= info.max]
    array.reshape(-1)[position] = data.draw(st.integers(max(info.min, -(2**40)), min(info.max, 2**40))
                                            | st.sampled_from(near))
    try:
        load_artifact(workdir, metadata, {**sections, name: array})
    except ArtifactError:
        pass


@fuzz
@given(st.data())
def test_real_artifact_with_a_section_reshaped_or_missing(workdir, json_parts, data):
    metadata, sections = json_parts
    name = data.draw(st.sampled_from(sorted(sections)))
    array = sections[name]
    changed = data.draw(st.sampled_from(["drop", "truncate", "flatten", "retype"]))
    new = dict(sections)
    if changed == "drop":
        del new[name]
    elif changed == "truncate":
        new[name] = array[:max(0, array.shape[0] - 1)]
    elif changed == "flatten":
        new[name] = array.reshape(-1)
    else:
        new[name] = array.astype(np.int64 if array.dtype != np.int64 else np.int32)
    try:
        load_artifact(workdir, metadata, new)
    except ArtifactError:
        return
    # Only a no-op, or dropping an ignored terminal (another grammar, still consistent), may load.
    no_op = (changed == "flatten" and array.ndim == 1) or (changed == "truncate" and array.shape[0] == 0)
    assert no_op or (changed == "truncate" and name == "lexer.ignored")


@pytest.mark.parametrize("path", [("kind",), ("tokenizer", "vocab_size"), ("tokenizer", "eos_ids"),
                                  ("parser", "n_terminals"), ("tokenizer",)], ids=".".join)
def test_real_artifact_missing_metadata(workdir, json_parts, path):
    metadata, sections = json_parts
    broken = {**metadata, **{key: dict(value) for key, value in metadata.items() if isinstance(value, dict)}}
    target = broken
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    with pytest.raises(ArtifactError):
        load_artifact(workdir, broken, sections)
