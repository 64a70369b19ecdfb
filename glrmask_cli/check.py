"""`glrmask check`: whole documents against a grammar, with exactly the semantics the masks use.

Input: a .lark file (+ start rule) and documents (bytes). Output: one `CheckResult` per document:
ok, or the byte offset, line/column and a one-line reason (what came, what was expected, excerpt).
Compile steps: `pipeline.compile_front_end` (grammar -> lexer -> parser: CFG, normalize, LR(1) tables);
no vocabulary is needed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Protocol, Sequence

from glrmask_cli.grammar import GrammarSpec
from glrmask_cli.lexer_option import DEFAULT_LEXER, LexerKind
from glrmask_cli.limits import DEFAULTS, BuildLimits
from glrmask_cli.pipeline import compile_front_end
from glrmask_runtime.contextual import ContextualRecognizer
from glrmask_runtime.errors import GLRMaskError, InputRejected
from glrmask_runtime.recognizer import Recognizer

MAX_EXPECTED_SHOWN = 8


@dataclass(frozen=True)
class CheckResult:
    path: str
    ok: bool
    position: int | None = None      # byte offset of the rejection
    reason: str = ""

    def line(self) -> str:
        """`FILE: ok` or `FILE: rejected at byte N: REASON`."""
        if self.ok:
            return f"{self.path}: ok"
        return f"{self.path}: rejected at byte {self.position}: {self.reason}"


class DocumentRecognizer(Protocol):
    """What checking needs of a recognizer (`Recognizer`, `ContextualRecognizer`)."""

    def initial(self) -> Any: ...
    def feed(self, state: Any, data: bytes) -> Any: ...
    def can_finish(self, state: Any) -> bool: ...
    def open_lexeme_complete(self, state: Any) -> bool: ...
    def expected(self, state: Any) -> tuple[str, ...]: ...


class Checker:
    """A compiled grammar that checks documents (with the basic lexer the masks use, or lark's
    contextual one)."""

    def __init__(self, grammar: GrammarSpec, recognizer: DocumentRecognizer) -> None:
        self.grammar = grammar
        self.recognizer = recognizer

    def check_bytes(self, data: bytes, path: str = "<input>") -> CheckResult:
        r = self.recognizer
        try:
            state = r.feed(r.initial(), data)
        except InputRejected as e:
            return CheckResult(path, False, e.position, _reason(data, e.position, e.reason, e.expected))
        if r.can_finish(state):
            return CheckResult(path, True)
        if not r.open_lexeme_complete(state):
            what = "the document ends inside an incomplete lexeme"
            return CheckResult(path, False, len(data), _reason(data, len(data), what, ()))
        what = "the document ends too early"
        return CheckResult(path, False, len(data), _reason(data, len(data), what, r.expected(state)))

    def check_file(self, path: str | os.PathLike[str]) -> CheckResult:
        """Check one file's bytes; GLRMaskError if it cannot be read."""
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as err:
            raise GLRMaskError(f"{path}: cannot read: {err.strerror or err}") from err
        return self.check_bytes(data, str(path))


def load_checker(grammar_path: str | os.PathLike, start: str | None = None,
                 limits: BuildLimits = DEFAULTS, lexer: LexerKind = DEFAULT_LEXER) -> Checker:
    """Compile `grammar_path` up to the LR tables (GrammarError/LimitExceeded on a bad grammar);
    `lexer="contextual"` also builds lark's contextual lexer (docs/semantics.md)."""
    if lexer not in ("basic", "contextual"):
        raise ValueError(f"lexer must be 'basic' or 'contextual', not {lexer!r}")
    front = compile_front_end(grammar_path, start=start, limits=limits, contextual=lexer == "contextual")
    spec = front.grammar
    names = [t.display for t in spec.terminals]
    if front.contextual is not None:
        ctx = front.contextual
        return Checker(spec, ContextualRecognizer(ctx.tables, ctx.start_of, ctx.restart, ctx.is_start,
                                                  front.lr.tables, names))
    return Checker(spec, Recognizer(front.tables, front.lr.tables, names))


def _reason(data: bytes, position: int, what: str, expected: Sequence[str]) -> str:
    line = data.count(b"\n", 0, position) + 1
    column = position - (data.rfind(b"\n", 0, position) + 1) + 1
    text = f"{what} (line {line}, column {column})"
    if expected:
        shown = list(expected[:MAX_EXPECTED_SHOWN])
        more = f", ... ({len(expected) - len(shown)} more)" if len(expected) > len(shown) else ""
        text += "; expected " + (shown[0] if len(shown) == 1 else "one of " + ", ".join(shown)) + more
    return text
