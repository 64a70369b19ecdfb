"""Write a file the user named, safely: the one place the compiler decides how an output is written.

Input: a path, or "-" for standard output (the bytes alone, flushed), and the bytes to write.
Policy, by what the path names once symbolic links are resolved:
- nothing yet, or a regular file: write a temp file beside it, fsync, then rename it over the path,
  so readers see the old content or the new one, never a partial file, and a failure leaves the
  old content (or nothing) behind;
- a character device or a FIFO (`/dev/null`, `/dev/stdout`, a pipe): write through it; it is never
  renamed over or replaced;
- anything else (a directory, a block device, a socket): refused.
A symbolic link is followed: its target is written, the link stays. Failures raise ArtifactError.
"""

from __future__ import annotations

import os
import secrets
import stat
import sys

from glrmask_runtime.errors import ArtifactError


def write_output(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `data` to `path` by the policy above; ArtifactError (with the path as given) on failure."""
    shown = os.fspath(path)
    if shown == STDOUT:
        _write_stdout(data)
        return
    target = os.path.realpath(shown)
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as err:
        raise ArtifactError(shown, f"cannot write: {err.strerror or err}") from err
    if mode is None or stat.S_ISREG(mode):
        _replace_atomically(target, shown, data)
    elif stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        _write_through(target, shown, data)
    else:
        raise ArtifactError(shown, f"refusing to write: it is {_kind(mode)}, not a regular file")


STDOUT = "-"


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """True iff both paths exist and name the same file (links and hard links included)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _write_stdout(data: bytes) -> None:
    try:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    except OSError as err:
        raise ArtifactError("<stdout>", f"cannot write: {err.strerror or err}") from err


def _write_through(target: str, shown: str, data: bytes) -> None:
    try:
        fd = os.open(target, os.O_WRONLY | getattr(os, "O_BINARY", 0))
    except OSError as err:
        raise ArtifactError(shown, f"cannot write: {err.strerror or err}") from err
    try:
        _write_all(fd, data)
    except OSError as err:
        raise ArtifactError(shown, f"cannot write: {err.strerror or err}") from err
    finally:
        os.close(fd)


def _replace_atomically(target: str, shown: str, data: bytes) -> None:
    directory = os.path.dirname(target)
    temp, fd = _create_temp(target, shown)
    try:
        _write_all(fd, data)
        os.fsync(fd)
        os.close(fd)
        fd = -1
        _check_still_replaceable(target, shown)
        os.replace(temp, target)
    except BaseException as err:
        if fd >= 0:
            os.close(fd)
        _remove(temp)
        if isinstance(err, OSError):
            raise ArtifactError(shown, f"cannot write: {err.strerror or err}") from err
        raise
    _fsync_directory(directory)


def _check_still_replaceable(target: str, shown: str) -> None:
    """The target may have changed since it was first looked at: rename only over a regular file."""
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise ArtifactError(shown, f"refusing to replace it: it became {_kind(mode)} during the write")


def _create_temp(target: str, shown: str) -> tuple[str, int]:
    """A new file next to `target` (same filesystem, so os.replace is atomic); mode follows the umask."""
    directory, name = os.path.split(target)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        temp = os.path.join(directory, f".{name}.{secrets.token_hex(6)}.tmp")
        try:
            return temp, os.open(temp, flags, 0o666)
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
