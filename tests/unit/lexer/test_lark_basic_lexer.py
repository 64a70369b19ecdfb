"""lark's basic lexer, rule by rule: every short text over a small alphabet gets lark's verdict.

Each grammar isolates one of lark's rules (docs/semantics.md, "Scanning"); the judge is
`Lark(grammar, parser="lalr", lexer="basic")`, never a hand-typed expectation. The texts are all
strings up to a length over the characters that matter, so a difference in where a lexeme ends or
which terminal it is shows up as a text one side accepts and the other rejects.
"""

from __future__ import annotations

import lark
import pytest

from devtools.data import DataUnavailable, syncode_grammar
from devtools.lark_judge import lark_parses
from glrmask_cli.check import load_checker
from glrmask_cli.lexer import build_lexer
from glrmask_cli.pipeline import compile_front_end
from tests.support.lexer_corpus import LARK_GRAMMARS, lark_terminal_specs
from tests.support.short_texts import assert_lark_verdicts, short_texts

CASES = {
    # a literal inside a regexp of the same priority: NAME's match "if" becomes IF, "iff" stays NAME
    "embedded-literal": ('start: (IF NAME | NAME)+\nIF: "if"\nNAME: /[a-z]+/\n%ignore " "\n', "if ", 5),
    # a higher-priority literal is tried first, even where NAME would match more: "iffy" is IF "fy"
    "literal-priority-above": ('start: (IF NAME | NAME)+\nIF.2: "if"\nNAME: /[a-z]+/\n%ignore " "\n', "if ", 5),
    # a higher-priority regexp is tried first, and no unless: "if" is always NAME
    "regexp-priority-above": ('start: (IF NAME | NAME)+\nIF: "if"\nNAME.2: /[a-z]+/\n%ignore " "\n', "if ", 5),
    # an ignored regexp that matches the literal: its match is dropped, "\n" never reaches the parser
    "ignored-regexp-vs-literal": ('start: "{" (NAME | NL)* "}"\nNL: "\\n"\nNAME: /[a-z]+/\nWS: /[ \\n]+/\n'
                                  '%ignore WS\n', "{}a \n", 5),
    # a case-insensitive literal is not embedded in a case-sensitive regexp (flags not a subset)
    "literal-i-flag": ('start: (IF NAME | NAME)+\nIF: "if"i\nNAME: /[a-z]+/\n%ignore " "\n', "ifI ", 5),
    # a case-sensitive literal embedded in a case-insensitive regexp: only "if" itself is retyped
    "regexp-i-flag": ('start: (IF NAME | NAME)+\nIF: "if"\nNAME: /[a-z]+/i\n%ignore " "\n', "ifI ", 5),
    # retyping needs the whole match: NAME's match "if\n" stays NAME
    "retype-whole-match": ('start: IF "," NAME\nIF: "if"\nNAME: /[a-z\\n]+/\n', "if\n,", 5),
    # regexps of equal priority and width: the longer pattern is tried first and wins where it matches
    "pattern-length": ('start: (A | B)+\nA: /[a-z]+/\nB: /[a-c0-9]+/\n%ignore " "\n', "az1 ", 5),
    # equal priority, width and pattern length: the name decides
    "name-order": ('start: (A B | B A)+\nA: /a[bc]/\nB: /[ab]c/\n%ignore " "\n', "abc ", 6),
    # literals: the longer one first; a higher-priority shorter one hides the longer
    "literal-widths": ('start: (EQ | EQEQ | NAME)+\nEQ: "="\nEQEQ: "=="\nNAME: /[a-z]+/\n', "=a", 5),
    "literal-priority": ('start: (EQ | EQEQ | NAME)+\nEQ.2: "="\nEQEQ: "=="\nNAME: /[a-z]+/\n', "=a", 5),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_short_text_gets_larks_verdict(name, tmp_path):
    text, alphabet, max_length = CASES[name]
    path = tmp_path / f"{name}.lark"
    path.write_text(text)
    judge = lark.Lark(text, parser="lalr", lexer="basic")
    checker = load_checker(path, lexer="basic")
    assert_lark_verdicts(judge, checker, short_texts(alphabet, max_length))


def test_a_literal_the_lexer_never_produces_is_named(tmp_path):
    path = tmp_path / "g.lark"
    path.write_text(CASES["ignored-regexp-vs-literal"][0])
    warnings = compile_front_end(path).lexer.warnings
    assert any(w.startswith("terminal NL is never produced") and "WS, which is %ignore'd" in w
               for w in warnings), warnings


def test_syncode_c_functions_with_newlines(tmp_path):
    """SynCode's c.lark (written for lalr + basic): `"\\n"` in a rule and `%ignore WS` with
    `WS: /[ \\t\\n]+/`; lark drops every newline as WS, so functions spanning lines parse, and a
    `// comment`, whose rule needs a `"\\n"` token after it, never does."""
    try:
        grammar = syncode_grammar("c.lark")
    except DataUnavailable as e:
        pytest.skip(str(e))
    judge = lark.Lark(grammar.read_text(), parser="lalr", lexer="basic")
    checker = load_checker(grammar, lexer="basic")
    functions = ["int f() {\n  return 0;\n}\n", "void g(int a, int b) {\n  a = b + 1;\n}\n",
                 "int main() {\n  // count\n  int x = 1;\n  while (x < 10) {\n    x = x * 2;\n  }\n}\n",
                 "int h() { return 1 }", "int k() {\n}\n}"]
    for source in functions:
        assert checker.check_bytes(source.encode()).ok == lark_parses(judge, source), source
    assert [lark_parses(judge, s) for s in functions] == [True, True, False, False, False]


def test_lexemes_close_as_one_terminal():
    """lark's order leaves no ties: every close set is a single terminal."""
    specs, ignore = lark_terminal_specs(LARK_GRAMMARS + "/python.lark")
    tables = build_lexer(specs, ignore).tables
    sizes = {len(tables.term_set(int(s))) for s in set(tables.close_sets.ravel().tolist())}
    assert sizes <= {0, 1}



def test_terminals_of_rules_start_does_not_reach_are_lexed(tmp_path):
    """lark keeps every rule something mentions, so a cycle of rules `start` does not reach keeps its
    terminals in the basic lexer (python.lark from eval_input: "_" lexes as a match pattern's literal,
    never as NAME, and `_(x)` is rejected)."""
    text = ('start: NAME "(" ")"\nstmt: "do" block | start\nblock: "{" stmt "}" | pattern\n'
            'pattern: "_" | NAME\nNAME: /[a-z_]+/\n')
    path = tmp_path / "g.lark"
    path.write_text(text)
    judge = lark.Lark(text, parser="lalr", lexer="basic")
    checker = load_checker(path, lexer="basic")
    assert_lark_verdicts(judge, checker, short_texts("_f()", 4))
    assert not checker.check_bytes(b"_()").ok and checker.check_bytes(b"f()").ok
