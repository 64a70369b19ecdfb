"""Named, documented differences between our scanner and lark's (docs/semantics.md)."""

import re

from glrmask_cli.grammar import TerminalSpec
from glrmask_cli.lexer.scanner import build_lexer
from glrmask_runtime.lexer import Scanner
from glrmask_runtime.tables import START


def test_alternation_is_the_fullmatch_language_not_leftmost_first():
    spec = TerminalSpec(name="A", pattern="a|ab", flags=frozenset(), priority=0, is_literal=False, display="A")
    scanner = Scanner(build_lexer([spec], []).tables)
    closed, state = scanner.scan(START, b"ab")
    assert closed == [] and scanner.term_set(scanner.close(state)) == (0,)   # one lexeme "ab"
    assert re.match("a|ab", "ab").group() == "a"                              # lark/re would take "a"
