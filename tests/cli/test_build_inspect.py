"""`glrmask build` and `glrmask inspect` as a user runs them: exit codes, one-line errors, no partial
output, --quiet, the summary, inspect's text/JSON/prefix/dot output."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from devtools.builds import JSON_GRAMMAR, built
from glrmask_cli.cli import cli


@pytest.fixture()
def runner():
    return CliRunner()


def test_build_writes_artifact_and_summary(runner, tmp_path):
    out = tmp_path / "j.glrm"
    result = runner.invoke(cli, ["build", str(JSON_GRAMMAR), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == built(JSON_GRAMMAR, "gpt2").path.read_bytes()
    assert "DWA states" in result.output and str(out) in result.output


def test_build_default_output_name_and_quiet(runner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(cli, ["build", str(JSON_GRAMMAR), "--quiet"])
    assert result.exit_code == 0 and result.output == ""
    assert (tmp_path / "json.glrm").read_bytes() == built(JSON_GRAMMAR, "gpt2").path.read_bytes()


@pytest.mark.parametrize("grammar_text, fragment", [
    ("start: \"a\" undefined_rule\n", "undefined_rule"),
    ("start: A\nA: /(a)\\1/\n", "A"),
    ("start: A\nA: /a*/\n", "A"),
])
def test_bad_grammar_is_one_line_exit_1_and_no_output(runner, tmp_path, grammar_text, fragment):
    grammar = tmp_path / "bad.lark"
    grammar.write_text(grammar_text)
    out = tmp_path / "bad.glrm"
    result = runner.invoke(cli, ["build", str(grammar), "-o", str(out)])
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and fragment in lines[0]
    assert not out.exists() and list(tmp_path.iterdir()) == [grammar]


def test_unknown_tokenizer_lists_what_is_accepted(runner, tmp_path):
    result = runner.invoke(cli, ["build", str(JSON_GRAMMAR), "--tokenizer", "no-such-tok", "-o", str(tmp_path / "x")])
    assert result.exit_code == 1
    assert "gpt2" in result.output and len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()


def test_usage_errors_exit_2(runner):
    assert runner.invoke(cli, ["build"]).exit_code == 2
    assert runner.invoke(cli, ["build", "/no/such/file.lark"]).exit_code == 2
    assert runner.invoke(cli, ["inspect", "x", "--dot", "nope"]).exit_code == 2


def test_inspect_text_and_json(runner):
    path = built(JSON_GRAMMAR, "gpt2").path
    text = runner.invoke(cli, ["inspect", str(path)])
    assert text.exit_code == 0, text.output
    for word in ("grammar", "tokenizer", "LR states", "parser DWA", "row pool", "max read depth"):
        assert word in text.output
    data = json.loads(runner.invoke(cli, ["inspect", str(path), "--json"]).output)
    assert data["tokenizer"]["vocab_size"] == 50257 and data["dwa"]["states"] > 0
    assert data["grammar"]["sha256"] == built(JSON_GRAMMAR, "gpt2").compiled.grammar.sha256


def test_inspect_prefix_reports_the_mask(runner):
    b = built(JSON_GRAMMAR, "gpt2")
    data = json.loads(runner.invoke(cli, ["inspect", str(b.path), "--json", "--prefix", '{"a": 1']).output)
    matcher = b.artifact.matcher()
    for t in b.vocab.encode('{"a": 1'):
        matcher.commit(t)
    assert data["allowed_tokens"] == int(matcher.mask().sum())
    assert data["eos_allowed"] is False
    done = json.loads(runner.invoke(cli, ["inspect", str(b.path), "--json", "--prefix", "[1]"]).output)
    assert done["eos_allowed"] is True


def test_inspect_dot(runner):
    path = built(JSON_GRAMMAR, "gpt2").path
    for kind, head in (("dwa", "digraph parser_dwa"), ("lexer", "digraph lexer")):
        result = runner.invoke(cli, ["inspect", str(path), "--dot", kind])
        assert result.exit_code == 0 and result.output.startswith(head) and result.output.rstrip().endswith("}")


def test_inspect_corrupt_artifact_is_exit_1(runner, tmp_path):
    bad = tmp_path / "bad.glrm"
    bad.write_bytes(b"not an artifact at all")
    result = runner.invoke(cli, ["inspect", str(bad)])
    assert result.exit_code == 1 and result.output.startswith("Error: ")


@pytest.mark.slow
def test_grammar_whose_automaton_is_too_large_is_a_one_line_limit_error(runner, tmp_path):
    """python.lark eval_input as one automaton (`--layout one`) is too large: a clear error, no
    partial file."""
    from devtools.builds import LARK_GRAMMARS

    out = tmp_path / "python.glrm"
    result = runner.invoke(cli, ["build", str(LARK_GRAMMARS / "python.lark"), "--start", "eval_input",
                                 "--layout", "one", "-o", str(out), "--quiet"])
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "max_" in lines[0] and "Traceback" not in result.output
    assert not out.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_deep_grammar_builds_in_the_grouped_layout(runner, tmp_path):
    """The default layout falls back to "grouped" for python.lark eval_input and inspect says so."""
    from devtools.builds import LARK_GRAMMARS

    out = tmp_path / "python.glrm"
    result = runner.invoke(cli, ["build", str(LARK_GRAMMARS / "python.lark"), "--start", "eval_input",
                                 "-o", str(out), "--quiet"])
    assert result.exit_code == 0 and result.output == "", result.output
    shown = runner.invoke(cli, ["inspect", str(out), "--json"])
    report = json.loads(shown.output)
    assert report["dwa"]["layout"] == "grouped" and report["dwa"]["groups"] > 1 and report["dwa"]["runtime_closes"] > 0
