"""Compiler errors: all subclasses of `glrmask_runtime.GLRMaskError`.

The CLI prints `str(err)` (one line: `where: what; hint`) and exits 1.
"""

from __future__ import annotations

from glrmask_runtime.errors import GLRMaskError


class GrammarError(GLRMaskError):
    """A grammar cannot be compiled. `where` is `file:line:col` (as far as known)."""

    def __init__(self, where: str, what: str, *, rule: str | None = None, terminal: str | None = None,
                 hint: str | None = None):
        self.where = where
        self.what = what
        self.rule = rule
        self.terminal = terminal
        self.hint = hint
        subject = f"rule {rule}: " if rule else f"terminal {terminal}: " if terminal else ""
        text = f"{where}: {subject}{what}"
        if hint:
            text += f"; {hint}"
        super().__init__(text)

    def __reduce__(self):       # raised in a build's worker process, it reaches the build as itself
        return _grammar_error, (type(self), self.where, self.what, self.rule, self.terminal, self.hint)


def _grammar_error(cls: type[GrammarError], where: str, what: str, rule: str | None, terminal: str | None,
                   hint: str | None) -> GrammarError:
    return cls(where, what, rule=rule, terminal=terminal, hint=hint)


class GrammarSyntaxError(GrammarError):
    """The .lark file does not parse, or references something undefined."""


class UnsupportedFeature(GrammarError):
    """A grammar feature GLRMask cannot compile (yet): %declare, backreferences, ..."""


class NormalizationError(GrammarError):
    """The grammar cannot be normalized (e.g. it is cyclic: A =>+ A)."""


class TokenizerError(GLRMaskError):
    """Unknown tokenizer name, unreadable vocabulary file, or hash mismatch."""


class WorkerLost(GLRMaskError):
    """A build worker process ended without a result (killed, e.g. by the out-of-memory killer)."""

    def __init__(self, stage: str):
        self.stage = stage
        super().__init__(f"{stage}: a worker process ended without a result (killed, e.g. out of memory); "
                         "build with --jobs 1 to use one process")

    def __reduce__(self):       # pickled (from a worker, or by a caller's pool) it keeps its own text
        return type(self), (self.stage,)


class LimitExceeded(GLRMaskError):
    """A build limit was hit. Says which limit (a `glrmask_cli.limits.BuildLimits` field), its
    value, the stage and how to raise it: `--limit NAME=VALUE` (`limits=` in the Python API)."""

    def __init__(self, limit: str, value: int, stage: str, hint: str = ""):
        self.limit = limit
        self.value = value
        self.stage = stage
        self.hint = hint
        text = f"{stage}: limit {limit}={value} exceeded"
        if hint:
            text += f"; {hint}"
        text += f"; raise it with --limit {limit}={max(2 * value, 1)}"
        super().__init__(text)

    def __reduce__(self):
        return type(self), (self.limit, self.value, self.stage, self.hint)
