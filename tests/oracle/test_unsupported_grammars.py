"""Grammars GLRMask cannot compile exactly are refused by `glrmask build` with one clear line.

Each case (devtools/unsupported.py): exit code 1 (a user error), a one-line message naming the file, the
rule or terminal and the reason, no traceback, no output file. The same cases are the `unsupported` rows
of `make exactness`.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from devtools.unsupported import CYCLIC, EMPTY_TERMINAL, UNSUPPORTED, build_outcome
from glrmask_cli.cli import cli


@pytest.mark.parametrize("case", UNSUPPORTED, ids=[c.name for c in UNSUPPORTED])
def test_unsupported_grammar_is_refused_with_one_clear_line(case, tmp_path):
    outcome = build_outcome(case, tmp_path)
    assert outcome.exit_code == 1, outcome.message
    assert "Traceback" not in outcome.message
    lines = outcome.message.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), lines
    for word in case.names:
        assert word in lines[0], (word, lines[0])
    assert case.reason in lines[0].lower(), lines[0]
    assert list(tmp_path.iterdir()) == [], "a refused build must not leave an output file"
    assert outcome.as_expected(case)


def test_the_same_grammars_without_the_feature_build(tmp_path):
    """Control: each refusal is about the named feature, not the grammar around it."""
    fixed = {"empty-terminal": EMPTY_TERMINAL.replace("/[0-9]*/", "/[0-9]+/"),
             "cyclic": CYCLIC.replace("a: b | ", "a: ")}
    for name, text in sorted(fixed.items()):
        path = tmp_path / f"{name}.lark"
        path.write_text(text)
        result = CliRunner().invoke(cli, ["build", str(path), "-o", str(tmp_path / f"{name}.glrm"), "--quiet"])
        assert result.exit_code == 0, (name, result.stderr + result.stdout)
