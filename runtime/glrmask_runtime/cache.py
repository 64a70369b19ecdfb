"""Content-addressed cache of expanded artifact images, shared by every process through mmap.

Input: the sha256 of an artifact file (the key) and the size and sha256 of its image (from the
artifact's verified header), or a freshly validated image. Output: a read-only mmap of
`<cache dir>/<key>.image`, or None (missing, damaged, disabled, not writable) so that the caller
expands in memory.

Policy:
- Location: `$GLRMASK_CACHE_DIR` (the empty string disables the cache), else
  `$XDG_CACHE_HOME/glrmask`, else `~/.cache/glrmask`; created with mode 0700.
- An image is used only if its sha256 equals the one the artifact names, so a cache file that was
  modified (by accident or on purpose, whatever its crc32) is removed and rebuilt, never used.
  Hashing a 200 MB image takes about 110 ms, so it is done once: `<key>.seal` then records the
  sha256 and the image file's identity (device, inode, size, mtime, ctime), and a load whose fstat
  of the image equals the seal maps it without hashing. Every way to change the file changes its
  ctime (a write, a rename over it, even a `utime` that puts the mtime back), so such a file is
  hashed again before it is used. The check covers the file as it is when it is loaded: a process
  that may write the cache directory while others map it can still change their pages, so keep the
  directory private.
- Files appear only via temp file + os.replace, so readers never see a partial image, and are never
  modified in place (truncating a mapped file would fault its readers).
- Size bound: `$GLRMASK_CACHE_MAX_BYTES` (bytes, default 4 GiB; 0 stores nothing). Storing an image
  evicts the least recently used `*.image` files (by the access time of their seal, which a cache
  hit sets, else of the image) until the directory's images fit; an image goes with its seal. An
  image larger than the bound is not stored: that load expands in memory.
  Evicting a file that another process has mapped is harmless (its mapping stays valid).
- Temp files that a writer left behind (it was killed mid-write) are removed by the next eviction
  once they are older than `STALE_TEMP_SECONDS`.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import re
import tempfile
import time
import warnings
from pathlib import Path

ENV_VAR = "GLRMASK_CACHE_DIR"  # a directory; the empty string disables the cache
MAX_BYTES_ENV_VAR = "GLRMASK_CACHE_MAX_BYTES"
DEFAULT_MAX_BYTES = 4 << 30
SUFFIX = ".image"
SEAL_SUFFIX = ".seal"   # next to an image whose sha256 was checked: that digest and the file's identity
_ENTRY = re.compile(r"[0-9a-f]{64}" + re.escape(SUFFIX))
_SEAL = re.compile(r"([0-9a-f]{64})" + re.escape(SEAL_SUFFIX))
_TEMP = re.compile(r"\.[0-9a-f]{16}\..+\.tmp")   # store_image's temp names
STALE_TEMP_SECONDS = 3600   # no writer takes this long: such a temp file's writer died


def cache_dir() -> Path | None:
    """`$GLRMASK_CACHE_DIR`, else `$XDG_CACHE_HOME/glrmask`, else `~/.cache/glrmask`; None if disabled."""
    configured = os.environ.get(ENV_VAR)
    if configured is not None:
        return Path(configured) if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "glrmask"


def max_bytes() -> int:
    """`$GLRMASK_CACHE_MAX_BYTES` as a byte count; the default (with a RuntimeWarning) if it is not one."""
    raw = os.environ.get(MAX_BYTES_ENV_VAR, "").strip()
    if not raw:
        return DEFAULT_MAX_BYTES
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        warnings.warn(f"{MAX_BYTES_ENV_VAR}={raw!r} is not a non-negative number of bytes; "
                      f"using {DEFAULT_MAX_BYTES}", RuntimeWarning, stacklevel=3)
        return DEFAULT_MAX_BYTES
    return value


def image_path(key: str) -> Path | None:
    """Where the image for `key` (a sha256 hex digest) lives, or None if the cache is disabled."""
    directory = cache_dir()
    return None if directory is None else directory / f"{key}{SUFFIX}"


def open_image(key: str, size: int, sha256: bytes) -> mmap.mmap | None:
    """The cached image for `key` if it exists and has the given size and sha256 digest, else None.

    A damaged or modified file is removed so that the next `store_image` replaces it. The digest is
    computed only when the image's seal does not match the file (module docstring). A hit refreshes
    the seal's access time (the eviction order), never the image.
    """
    path = image_path(key)
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            stat = os.fstat(handle.fileno())
            if stat.st_size != size or size == 0:
                mapped = None
            else:
                mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError:
        return None
    if mapped is not None:
        seal = _seal_text(sha256, stat)
        if _read_seal(path) == seal:
            touch(_seal_path(path))
            return mapped
        if hashlib.sha256(mapped).digest() == sha256:
            _write_seal(path, seal)
            return mapped
        mapped.close()
    _remove_quietly(_seal_path(path))
    _remove_quietly(path)
    return None


def store_image(key: str, image: bytes, sha256: bytes) -> mmap.mmap | None:
    """Write `image` (whose sha256 digest is `sha256`) under `key` atomically, seal it and return a
    read-only mmap of it; None if not writable or larger than `max_bytes()`. Evicts least recently
    used images to stay within that bound."""
    path = image_path(key)
    limit = max_bytes()
    if path is None or not image or len(image) > limit:
        return None
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{key[:16]}.", suffix=".tmp")
    except OSError:
        return None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(image)
            handle.flush()
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
            os.replace(temp, path)
            stat = os.fstat(handle.fileno())   # after the rename, which sets the ctime
    except OSError:
        _remove_quietly(Path(temp))
        return None
    _write_seal(path, _seal_text(sha256, stat))
    evict(path.parent, limit, keep=path.name)
    return mapped


def _seal_path(image: Path) -> Path:
    return image.with_suffix(SEAL_SUFFIX)


def _seal_text(sha256: bytes, stat: os.stat_result) -> str:
    return (f"{sha256.hex()} {stat.st_dev} {stat.st_ino} {stat.st_size} "
            f"{stat.st_mtime_ns} {stat.st_ctime_ns}\n")


def _read_seal(image: Path) -> str | None:
    try:
        return _seal_path(image).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return None


def _write_seal(image: Path, text: str) -> None:
    # Written like an image (temp file + rename); a seal that cannot be written costs a hash per load.
    try:
        fd, temp = tempfile.mkstemp(dir=image.parent, prefix=f".{image.name[:16]}.", suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(text)
        os.replace(temp, _seal_path(image))
    except OSError:
        _remove_quietly(Path(temp))


def evict(directory: Path, limit: int, keep: str = "", suffix: str = SUFFIX) -> None:
    """Remove the least recently used entries in `directory` until their sizes sum to at most `limit`.

    `keep` (a file name) is never removed. Only `<sha256><suffix>` files count (`.image` here; the
    compiler's build cache keeps `.glrm` files in its own directory the same way); stale temp files
    are removed too. Errors are ignored (another process may evict the same files at the same time).
    """
    entry_name = _ENTRY if suffix == SUFFIX else re.compile(r"[0-9a-f]{64}" + re.escape(suffix))
    entries: dict[str, tuple[int, int]] = {}   # name -> (last use, size)
    seals: dict[str, int] = {}                 # image name -> its seal's last use
    stale_before = time.time_ns() - STALE_TEMP_SECONDS * 10**9
    try:
        with os.scandir(directory) as listing:
            for entry in listing:
                image, seal, temp = (pattern.fullmatch(entry.name) for pattern in (entry_name, _SEAL, _TEMP))
                if not (image or seal or temp):
                    continue
                try:
                    stat = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if image:
                    entries[entry.name] = (stat.st_atime_ns, stat.st_size)
                elif seal and suffix == SUFFIX:
                    seals[seal.group(1) + SUFFIX] = stat.st_atime_ns
                elif temp and stat.st_mtime_ns < stale_before:
                    _remove_quietly(directory / entry.name)
    except OSError:
        return
    for name in seals.keys() - entries.keys():   # its image was removed
        _remove_quietly(_seal_path(directory / name))
    order = sorted((seals.get(name, used), name, size) for name, (used, size) in entries.items())
    total = sum(size for _, _, size in order)
    for _, name, size in order:
        if total <= limit:
            break
        if name != keep and _remove_quietly(directory / name):
            _remove_quietly(_seal_path(directory / name))
            total -= size


def touch(path: Path) -> None:
    """Mark an entry as used now (the eviction order), keeping its mtime."""
    try:
        _touch(path, os.stat(path).st_mtime_ns)
    except OSError:
        pass


def _touch(path: Path, mtime_ns: int) -> None:
    # Recency for eviction: atime only, so the mtime still tells when the file was written.
    try:
        os.utime(path, ns=(time.time_ns(), mtime_ns))
    except OSError:
        pass


def _remove_quietly(path: Path) -> bool:
    # Removal is an optimisation: if it fails (read-only directory), the caller expands in memory.
    try:
        path.unlink()
    except FileNotFoundError:
        return True   # someone else removed it
    except OSError:
        return False
    return True
