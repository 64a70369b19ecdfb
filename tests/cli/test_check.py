"""`glrmask check`: one line per file, exit codes 0 ok / 1 rejected or bad grammar / 2 usage, helpful
rejection messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from glrmask_cli.cli import cli

REPO = Path(__file__).resolve().parents[2]
JSON_GRAMMAR = str(REPO / "grammars" / "json.lark")


def _run(*args: str):
    return CliRunner().invoke(cli, ["check", *args])


@pytest.fixture
def docs(tmp_path):
    files = {
        "good.json": b'{"a": [1, 2, {"b": null}]}\n',
        "bad.json": b'{"a": [1, 2 3]}',
        "short.json": b'{"a": [1, 2',
        "junk.json": b'{"a": @}',
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    return tmp_path


def test_all_ok_exits_0(docs):
    result = _run(JSON_GRAMMAR, str(docs / "good.json"))
    assert result.exit_code == 0
    assert result.output == f"{docs / 'good.json'}: ok\n"


def test_rejections_name_byte_expected_and_excerpt(docs):
    names = ["good.json", "bad.json", "short.json", "junk.json"]
    result = _run(JSON_GRAMMAR, *[str(docs / n) for n in names])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert len(lines) == 4 and lines[0].endswith(": ok")
    # the byte offsets come from Python's json module, an independent judge
    for name, line in zip(names[1:], lines[1:]):
        data = (docs / name).read_bytes()
        with pytest.raises(json.JSONDecodeError) as info:
            json.loads(data)
        assert line.startswith(f"{docs / name}: rejected at byte {info.value.pos}: "), line
    assert 'unexpected NUMBER at "3]}"' in lines[1] and '","' in lines[1] and '"]"' in lines[1]
    assert "ends too early" in lines[2] and '","' in lines[2]
    assert 'no terminal starts at "@}"' in lines[3]


def test_grammar_error_exits_1(tmp_path, docs):
    bad = tmp_path / "bad.lark"
    bad.write_text("start: foo\n")
    result = _run(str(bad), str(docs / "good.json"))
    assert result.exit_code == 1
    assert "foo" in result.output and result.output.startswith("Error: ")


def test_unknown_start_rule_exits_1(docs):
    result = _run(JSON_GRAMMAR, str(docs / "good.json"), "--start", "nope")
    assert result.exit_code == 1 and "nope" in result.output


def test_missing_file_is_a_usage_error(docs):
    result = _run(JSON_GRAMMAR, str(docs / "absent.json"))
    assert result.exit_code == 2


def test_no_files_is_a_usage_error():
    assert _run(JSON_GRAMMAR).exit_code == 2


def test_start_option_selects_rule(tmp_path):
    grammar = tmp_path / "g.lark"
    grammar.write_text('start: "a" inner\ninner: "b"+\n')
    doc = tmp_path / "d.txt"
    doc.write_bytes(b"bbb")
    assert _run(str(grammar), str(doc)).exit_code == 1
    assert _run(str(grammar), str(doc), "--start", "inner").exit_code == 0
