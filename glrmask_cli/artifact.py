"""Write an artifact file atomically: metadata + sections -> `glrmask_runtime.format` bytes -> disk.

Input: a metadata dict and named numpy arrays; output: the file at `path` and its size.
Policy: encode fully in memory first, write a temp file in the target directory, fsync it, then
os.replace it over `path`; on any failure the temp file is removed and `path` keeps its old
content (or stays absent). Write failures raise ArtifactError; encoding misuse TypeError/ValueError.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping

import numpy as np

from glrmask_runtime.errors import ArtifactError
from glrmask_runtime.format import encode_container


def write_artifact(path: str | os.PathLike, metadata: dict, sections: Mapping[str, np.ndarray]) -> int:
    """Encode and atomically write an artifact; returns its size in bytes.

    Raises:
        TypeError/ValueError: metadata or sections that the container cannot hold (nothing written).
        ArtifactError: the file cannot be written (directory missing, permissions, disk full).
    """
    data = encode_container(metadata, sections)
    target = os.path.abspath(os.fspath(path))
    directory = os.path.dirname(target)
    temp, fd = _create_temp(target, os.fspath(path))
    try:
        _write_all(fd, data)
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(temp, target)
    except BaseException as err:
        if fd >= 0:
            os.close(fd)
        _remove(temp)
        if isinstance(err, OSError):
            raise ArtifactError(os.fspath(path), f"cannot write artifact: {err.strerror or err}") from err
        raise
    _fsync_directory(directory)
    return len(data)


def _create_temp(target: str, shown: str) -> tuple[str, int]:
    """A new file next to `target` (same filesystem, so os.replace is atomic); mode follows the umask."""
    directory, name = os.path.split(target)
    for _ in range(100):
        temp = os.path.join(directory, f".{name}.{secrets.token_hex(6)}.tmp")
        try:
            return temp, os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        except FileExistsError:
            continue
        except OSError as err:
            raise ArtifactError(shown, f"cannot create a file in {directory}: {err.strerror or err}") from err
    raise ArtifactError(shown, f"cannot create a unique temporary file in {directory}")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:  # already gone, or the directory became read-only: nothing more we can do
        pass


def _fsync_directory(directory: str) -> None:
    # Makes the rename durable on POSIX; not every platform or filesystem can open a directory.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
