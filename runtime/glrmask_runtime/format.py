"""The artifact container: metadata + named numpy sections in one zstd-compressed, versioned file.

Input (write): a msgpack-able metadata dict and named arrays; output: deterministic bytes.
Input (read): a path; output: a `Container` of read-only numpy views into an mmapped expansion.
Policy: loading never executes code from the file, validates every field before it is used and
raises only the `ArtifactError` family. Byte layout and checks: artifacts/FORMAT.md.
Limits: byte identity holds for one zstd library version (the compressed bytes may change with it).
"""

from __future__ import annotations

import hashlib
import mmap
import os
import re
import struct
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, NamedTuple, TypeAlias

import msgpack
import numpy as np
import zstandard

from glrmask_runtime import cache
from glrmask_runtime.errors import ArtifactError, ArtifactVersionError

MAGIC = b"\x89GLRM\r\n\x1a"  # 8 bytes; the high byte and CR LF catch 7-bit and text-mode transfers
FORMAT_VERSION = 5           # written; 2 added the Parser DWA's group roots (artifact.py), 3 the header
                             # checksum and the image's sha256 (the warm path verifies the cache with it),
                             # 4 the sections of lark's contextual lexer, 5 the DWA states that emit
                             # (schema.py; an older runtime would ignore those sections and give wrong
                             # masks, so it must refuse the file)
READABLE_VERSIONS = (1, 2, 3, 4, 5)  # read
CHECKED_VERSIONS = 3         # versions from this one on start with PREFIX: their header checks itself

# Every version >= 3 starts with these fields, so that a runtime can tell a header of a newer version
# (intact: its own crc32 matches) from a corrupted one: magic, version, header size, header crc32
# (crc32 of the header_size bytes with this field zeroed).
PREFIX = struct.Struct("<8sIII")
# Version 3: PREFIX, reserved (0), body size, image size, sha256 of the body, sha256 of the image.
HEADER = struct.Struct("<8sIIIIQQ32s32s")
HEADER_SIZE = HEADER.size  # 104
HEADER_CRC_AT = 16         # offset of the header crc32 (zeroed while it is computed)
MAX_HEADER_SIZE = 4096     # what a newer version's header may claim, for the integrity check only
# Versions 1 and 2: magic, version, crc32 of the image, body size, image size, sha256 of the body.
LEGACY_HEADER = struct.Struct("<8sIIQQ32s")
LEGACY_HEADER_SIZE = LEGACY_HEADER.size  # 64
IMAGE_PREFIX = struct.Struct("<Q")  # the image starts with the byte length of its msgpack index
ALIGN = 64
# Compression (artifacts/FORMAT.md, "Compression"): level 9 with zstd's long-distance matching over
# a 128 MiB window (the largest window zstd decompresses without being told to); an image of at most
# SMALL_IMAGE (JSON, a JSON Schema: built per request) at ZSTD_LEVEL_SMALL in one thread without
# long-distance matching (a MaskBench schema x Llama-3: 16.5 -> 7.6 ms and 685 -> 727 KB against
# level 3 with both, which took 8 ms against level 9's 40 for 7% more); a body still over
# LARGE_BODY is compressed again at ZSTD_LEVEL_LARGE (about 35 ms per MB of image on 2 cores, for
# a quarter less: latex.lark x cl100k 6.4 -> 4.8 MB). zstd's multi-threaded mode gives the
# same bytes for any number of threads, so the file does not depend on the machine.
ZSTD_LEVEL = 9
ZSTD_LEVEL_SMALL = 1
SMALL_IMAGE = 16 << 20
ZSTD_LEVEL_LARGE = 19
LARGE_BODY = 4 << 20
ZSTD_WINDOW_LOG = 27
MAX_IMAGE_SIZE = 1 << 32  # 4 GiB: bounds the memory a crafted file can make the loader allocate
MAX_NDIM = 8
MAX_DEPTH = 32  # metadata nesting
SECTION_NAME = re.compile(r"[A-Za-z0-9_.:/-]{1,128}")
# Decoded metadata: plain msgpack values (checked by `_validate_plain`), so its leaves are not typed further.
Metadata: TypeAlias = dict[str, Any]
# What an image lives in: the bytes just expanded, a cache file's mmap, or an aligned in-memory copy.
ImageBuffer: TypeAlias = "bytes | mmap.mmap | memoryview"
DTYPES: dict[str, np.dtype[Any]] = {
    name: np.dtype(name).newbyteorder("<")
    for name in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")
}


