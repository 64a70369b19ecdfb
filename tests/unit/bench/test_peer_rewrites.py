"""devtools.peer_grammar for the code workloads: each rewritten terminal cuts the same lexemes as lark's original
(judge: Python `re`, whole-text match vs fullmatch, on every short string), templates, relative imports and
pruning keep what lark parses (judge: lark)."""

from __future__ import annotations

import itertools
import re

import lark
import pytest

from devtools import peer_grammar as pg
from devtools.lark_judge import lark_parses


def _regex_of(definition: str) -> re.Pattern:
    """The compiled regex of a one-line `NAME: /.../flags` definition."""
    found = re.fullmatch(r"[\w.]+\s*:\s*/(.*)/([imsux]*)", definition.strip(), re.DOTALL)
    assert found, definition
    flags = 0
    for f in found.group(2):
        flags |= {"i": re.I, "m": re.M, "s": re.S, "u": re.U, "x": re.X}[f]
    return re.compile(found.group(1), flags)


def _same_cuts(original: re.Pattern, rewritten: re.Pattern, alphabet: str, longest: int, prefix: str = "") -> None:
    """For every string: lark's lexer takes all of it with the original (re.match reaches the end) iff the
    rewrite fullmatches it."""
    for n in range(longest + 1):
        for chars in itertools.product(alphabet, repeat=n):
            text = prefix + "".join(chars)
            cut = original.match(text)
            assert (cut is not None and cut.end() == len(text)) == bool(rewritten.fullmatch(text)), repr(text)


@pytest.mark.parametrize("old,new,alphabet,longest,prefix", [
    (pg.GO_STRING_PEER[0][0], pg.GO_STRING_PEER[0][1], "`a\n\\", 6, "`"),
    (pg.GO_STRING_PEER[1][0], pg.GO_STRING_PEER[1][1], '"a\n\\', 6, '"'),
    (pg.JAVA_PEER[0][0], pg.JAVA_PEER[0][1], '"a\n\\', 6, '"'),
    (pg.JAVA_PEER[1][0], pg.JAVA_PEER[1][1], "/*a\n", 8, ""),
    (pg.PYTHON_PEER[0][0], pg.PYTHON_PEER[0][1], "\"'\\\nrb", 6, ""),
    (pg.PYTHON_PEER[1][0], pg.PYTHON_PEER[1][1], "\"\\\na", 9, '"""'),
    (pg.PYTHON_PEER[1][0], pg.PYTHON_PEER[1][1], "'\\a", 8, "b'''"),
])
def test_rewrite_cuts_the_lexemes_lark_cuts(old: str, new: str, alphabet: str, longest: int, prefix: str) -> None:
    _same_cuts(_regex_of(old), _regex_of(new), alphabet, longest, prefix)


def test_python_zero_lookahead_only_limits_what_follows() -> None:
    old, new = pg.PYTHON_PEER[2]
    body = "DEC_NUMBER: /0(_?0)*/"
    original = re.compile(r'0(?:_?0)*(?![1-9])')
    rewritten = re.compile(r"0(?:_?0)*")
    for n in range(7):
        for chars in itertools.product("0_1", repeat=n):
            text = "".join(chars)                  # the terminal's language: fullmatch, nothing follows
            assert bool(original.fullmatch(text)) == bool(rewritten.fullmatch(text)), text
    assert old.endswith("/(?![1-9])/") and new == old.removesuffix(" /(?![1-9])/") and body


def test_templates_are_written_out_as_lark_expands_them() -> None:
    source = ('start: pair{NUMBER} | "[" _list{WORD} "]"\n'
              'pair{x}: x ":" x\n'
              '_list{item}: item ("," item)*\n'
              "NUMBER: /[0-9]+/\nWORD: /[a-z]+/\n%ignore \" \"\n")
    expanded = pg.expand_templates(source, "t.lark")
    assert "{" not in expanded.replace('"{"', "") and "pair__number:" in expanded and "_list__word:" in expanded
    original, copy = lark.Lark(source, parser="lalr"), lark.Lark(expanded, parser="lalr")
    for text in ["1:2", "1 : 22", "[a]", "[a, b,c]", "1:", "[a,]", "[1]", "a:b"]:
        assert lark_parses(copy, text) == lark_parses(original, text), text


def test_template_with_a_non_name_argument_is_an_error() -> None:
    with pytest.raises(pg.PeerGrammarError, match="arguments must be"):
        pg.expand_templates('start: t{"x"}\nt{a}: a\n', "t.lark")


def test_relative_import_brings_its_dependencies_namespaced(tmp_path) -> None:
    (tmp_path / "greek.lark").write_text('ALPHA: "\\\\alpha"\nBETA: "\\\\beta" // a comment\n'
                                         "GREEK: ALPHA | BETA\nUNUSED: \"u\"\n")
    main = tmp_path / "main.lark"
    main.write_text('start: GREEK+\n%import .greek.GREEK\nALPHA: "a"\n%ignore " "\n')
    inlined = pg.inline_relative_imports(main.read_text(), tmp_path, "main.lark")
    assert "%import" not in inlined and "GREEK__ALPHA" in inlined and "UNUSED" not in inlined
    original, copy = lark.Lark.open(str(main), parser="lalr"), lark.Lark(inlined, parser="lalr")
    for text in ["\\alpha", "\\alpha \\beta", "a", "\\gamma", ""]:
        assert lark_parses(copy, text) == lark_parses(original, text), text


def test_relative_import_of_a_missing_terminal_is_an_error(tmp_path) -> None:
    (tmp_path / "m.lark").write_text('A: "a"\n')
    with pytest.raises(pg.PeerGrammarError, match="no terminal B"):
        pg.inline_relative_imports("start: B\n%import .m.B\n", tmp_path, "g.lark")


def test_prune_keeps_the_language_of_the_start_rule() -> None:
    source = ('top: stmt+\nexpr: NAME | expr "+" NAME -> plus\nstmt: "if" expr ":" _INDENT stmt+ _DEDENT | "x"\n'
              "NAME: /[a-z]+/\n%declare _INDENT _DEDENT\n%ignore \" \"\n")
    pruned = pg.prune_unreachable(source, "expr")
    assert "stmt" not in pruned and "%declare" not in pruned and "-> plus" in pruned
    original = lark.Lark(source, parser="lalr", start="expr")
    copy = lark.Lark(pruned + "\nstart: expr\n", parser="lalr")
    for text in ["a", "a + b", "a +", "if a", "x"]:
        assert lark_parses(copy, text) == lark_parses(original, text), text
    with pytest.raises(pg.PeerGrammarError):
        pg.prune_unreachable(source, "nope")


def test_same_name_import_is_a_plain_import() -> None:
    text = pg.inline_common_imports("start: DIGIT\n%import common.DIGIT -> DIGIT\n", "g.lark")
    assert "%import" not in text and lark_parses(lark.Lark(text), "7")
