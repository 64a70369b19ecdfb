"""Where our scanner and lark's meet on one terminal (docs/semantics.md, "Scanning")."""

import re

import pytest

from glrmask_cli.grammar import TerminalSpec
from glrmask_cli.lexer.scanner import build_lexer
from glrmask_runtime.errors import InputRejected
from glrmask_runtime.lexer import Scanner
from glrmask_runtime.tables import START


def test_alternation_is_leftmost_first_as_in_re_match():
    spec = TerminalSpec(name="A", value="a|ab", flags=frozenset(), priority=0, is_literal=False, display="A")
    scanner = Scanner(build_lexer([spec], []).tables)
    closed, state = scanner.scan(START, b"a")
    assert scanner.term_set(scanner.close(state)) == (0,)       # "a" is a lexeme
    assert re.match("a|ab", "ab").group() == "a"                  # and "ab" is not one: re takes "a"
    assert scanner.term_set(scanner.close(scanner.scan(START, b"aa")[1])) == (0,)   # "a" "a"
    with pytest.raises(InputRejected) as info:                    # "a", then "b" starts nothing
        scanner.scan(START, b"ab")
    assert info.value.position == 1
