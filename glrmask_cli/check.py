"""`glrmask check`: whole documents against a grammar, with exactly the semantics the masks use.

Input: a .lark file (+ start rule) and documents (bytes). Output: one `CheckResult` per document:
ok, or the byte offset, line/column and a one-line reason (what came, what was expected, excerpt).
Compile steps: `pipeline.compile_front_end` (grammar -> lexer -> parser: CFG, normalize, LR(1) tables);
no vocabulary is needed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Sequence

from glrmask_cli.grammar import GrammarSpec
from glrmask_cli.limits import DEFAULTS, BuildLimits
from glrmask_cli.pipeline import compile_front_end
from glrmask_runtime.errors import GLRMaskError, InputRejected
from glrmask_runtime.recognizer import Recognizer
from glrmask_runtime.tables import START

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


class Checker:
    """A compiled grammar that checks documents."""

    def __init__(self, grammar: GrammarSpec, recognizer: Recognizer) -> None:
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
        if state.lexer_state != START and r.scanner.close(state.lexer_state) == 0:
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
                 limits: BuildLimits = DEFAULTS) -> Checker:
    """Compile `grammar_path` up to the LR tables (GrammarError/LimitExceeded on a bad grammar)."""
    front = compile_front_end(grammar_path, start=start, limits=limits)
    spec = front.grammar
    return Checker(spec, Recognizer(front.lexer.tables, front.lr.tables, [t.display for t in spec.terminals]))


def _reason(data: bytes, position: int, what: str, expected: Sequence[str]) -> str:
    line = data.count(b"\n", 0, position) + 1
    column = position - (data.rfind(b"\n", 0, position) + 1) + 1
    text = f"{what} (line {line}, column {column})"
    if expected:
        shown = list(expected[:MAX_EXPECTED_SHOWN])
        more = f", ... ({len(expected) - len(shown)} more)" if len(expected) > len(shown) else ""
        text += "; expected " + (shown[0] if len(shown) == 1 else "one of " + ", ".join(shown)) + more
    return text
