"""Grammars GLRMask cannot compile exactly, and what `glrmask build` says about each.

Each case: the grammar, the words its one-line error must contain (file, rule or terminal) and the
reason; `build_outcome` runs `glrmask build` in-process (click's CliRunner) and `Outcome.as_expected`
says whether it exited 1 with that one line, no traceback and no output file. Used by
tests/oracle/test_unsupported_grammars.py and by the `unsupported` rows of `make exactness`.
Cases: hcl2's heredoc backreference, python.lark file_input (%declare'd _INDENT), a terminal matching
the empty string, a cyclic grammar (infinitely many parses).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from devtools.data import CACHE_DIR, hcl2_grammar, lark_grammars_dir
from glrmask_cli.cli import cli

EMPTY_TERMINAL = 'start: item+\nitem: WORD "," | "[" NUMBER "]"\nWORD: /[a-z]+/\nNUMBER: /[0-9]*/\n'
CYCLIC = 'start: a "x" | "y" start\na: b | "n"\nb: a | "m" b\n'


@dataclass(frozen=True)
class Unsupported:
    name: str
    grammar: Callable[[], Path]
    start: str | None
    names: tuple[str, ...]      # words the message must contain: where and what
    reason: str                 # ... and why (lowercase substring)


def _written(name: str, text: str) -> Callable[[], Path]:
    def path() -> Path:
        target = CACHE_DIR / "unsupported-grammars" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        return target
    return path


UNSUPPORTED = [
    Unsupported("hcl2-heredoc", hcl2_grammar, None, ("hcl2.lark:", "HEREDOC_TEMPLATE"), "backreference"),
    Unsupported("python-file_input", lambda: lark_grammars_dir() / "python.lark", "file_input",
                ("python.lark:", "_INDENT"), "%declare"),
    Unsupported("empty-terminal", _written("empty_terminal.lark", EMPTY_TERMINAL), None,
                ("empty_terminal.lark:", "NUMBER"), "empty string"),
    Unsupported("cyclic", _written("cyclic.lark", CYCLIC), None, ("cyclic.lark:", "rule a", "a => b => a"), "cyclic"),
]


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    message: str            # stderr + stdout as the user sees them
    output_left: bool

    def as_expected(self, case: Unsupported) -> bool:
        lines = self.message.strip().splitlines()
        return (self.exit_code == 1 and len(lines) == 1 and lines[0].startswith("Error: ")
                and "Traceback" not in self.message and not self.output_left
                and all(word in lines[0] for word in case.names) and case.reason in lines[0].lower())


def build_outcome(case: Unsupported, folder: Path | None = None) -> Outcome:
    """Run `glrmask build` in-process (click's CliRunner) on the case; `folder` receives the output."""
    folder = folder or CACHE_DIR / "unsupported-grammars" / "out"
    folder.mkdir(parents=True, exist_ok=True)
    output = folder / f"{case.name}.glrm"
    output.unlink(missing_ok=True)
    args = ["build", str(case.grammar()), "--tokenizer", "gpt2", "-o", str(output), "--quiet"]
    if case.start:
        args += ["--start", case.start]
    result = CliRunner().invoke(cli, args)
    leftovers = output.exists() or any(p.name.startswith(output.name) for p in folder.iterdir())
    return Outcome(result.exit_code, result.stderr + result.stdout, leftovers)
