"""CLI conventions every command shares: exit codes (0 ok, 1 user error, 2 usage, 3 internal, 130
interrupted), grammars with a UTF-8 BOM, vocabularies without an EOS token, `inspect --prefix`
printing only its answer and never claiming an EOS that does not exist."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from devtools.builds import JSON_GRAMMAR, LARK_GRAMMARS, built
from glrmask_cli.cli import cli
from glrmask_runtime.format import encode_container, read_container


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_help_states_the_exit_codes():
    text = _run("--help").output
    for code in ("0 ", "1 ", "2 ", "3 ", "130"):
        assert f"  {code}" in text


def test_grammar_error_is_exit_1_in_build_and_check(tmp_path):
    bad = tmp_path / "bad.lark"
    bad.write_text("start: undefined_rule\n")
    doc = tmp_path / "d.txt"
    doc.write_text("x")
    for args in (["build", str(bad), "-o", str(tmp_path / "o.glrm")], ["check", str(bad), str(doc)]):
        result = _run(*args)
        assert result.exit_code == 1, (args, result.output)
        assert result.output.startswith("Error: ") and "undefined_rule" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.lark", "d.txt"]


def test_ctrl_c_during_a_build_exits_130_and_leaves_no_file(tmp_path):
    """python.lark's eval_input takes seconds to build: interrupt it after the first stages. A real
    build (not from a build cache another test may have filled), with SIGINT handled as in a
    terminal even where the tests run in the background (a shell starts background jobs with SIGINT
    ignored, and Python then never raises KeyboardInterrupt)."""
    out = tmp_path / "out"
    out.mkdir()
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "glrmask_cli", "build", str(LARK_GRAMMARS / "python.lark"),
                             "--start", "eval_input", "--no-cache", "-o", str(out / "p.glrm")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(4)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr.decode()
    assert stderr.decode().strip().splitlines()[-1] == "Interrupted" and b"Traceback" not in stderr
    assert list(out.iterdir()) == []


def test_grammar_with_a_utf8_bom_builds_and_checks(tmp_path):
    grammar = tmp_path / "bom.lark"
    grammar.write_bytes(b"\xef\xbb\xbf" + JSON_GRAMMAR.read_bytes())
    doc = tmp_path / "d.json"
    doc.write_text('{"a": [1, 2]}')
    assert _run("check", str(grammar), str(doc)).exit_code == 0
    result = _run("build", str(grammar), "-o", str(tmp_path / "bom.glrm"), "--quiet")
    assert result.exit_code == 0, result.output


def _tiktoken_without_specials(path):
    path.write_text("".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n" for b in range(256)))
    return path


def test_vocabulary_without_eos_is_an_error_naming_eos_token(tmp_path):
    vocab = _tiktoken_without_specials(tmp_path / "bytes.tiktoken")
    out = tmp_path / "j.glrm"
    result = _run("build", str(JSON_GRAMMAR), "--tokenizer", str(vocab), "-o", str(out))
    assert result.exit_code == 1 and "--eos-token" in result.output and "no EOS" in result.output
    assert not out.exists()


def test_inspect_prefix_prints_only_the_answer():
    path = str(built(JSON_GRAMMAR, "gpt2").path)
    text = _run("inspect", path, "--prefix", "[1").output
    assert text.startswith("after '[1'") and "EOS not allowed" in text and "LR states" not in text
    answer = json.loads(_run("inspect", path, "--prefix", "[1]", "--json").output)
    assert answer["eos_allowed"] is True and answer["complete"] is True and "grammar" not in answer


@pytest.mark.parametrize("extra", [["--json"], ["--prefix", "[1"]])
def test_inspect_dot_with_json_or_prefix_is_a_usage_error(extra):
    result = _run("inspect", str(built(JSON_GRAMMAR, "gpt2").path), "--dot", "dwa", *extra)
    assert result.exit_code == 2 and "--dot" in result.output


def test_inspect_never_claims_eos_where_the_artifact_has_none(tmp_path):
    """An artifact whose vocabulary had no EOS (older compilers allowed it) at a complete output."""
    container = read_container(built(JSON_GRAMMAR, "gpt2").path)
    metadata = json.loads(json.dumps(container.metadata))
    metadata["tokenizer"]["eos_ids"] = []
    path = tmp_path / "no-eos.glrm"
    path.write_bytes(encode_container(metadata, dict(container.sections)))
    text = _run("inspect", str(path), "--prefix", "[1]").output
    assert "EOS allowed" not in text and "no EOS token" in text
    answer = json.loads(_run("inspect", str(path), "--prefix", "[1]", "--json").output)
    assert answer["eos_allowed"] is False and answer["complete"] is True
    assert "eos=none" in _run("inspect", str(path)).output
