"""Exception hierarchy shared by the runtime and the compiler.

`except GLRMaskError` catches every failure a user can cause. Errors carry their
context as attributes; `str(err)` starts with a line that stands alone.
"""

from __future__ import annotations


class GLRMaskError(Exception):
    """Root of every user-facing GLRMask error."""


class ArtifactError(GLRMaskError, ValueError):
    """An artifact file is missing, truncated, corrupt or of another format."""

    def __init__(self, path: str, what: str, expected: object = None, found: object = None):
        self.path = path
        self.what = what
        self.expected = expected
        self.found = found
        detail = what
        if expected is not None or found is not None:
            detail += f" (expected {expected!r}, found {found!r})"
        super().__init__(f"{path}: {detail}")


class ArtifactVersionError(ArtifactError):
    """The artifact was written with another format version."""


class TokenizerMismatch(ArtifactError):
    """The artifact was built for another tokenizer than the caller's."""


class TokenRejected(GLRMaskError, ValueError):
    """`commit` was given a token that is not allowed; the matcher state is unchanged."""

    def __init__(self, token_id: int, token_bytes: bytes | None, step: int, reason: str = "not allowed here"):
        self.token_id = token_id
        self.token_bytes = token_bytes
        self.step = step
        self.reason = reason
        shown = repr(token_bytes) if token_bytes is not None else "?"
        super().__init__(f"token {token_id} {shown} rejected at step {step}: {reason}")


class InputRejected(GLRMaskError, ValueError):
    """Raw input (bytes fed to the scanner or parser) cannot continue any sentence.

    `position` is the byte offset (in the input given to the call) where it failed,
    `expected` a short human-readable description of what could have come there.
    """

    def __init__(self, position: int, reason: str, expected: tuple[str, ...] = ()):
        self.position = position
        self.reason = reason
        self.expected = expected
        super().__init__(f"rejected at byte {position}: {reason}")
