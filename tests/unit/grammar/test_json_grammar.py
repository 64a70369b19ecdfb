"""grammars/json.lark against JSONTestSuite: lark LALR(1) and Earley as judges, Python's json beside them.

The README's `i_` table is checked against what lark actually does, so the documentation stays true.
"""

from __future__ import annotations

import json
import logging
import re
from functools import lru_cache
from pathlib import Path

import pytest
from lark import Lark

from devtools.lark_judge import lark_parses
from glrmask_cli.grammar import load_grammar

ROOT = Path(__file__).resolve().parents[3]
GRAMMAR = ROOT / "grammars" / "json.lark"
SUITE = ROOT / "tests" / "data" / "JSONTestSuite" / "test_parsing"
FILES = sorted(p.name for p in SUITE.glob("*.json"))
BIG = 20_000  # bytes
# RFC 8259 rejects these; Python's json accepts them as an extension (documented in grammars/README.md).
PYTHON_EXTENSIONS = {"n_number_NaN.json", "n_number_infinity.json", "n_number_minus_infinity.json"}


@lru_cache(maxsize=None)
def _parser(kind: str) -> Lark:
    lexer = "basic" if kind == "earley" else "contextual"
    return Lark(GRAMMAR.read_text(), parser=kind, lexer=lexer)


def _lark_accepts(kind: str, data: bytes) -> bool:
    return lark_parses(_parser(kind), data)


def _python_accepts(data: bytes) -> bool:
    try:
        json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    return True


def test_suite_is_present():
    assert sum(f.startswith("y_") for f in FILES) == 95 and sum(f.startswith("n_") for f in FILES) == 188


def test_grammar_is_lalr1_without_conflicts(caplog):
    with caplog.at_level(logging.DEBUG, logger="lark"):
        Lark(GRAMMAR.read_text(), parser="lalr", debug=True)
    assert not [r for r in caplog.records if "conflict" in r.getMessage().lower()]


def test_glrmask_loader_accepts_it():
    spec = load_grammar(GRAMMAR)
    assert spec.name == "json" and spec.ignore == ("WS",)
    assert {t.display for t in spec.terminals} >= {"STRING", "NUMBER", '"true"', '"{"'}


@pytest.mark.parametrize("name", [f for f in FILES if not f.startswith("i_")])
def test_y_accepted_n_rejected(name):
    data = (SUITE / name).read_bytes()
    expected = name.startswith("y_")
    assert _lark_accepts("lalr", data) == expected
    if len(data) <= BIG:  # Earley needs ~20 s on the two 100 KB files: see the slow test below
        assert _lark_accepts("earley", data) == expected
    python = _python_accepts(data)
    assert python == expected or name in PYTHON_EXTENSIONS


@pytest.mark.slow
@pytest.mark.parametrize("name", [f for f in FILES if (SUITE / f).stat().st_size > BIG])
def test_big_files_with_earley(name):
    data = (SUITE / name).read_bytes()
    assert _lark_accepts("earley", data) == _lark_accepts("lalr", data) == name.startswith("y_")


def _readme_i_outcomes() -> dict[str, bool]:
    text = (ROOT / "grammars" / "README.md").read_text()
    rows = re.findall(r"^\| `(i_[^`]+)` \| (accept|reject) \|", text, re.M)
    return {f"{name}.json": outcome == "accept" for name, outcome in rows}


def test_readme_lists_every_i_outcome_correctly():
    documented = _readme_i_outcomes()
    assert sorted(documented) == [f for f in FILES if f.startswith("i_")]
    for name, accepted in documented.items():
        data = (SUITE / name).read_bytes()
        assert _lark_accepts("lalr", data) == accepted, name
        assert _lark_accepts("earley", data) == accepted, name
