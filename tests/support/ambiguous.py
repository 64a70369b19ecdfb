"""An ambiguous expression grammar with runtime closes, and expressions in it: for tests that need a
graph-structured stack. `1+2*3` has two parses through `f` (normalization nests a rule with its
nonterminal at both ends, `e: e "+" e`, to the left, which would leave one)."""

from __future__ import annotations

AMBIGUOUS_GRAMMAR = """
start: e
e: e "+" f | e "*" f | "(" e ")" | NUMBER
f: e
NUMBER: /[0-9]+/
%ignore " "
"""
EXPRESSIONS = [b"1+2*3", b"(1 + 22) * 333 + 4", b"((1))", b"1*2*3*4+5+6", b"12 + (3*(4+5)) * 6", b"7"]
