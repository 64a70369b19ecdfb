"""A random walk's output that lark rejects is a mask bug unless lark's own rules accept how we split
it into lexemes: then the two differ in lexing only (docs/semantics.md: a judge whose lexer is not
lark's basic one, e.g. Earley's dynamic lexer)."""

from __future__ import annotations

from lark import Lark

from devtools.builds import built
from devtools.exactness import our_lexemes
from devtools.lark_judge import lark_parses, lexemes_parse

# The judge's `X: /a|ab/` takes "a" in "abc" (re.match is leftmost-first); the grammar we build has
# `X: /ab|a/`, which takes "ab": the same rules, lexed differently.
LEFTMOST_FIRST = 'start: X "c" X?\nX: /a|ab/\n'
OURS = 'start: X "c" X?\nX: /ab|a/\n'


def test_a_document_lark_lexes_differently_is_a_lexing_difference(tmp_path):
    grammar = tmp_path / "leftmost.lark"
    grammar.write_text(OURS)
    judge = Lark(LEFTMOST_FIRST, parser="lalr")
    b = built(grammar, "small-gpt2", lexer="basic")    # our_lexemes: a basic-lexer cell's lexemes
    lexemes = our_lexemes(b, b"abca")
    assert lexemes == [("ab", ("X",)), ("c", ("C",)), ("a", ("X",))]
    assert not lark_parses(judge, "abca")
    assert lexemes_parse(judge, lexemes)


def test_lexemes_the_rules_do_not_allow_are_a_parsing_difference():
    judge = Lark(LEFTMOST_FIRST, parser="lalr")
    assert not lexemes_parse(judge, [("c", ("C",)), ("ab", ("X",))])
    assert not lexemes_parse(judge, [("ab", ("X",)), ("c", ("C",)), ("c", ("C",))])


def test_a_lexeme_its_terminal_does_not_match_is_not_excused():
    judge = Lark(LEFTMOST_FIRST, parser="lalr")
    assert not lexemes_parse(judge, [("abab", ("X",)), ("c", ("C",))])
    assert not lexemes_parse(judge, [("ab", ("X", "C")), ("x", ("C",))])


def test_an_earley_judge_with_ambiguous_lexemes_and_ignored_text():
    grammar = ('start: name "=" NUMBER\nname: NAME | KEYWORD\nKEYWORD: "if"\n%import common.CNAME -> NAME\n'
               '%import common (NUMBER, WS)\n%ignore WS\n')
    judge = Lark(grammar, parser="earley", lexer="dynamic")
    # our scanner leaves %ignore'd lexemes out and may offer several terminals for one lexeme
    assert lexemes_parse(judge, [("if", ("KEYWORD", "NAME")), ("=", ("EQUAL",)), ("12", ("NUMBER",))])
    assert not lexemes_parse(judge, [("if", ("KEYWORD", "NAME")), ("12", ("NUMBER",))])