@dataclass(frozen=True, eq=False)
class Container:
    """A loaded artifact. `sections` are read-only views; `compressed_size` is the file size."""

    path: str
    metadata: Metadata
    sections: Mapping[str, np.ndarray]
    file_sha256: str
    compressed_size: int
    expanded_size: int
    format_version: int


class SectionEntry(NamedTuple):
    """One checked section table entry (section 2 of artifacts/FORMAT.md)."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    offset: int
    length: int
    crc32: int


@dataclass(frozen=True)
class Header:
    """The checked header fields. `image_sha256` exists from version 3, `image_crc32` before it."""

    version: int
    size: int
    body_size: int
    image_size: int
    body_sha256: bytes
    image_sha256: bytes | None
    image_crc32: int | None


# ---------------------------------------------------------------- writing


def encode_container(metadata: Metadata, sections: Mapping[str, np.ndarray]) -> bytes:
    """Serialize metadata + sections into artifact bytes (same inputs -> same bytes).

    Raises TypeError/ValueError (expected vs got) for metadata that msgpack cannot carry
    deterministically, section names outside `SECTION_NAME`, or arrays of another dtype.
    """
    return wrap_image(build_image(metadata, sections))


def build_image(metadata: Metadata, sections: Mapping[str, np.ndarray]) -> bytes:
    """The expanded form: index length, msgpack index, then 64-byte aligned little-endian sections."""
    if not isinstance(sections, Mapping):
        raise TypeError(f"sections: expected a mapping name -> numpy array, got {type(sections).__name__}")
    meta = _canonical(metadata, "metadata", 0)
    if not isinstance(meta, dict):
        raise TypeError(f"metadata: expected a dict, got {type(metadata).__name__}")
    checked = [(name, _section_array(name, sections[name])) for name in sorted(_section_names(sections))]
    arrays = [(name, array, zlib.crc32(array.data)) for name, array in checked]
    # Offsets change the index length (msgpack ints grow), so move the first section one alignment
    # step at a time until the index fits in front of it: the first fit is always align(index end).
    base = _align(IMAGE_PREFIX.size + len(_pack_index({"metadata": meta, "sections": _table(arrays, 0)})))
    while True:
        table = _table(arrays, base)
        index = _pack_index({"metadata": meta, "sections": table})
        if IMAGE_PREFIX.size + len(index) <= base:
            break
        base += ALIGN
    end = _align(table[-1][3] + table[-1][4]) if table else base
    image = bytearray(end)
    image[:IMAGE_PREFIX.size] = IMAGE_PREFIX.pack(len(index))
    image[IMAGE_PREFIX.size:IMAGE_PREFIX.size + len(index)] = index
    view = np.frombuffer(image, dtype=np.uint8)  # copies straight in; tobytes() would copy twice
    for (_, array, _), row in zip(arrays, table, strict=True):
        view[row[3]:row[3] + row[4]] = array.reshape(-1).view(np.uint8)
    return bytes(image)


def _table(arrays: list[tuple[str, np.ndarray, int]], base: int) -> list[list[Any]]:
    """Section table rows [name, dtype, shape, offset, length, crc32] laid out from `base`."""
    table: list[list[Any]] = []
    offset = base
    for name, array, crc in arrays:
        offset = _align(offset)
        table.append([name, _dtype_name(array.dtype), list(array.shape), offset, array.nbytes, crc])
        offset += array.nbytes
    return table


def wrap_image(image: bytes) -> bytes:
    """Compress an image and prepend the header (public for tools and for tests that craft images)."""
    small = len(image) <= SMALL_IMAGE
    body = _compress(image, ZSTD_LEVEL_SMALL, large=False) if small else _compress(image, ZSTD_LEVEL)
    if len(body) > LARGE_BODY:
        body = _compress(image, ZSTD_LEVEL_LARGE)
    return pack_header(len(body), len(image), hashlib.sha256(body).digest(), hashlib.sha256(image).digest()) + body


def _compress(image: bytes, level: int, large: bool = True) -> bytes:
    """zstd at `level`; `large`: with long-distance matching, on one thread per core (the same bytes
    for any number of threads), else in one thread."""
    params = zstandard.ZstdCompressionParameters.from_level(
        level, window_log=ZSTD_WINDOW_LOG, enable_ldm=large, threads=(os.cpu_count() or 1) if large else 0,
        write_checksum=True, write_content_size=True)
    return zstandard.ZstdCompressor(compression_params=params).compress(image)


def pack_header(body_size: int, image_size: int, body_sha256: bytes, image_sha256: bytes,
                version: int = FORMAT_VERSION) -> bytes:
    """A version-3 layout header with its crc32 filled in (public for tests that craft files)."""
    header = bytearray(HEADER.pack(MAGIC, version, HEADER_SIZE, 0, 0, body_size, image_size, body_sha256,
                                   image_sha256))
    struct.pack_into("<I", header, HEADER_CRC_AT, zlib.crc32(header))
    return bytes(header)


def _section_names(sections: Mapping[str, object]) -> list[str]:
    for name in sections:
        if not isinstance(name, str) or not SECTION_NAME.fullmatch(name):
            raise ValueError(f"section name {name!r}: expected 1-128 characters of [A-Za-z0-9_.:/-]")
    return list(sections)


def _section_array(name: str, array: object) -> np.ndarray:
    if not isinstance(array, np.ndarray):
        raise TypeError(f"section {name!r}: expected a numpy array, got {type(array).__name__}")
    if array.ndim > MAX_NDIM:
        raise ValueError(f"section {name!r}: expected at most {MAX_NDIM} dimensions, got {array.ndim}")
    _dtype_name(array.dtype, name)
    return np.asarray(array, dtype=array.dtype.newbyteorder("<"), order="C")


def _dtype_name(dtype: np.dtype, section: str = "?") -> str:
    for name, known in DTYPES.items():
        if dtype == known or dtype == known.newbyteorder(">"):
            return name
    raise TypeError(f"section {section!r}: expected dtype in {sorted(DTYPES)}, got {dtype}")


def _canonical(value: object, where: str, depth: int) -> object:
    """A copy with sorted dict keys, lists for tuples, Python scalars for numpy ones."""
    if depth > MAX_DEPTH:
        raise ValueError(f"{where}: expected at most {MAX_DEPTH} levels of nesting")
    if isinstance(value, np.generic) and isinstance(value, (np.integer, np.floating, np.bool_)):
        value = value.item()
    if value is None or isinstance(value, (bool, str, bytes, float)):
        return value
    if isinstance(value, int):
        if not -(1 << 63) <= value < (1 << 64):
            raise ValueError(f"{where}: expected an integer that fits in 64 bits, got {value}")
        return int(value)
    if isinstance(value, (list, tuple)):
        return [_canonical(item, f"{where}[{i}]", depth + 1) for i, item in enumerate(value)]
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise TypeError(f"{where}: expected str keys, got {type(key).__name__} {key!r}")
        return {key: _canonical(value[key], f"{where}[{key!r}]", depth + 1) for key in sorted(value)}
    raise TypeError(f"{where}: expected None, bool, int, float, str, bytes, list or dict, "
                    f"got {type(value).__name__}")


def _pack_index(index: dict[str, object]) -> bytes:
    packed: bytes = msgpack.packb(index, use_bin_type=True)
    return packed


def _align(offset: int) -> int:
    return -(-offset // ALIGN) * ALIGN


# ---------------------------------------------------------------- reading


def read_container(path: str | os.PathLike[str]) -> Container:
    """Load and validate an artifact; sections are read-only views into a shared mmapped expansion.

    The expansion is cached under the sha256 of the file (see `cache`), so a second load of the
    same file only hashes it, checks the cached image against the sha256 the header names and maps
    it. Raises ArtifactError (ArtifactVersionError for another format version) naming what was
    wrong, expected vs found; nothing else.
    """
    where = os.fspath(path)
    key, header, file_size = _hash_file(where)
    # A cached image is written only for a file that passed every check below, so a hit on the
    # sha256 of the whole file proves this file is that one, and the image must have the sha256 the
    # header names: the warm path skips the body checks. Versions 1 and 2 name no image sha256 (their
    # crc32 is no defence against a modified cache file), so they always take the cold path.
    image: mmap.mmap | memoryview | None = None
    if header.image_sha256 is not None:
        image = cache.open_image(key, header.image_size, header.image_sha256)
    if image is None:
        data, header = _read_file(where)
        key, file_size = hashlib.sha256(data).hexdigest(), len(data)  # the bytes validated name the entry
        _check_body(where, data, header)
        expanded = _expand(where, data, header)
        del data
        metadata, sections = _parse_index(where, expanded, deep=True)
        mapped = None
        digest = header.image_sha256
        if digest is None:   # versions 1, 2: share a cache file that holds these very bytes
            digest = hashlib.sha256(expanded).digest()
            mapped = cache.open_image(key, len(expanded), digest)
        if mapped is None:
            mapped = cache.store_image(key, expanded, digest)
        image = _aligned_copy(expanded) if mapped is None else mapped
    else:
        metadata, sections = _parse_index(where, image, deep=False)
    return Container(path=where, metadata=metadata, sections=_views(image, sections),
                     file_sha256=key, compressed_size=file_size, expanded_size=header.image_size,
                     format_version=header.version)


def _hash_file(where: str) -> tuple[str, Header, int]:
    """sha256 of the file streamed in chunks (no whole-file buffer), header fields, file size."""
    try:
        with open(where, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            header = _parse_header(where, handle.read(MAX_HEADER_SIZE), size)
            handle.seek(0)
            return hashlib.file_digest(handle, "sha256").hexdigest(), header, size
    except OSError as err:
        raise ArtifactError(where, f"cannot read artifact: {err.strerror or err}") from err


def _read_file(where: str) -> tuple[bytes, Header]:
    """The whole file and its header fields (checked again: the file may have changed since hashing)."""
    try:
        with open(where, "rb") as handle:
            data = handle.read()
    except OSError as err:
        raise ArtifactError(where, f"cannot read artifact: {err.strerror or err}") from err
    return data, _parse_header(where, data, len(data))


def _parse_header(where: str, data: bytes, file_size: int) -> Header:
    """Check magic, version, the header's own crc32 and the sizes, in that order (the body is `_check_body`).

    `data` holds at least the first min(MAX_HEADER_SIZE, file_size) bytes of the file.
    """
    if data[:len(MAGIC)] != MAGIC:
        if len(data) < len(MAGIC) and MAGIC.startswith(data):
            raise ArtifactError(where, "truncated: file ends inside the magic", f">= {HEADER_SIZE} bytes",
                                f"{len(data)} bytes")
        raise ArtifactError(where, "wrong magic: not a GLRMask artifact", MAGIC, data[:len(MAGIC)])
    if len(data) < len(MAGIC) + 4:
        raise ArtifactError(where, "truncated header", f">= {HEADER_SIZE} bytes", f"{len(data)} bytes")
    (version,) = struct.unpack_from("<I", data, len(MAGIC))
    if version not in READABLE_VERSIONS:
        raise _version_error(where, data, version)
    if version < CHECKED_VERSIONS:
        return _parse_legacy_header(where, data, file_size)
    if len(data) < HEADER_SIZE:
        raise ArtifactError(where, "truncated header", f">= {HEADER_SIZE} bytes", f"{len(data)} bytes")
    _, version, header_size, header_crc, reserved, body_size, image_size, body_sha256, image_sha256 = \
        HEADER.unpack_from(data)
    if _header_crc(data, HEADER_SIZE) != header_crc:
        raise ArtifactError(where, "header checksum (crc32) mismatch: the header is corrupted",
                            header_crc, _header_crc(data, HEADER_SIZE))
    if header_size != HEADER_SIZE or reserved != 0:
        raise ArtifactError(where, f"header size or reserved field wrong for format {version}",
                            (HEADER_SIZE, 0), (header_size, reserved))
    _check_sizes(where, file_size, HEADER_SIZE, body_size, image_size)
    return Header(version, HEADER_SIZE, body_size, image_size, body_sha256, image_sha256, None)


def _parse_legacy_header(where: str, data: bytes, file_size: int) -> Header:
    """Versions 1 and 2: a 64-byte header without a checksum of its own."""
    if len(data) < LEGACY_HEADER_SIZE:
        raise ArtifactError(where, "truncated header", f">= {LEGACY_HEADER_SIZE} bytes", f"{len(data)} bytes")
    _, version, image_crc32, body_size, image_size, body_sha256 = LEGACY_HEADER.unpack_from(data)
    _check_sizes(where, file_size, LEGACY_HEADER_SIZE, body_size, image_size)
    return Header(version, LEGACY_HEADER_SIZE, body_size, image_size, body_sha256, None, image_crc32)


def _header_crc(data: bytes, size: int) -> int:
    """crc32 of the first `size` bytes with the header crc field read as zero."""
    crc = zlib.crc32(memoryview(data)[:HEADER_CRC_AT])
    crc = zlib.crc32(bytes(4), crc)
    return zlib.crc32(memoryview(data)[HEADER_CRC_AT + 4:size], crc)


def _version_error(where: str, data: bytes, version: int) -> ArtifactError:
    """An unknown version: ArtifactVersionError only if the header is intact, else a corruption error.

    From version 3 on every header starts with PREFIX, so its own crc32 tells a newer format (upgrade
    the runtime) from a damaged version field (rebuild, or fetch the file again). A claimed version
    below 3 has no header checksum; no glrmask ever wrote version 0.
    """
    expected = FORMAT_VERSION
    if version >= CHECKED_VERSIONS:
        if len(data) < PREFIX.size:
            return ArtifactError(where, f"truncated header: it claims unknown format version {version} but "
                                 "ends before its checksum, so it cannot be told from a damaged file",
                                 expected, version)
        _, _, header_size, header_crc = PREFIX.unpack_from(data)
        intact = (PREFIX.size <= header_size <= MAX_HEADER_SIZE and len(data) >= header_size
                  and _header_crc(data, header_size) == header_crc)
        if not intact:
            return ArtifactError(where, f"corrupted header: the format version field reads {version}, but the "
                                 "header checksum does not match, so the file is damaged (not newer): "
                                 "rebuild it with `glrmask build` or copy it again", expected, version)
        if version > FORMAT_VERSION:
            return ArtifactVersionError(where, "unsupported format version, written by a newer glrmask; "
                                        "upgrade glrmask-runtime", expected, version)
    elif version == 0:
        return ArtifactError(where, "corrupted header: format version 0 was never written by glrmask",
                             expected, version)
    return ArtifactVersionError(where, "unsupported format version, written by an older glrmask; "
                                "rebuild it with `glrmask build`", expected, version)


def _check_sizes(where: str, file_size: int, header_size: int, body_size: int, image_size: int) -> None:
    if file_size != header_size + body_size:
        what = "truncated body" if file_size < header_size + body_size else "trailing bytes after the body"
        raise ArtifactError(where, what, f"{header_size + body_size} bytes", f"{file_size} bytes")
    if not IMAGE_PREFIX.size <= image_size <= MAX_IMAGE_SIZE:
        raise ArtifactError(where, "expanded size out of range", f"{IMAGE_PREFIX.size}..{MAX_IMAGE_SIZE}",
                            image_size)


def _check_body(where: str, data: bytes, header: Header) -> None:
    found = hashlib.sha256(memoryview(data)[header.size:]).digest()
    if found != header.body_sha256:
        raise ArtifactError(where, "body checksum (sha256) mismatch: the file is corrupted",
                            header.body_sha256.hex(), found.hex())


def _expand(where: str, data: bytes, header: Header) -> bytes:
    """Decompress the body (one zstd frame, content size and checksum present) and check the image hash."""
    body = memoryview(data)[header.size:]
    try:
        params = zstandard.get_frame_parameters(body)
        if params.content_size != header.image_size or not params.has_checksum:
            raise ArtifactError(where, "zstd frame header disagrees with the artifact header",
                                f"content size {header.image_size} with checksum",
                                f"content size {params.content_size}, checksum {params.has_checksum}")
        decompressor = zstandard.ZstdDecompressor().decompressobj()
        image: bytes = decompressor.decompress(body)
    except zstandard.ZstdError as err:
        raise ArtifactError(where, f"zstd body cannot be decompressed: {err}") from err
    except MemoryError as err:
        raise ArtifactError(where, "expanded image does not fit in memory", "<= available memory",
                            f"{header.image_size} bytes") from err
    if not decompressor.eof or decompressor.unused_data or len(image) != header.image_size:
        raise ArtifactError(where, "zstd body is not exactly one complete frame of the expanded size",
                            header.image_size, len(image))
    if header.image_sha256 is not None:
        found = hashlib.sha256(image).digest()
        if found != header.image_sha256:
            raise ArtifactError(where, "expanded image checksum (sha256) mismatch", header.image_sha256.hex(),
                                found.hex())
    elif zlib.crc32(image) != header.image_crc32:
        raise ArtifactError(where, "expanded image checksum (crc32) mismatch", header.image_crc32,
                            zlib.crc32(image))
    return image


def _parse_index(where: str, image: ImageBuffer, deep: bool) -> tuple[Metadata, list[SectionEntry]]:
    """Decode and validate the msgpack index; `deep` also checks section checksums and padding."""
    (index_size,) = IMAGE_PREFIX.unpack_from(image)
    if index_size > len(image) - IMAGE_PREFIX.size:
        raise ArtifactError(where, "index length exceeds the expanded image",
                            f"<= {len(image) - IMAGE_PREFIX.size}", index_size)
    raw = bytes(image[IMAGE_PREFIX.size:IMAGE_PREFIX.size + index_size])
    try:
        index = msgpack.unpackb(raw, raw=False, strict_map_key=True, use_list=True)
    except Exception as err:  # untrusted bytes: msgpack raises many types (ValueError, StackError, ...)
        raise ArtifactError(where, f"index is not valid msgpack ({type(err).__name__})") from err
    if not isinstance(index, dict) or list(index) != ["metadata", "sections"]:
        found = sorted(map(repr, index)) if isinstance(index, dict) else type(index).__name__
        raise ArtifactError(where, "index must be a map with exactly the keys metadata and sections",
                            ["'metadata'", "'sections'"], found)
    if not isinstance(index["metadata"], dict):
        raise ArtifactError(where, "metadata must be a map", "dict", type(index["metadata"]).__name__)
    _validate_plain(where, index["metadata"])
    if _pack_index(index) != raw:
        raise ArtifactError(where, "index is not in canonical form (sorted keys, shortest encodings)")
    index_end = IMAGE_PREFIX.size + index_size
    sections = _validate_table(where, index["sections"], index_end, len(image))
    if deep:
        _validate_section_data(where, image, sections, index_end)
    return index["metadata"], sections


def _validate_plain(where: str, metadata: Metadata) -> None:
    """Metadata holds only plain msgpack values (no ext types), str map keys, bounded nesting."""
    stack: list[tuple[object, str, int]] = [(metadata, "metadata", 0)]
    while stack:
        value, at, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ArtifactError(where, f"{at}: metadata nested too deeply", f"<= {MAX_DEPTH} levels", depth)
        if isinstance(value, list):
            stack.extend((item, f"{at}[{i}]", depth + 1) for i, item in enumerate(value))
        elif isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    raise ArtifactError(where, f"{at}: map key must be a string", "str", type(key).__name__)
                stack.append((item, f"{at}[{key!r}]", depth + 1))
            if list(value) != sorted(value):
                raise ArtifactError(where, f"{at}: map keys must be sorted", sorted(value), list(value))
        elif not (value is None or isinstance(value, (bool, int, float, str, bytes))):
            raise ArtifactError(where, f"{at}: unsupported msgpack value", "a plain msgpack type",
                                type(value).__name__)


def _validate_table(where: str, table: object, index_end: int, image_size: int) -> list[SectionEntry]:
    """Check every section entry: name order, dtype, shape, canonical offset, length, bounds."""
    if not isinstance(table, list):
        raise ArtifactError(where, "section table must be a list", "list", type(table).__name__)
    sections: list[SectionEntry] = []
    previous: str | None = None
    end = index_end
    for number, entry in enumerate(table):
        if not isinstance(entry, list) or len(entry) != 6:
            raise ArtifactError(where, f"section table entry {number} must be a 6-item list "
                                "[name, dtype, shape, offset, length, crc32]", 6,
                                len(entry) if isinstance(entry, list) else type(entry).__name__)
        name, dtype, shape, offset, length, crc = entry
        if not isinstance(name, str) or not SECTION_NAME.fullmatch(name):
            raise ArtifactError(where, f"section table entry {number}: bad name",
                                "1-128 characters of [A-Za-z0-9_.:/-]", name)
        if previous is not None and name <= previous:
            raise ArtifactError(where, f"section {name!r}: names must be unique and sorted",
                                f"a name after {previous!r}", name)
        what = f"section {name!r}"
        if not isinstance(dtype, str) or dtype not in DTYPES:
            raise ArtifactError(where, f"{what}: unknown dtype", sorted(DTYPES), dtype)
        nbytes = _shape_bytes(where, what, shape, DTYPES[dtype].itemsize)
        if not _is_int(offset) or offset != _align(end):
            raise ArtifactError(where, f"{what}: offset is not the next aligned position", _align(end), offset)
        if not _is_int(length) or length != nbytes:
            raise ArtifactError(where, f"{what}: length disagrees with dtype and shape", nbytes, length)
        if offset + length > image_size:
            raise ArtifactError(where, f"{what}: extends past the end of the expanded image",
                                f"end <= {image_size}", offset + length)
        if not _is_int(crc) or not 0 <= crc < (1 << 32):
            raise ArtifactError(where, f"{what}: checksum must be a crc32", "0 <= crc32 < 2**32", crc)
        sections.append(SectionEntry(name, dtype, tuple(shape), offset, length, crc))
        previous, end = name, offset + length
    if image_size != _align(end):
        raise ArtifactError(where, "expanded image size disagrees with the section table", _align(end),
                            image_size)
    return sections


def _shape_bytes(where: str, what: str, shape: object, itemsize: int) -> int:
    if not isinstance(shape, list) or len(shape) > MAX_NDIM or not all(_is_int(n) and n >= 0 for n in shape):
        raise ArtifactError(where, f"{what}: shape must be a list of at most {MAX_NDIM} non-negative ints",
                            "list[int]", shape)
    nbytes = itemsize
    for n in shape:
        nbytes *= n
    return nbytes


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _validate_section_data(where: str, image: ImageBuffer, sections: list[SectionEntry], index_end: int) -> None:
    """Section crc32s, 0/1 bools, zero padding (the cold path; the warm path trusts the image crc)."""
    view, end = memoryview(image), index_end
    for name, dtype, _, offset, length, crc in sections:
        if any(view[end:offset]):
            raise ArtifactError(where, f"section {name!r}: padding before it is not zero")
        found = zlib.crc32(view[offset:offset + length])
        if found != crc:
            raise ArtifactError(where, f"section {name!r}: checksum (crc32) mismatch", crc, found)
        if dtype == "bool" and length and int(np.frombuffer(image, np.uint8, length, offset).max()) > 1:
            raise ArtifactError(where, f"section {name!r}: bool values must be 0 or 1")
        end = offset + length
    if any(view[end:]):
        raise ArtifactError(where, "padding after the last section is not zero")


def _views(image: ImageBuffer, sections: list[SectionEntry]) -> Mapping[str, np.ndarray]:
    """Read-only numpy views into the image (an mmap or a read-only buffer)."""
    views: dict[str, np.ndarray] = {}
    for name, dtype, shape, offset, length, _ in sections:
        if length == 0:
            array = np.zeros(shape, DTYPES[dtype])
            array.flags.writeable = False
        else:
            array = np.frombuffer(image, DTYPES[dtype], length // DTYPES[dtype].itemsize, offset).reshape(shape)
        views[name] = array
    return MappingProxyType(views)


def _aligned_copy(image: bytes) -> memoryview:
    """A read-only, 64-byte aligned in-memory copy (the fallback when the cache is not writable)."""
    buffer = np.empty(len(image) + ALIGN, np.uint8)
    start = -buffer.ctypes.data % ALIGN
    aligned = buffer[start:start + len(image)]
    aligned[:] = np.frombuffer(image, np.uint8)
    aligned.flags.writeable = False
    return aligned.data
