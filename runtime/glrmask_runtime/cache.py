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
  The check covers the file as it is when it is loaded: a process that may write the cache directory
  while others map it can still change their pages, so keep the directory private.
- Files appear only via temp file + os.replace, so readers never see a partial image, and are never
  modified in place (truncating a mapped file would fault its readers).
Limits: entries are never evicted; delete the directory to reclaim space.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import tempfile
from pathlib import Path

ENV_VAR = "GLRMASK_CACHE_DIR"  # a directory; the empty string disables the cache
SUFFIX = ".image"


def cache_dir() -> Path | None:
    """`$GLRMASK_CACHE_DIR`, else `$XDG_CACHE_HOME/glrmask`, else `~/.cache/glrmask`; None if disabled."""
    configured = os.environ.get(ENV_VAR)
    if configured is not None:
        return Path(configured) if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "glrmask"


def image_path(key: str) -> Path | None:
    """Where the image for `key` (a sha256 hex digest) lives, or None if the cache is disabled."""
    directory = cache_dir()
    return None if directory is None else directory / f"{key}{SUFFIX}"


def open_image(key: str, size: int, sha256: bytes) -> mmap.mmap | None:
    """The cached image for `key` if it exists and has the given size and sha256 digest, else None.

    A damaged or modified file is removed so that the next `store_image` replaces it.
    """
    path = image_path(key)
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size != size or size == 0:
                mapped = None
            else:
                mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError:
        return None
    if mapped is not None:
        if hashlib.sha256(mapped).digest() == sha256:
            return mapped
        mapped.close()
    _remove_quietly(path)
    return None


def store_image(key: str, image: bytes) -> mmap.mmap | None:
    """Write `image` under `key` atomically and return a read-only mmap of it; None if not writable."""
    path = image_path(key)
    if path is None or not image:
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
    except OSError:
        _remove_quietly(Path(temp))
        return None
    return mapped


def _remove_quietly(path: Path) -> None:
    # Removal is an optimisation: if it fails (read-only directory), the caller expands in memory.
    try:
        path.unlink()
    except OSError:
        pass
