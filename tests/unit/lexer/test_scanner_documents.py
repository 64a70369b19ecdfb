"""The combined scanner on real documents: JSONTestSuite files lexed with grammars/json.lark give the
same terminal sequence as lark's own (basic) lexer, for every file that lark parses.

Documented difference (none occurs with json.lark): lark's lexer tries terminals as one alternation
regex (leftmost-first per terminal, backtracking at lexeme boundaries); ours is longest match with one
byte of lookahead, so e.g. INT / DECIMAL on `1.x` is rejected here and lexed as INT by lark.
"""

from __future__ import annotations

import os

import lark
import pytest

from glrmask_cli.grammar import load_grammar
from glrmask_cli.lexer import build_lexer
from glrmask_runtime.errors import InputRejected
from glrmask_runtime.lexer import Scanner
from glrmask_runtime.tables import START

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
JSON_LARK = os.path.join(ROOT, "grammars", "json.lark")
SUITE = os.path.join(ROOT, "tests", "data", "JSONTestSuite", "test_parsing")


@pytest.fixture(scope="module")
def setup():
    spec = load_grammar(JSON_LARK)
    build = build_lexer(spec.terminals, spec.ignore, JSON_LARK)
    parser = lark.Lark.open(JSON_LARK, parser="lalr", lexer="basic")
    return spec, Scanner(build.tables), parser


def lex_all(scanner: Scanner, data: bytes) -> list[tuple[int, ...]]:
    sets, state = scanner.scan(START, data)
    if state != START:
        final = scanner.close(state)
        if final == 0:
            raise InputRejected(len(data), "unfinished lexeme at end of input")
        sets.append(final)
    return [scanner.term_set(s) for s in sets]


def test_json_suite_matches_lark_lexer(setup):
    spec, scanner, parser = setup
    ignored = {spec.terminal_id(n) for n in spec.ignore}
    compared = 0
    for name in sorted(os.listdir(SUITE)):
        data = open(os.path.join(SUITE, name), "rb").read()
        try:
            text = data.decode("utf-8")
            parser.parse(text)
        except (UnicodeDecodeError, lark.exceptions.LarkError):
            continue
        expected = [t.type for t in parser.lex(text)]
        got = [s for s in lex_all(scanner, data) if not set(s) <= ignored]
        assert len(got) == len(expected), name
        for terms, lark_type in zip(got, expected, strict=True):
            assert lark_type in {spec.terminals[t].name for t in terms}, (name, terms, lark_type)
        compared += 1
    assert compared >= 90


def test_json_suite_rejections_agree_with_lark(setup):
    """Files lark's basic lexer cannot lex must make our scanner raise too (same lexical language)."""
    spec, scanner, parser = setup
    for name in sorted(os.listdir(SUITE)):
        data = open(os.path.join(SUITE, name), "rb").read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        try:
            list(parser.lex(text))
            lark_ok = True
        except lark.exceptions.UnexpectedInput:
            lark_ok = False
        try:
            lex_all(scanner, data)
            ours_ok = True
        except InputRejected:
            ours_ok = False
        assert ours_ok == lark_ok, name


def _plain_scan(tables, state: int, data: bytes) -> tuple[list[int], int] | int:
    """The DFA walk of the docstring above, byte by byte: (closed sets, state), or the failing offset."""
    trans, close = tables.transitions, tables.close_sets
    closed = []
    for pos, byte in enumerate(data):
        if trans[state, byte]:
            state = int(trans[state, byte])
            continue
        if state == START or not close[state, byte] or not trans[START, byte]:
            return pos
        closed.append(int(close[state, byte]))
        state = int(trans[START, byte])
    return closed, state


def test_remembered_runs_scan_as_the_plain_walk(setup, monkeypatch):
    """Token-sized pieces of every suite file, fed twice (the second time from remembered runs) with
    a memory of 64 runs (so it is emptied many times), and each whole file: each scans as a
    byte-by-byte DFA walk, failures at the same offset."""
    import glrmask_runtime.lexer as lexer_module

    monkeypatch.setattr(lexer_module, "_MAX_RUNS", 64)
    _, scanner, _ = setup
    scanner = Scanner(scanner.tables)
    pieces = 0
    for name in sorted(os.listdir(SUITE)):
        data = open(os.path.join(SUITE, name), "rb").read()[:400]
        for _ in range(2):
            state, pos = START, 0
            while pos < len(data):
                piece = data[pos:pos + 1 + pos % 4]
                expected = _plain_scan(scanner.tables, state, piece)
                try:
                    got = scanner.scan(state, piece)
                except InputRejected as e:
                    assert expected == e.position, (name, pos)
                    break
                assert got == expected, (name, pos)
                state, pos, pieces = got[1], pos + len(piece), pieces + 1
        assert len(scanner._runs) <= 64
        whole = open(os.path.join(SUITE, name), "rb").read()   # longer than a token: walked, not kept
        try:
            assert scanner.scan(START, whole) == _plain_scan(scanner.tables, START, whole), name
        except InputRejected as e:
            assert _plain_scan(scanner.tables, START, whole) == e.position, name
    assert pieces > 1_000
