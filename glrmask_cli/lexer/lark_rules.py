"""Lark's basic-lexer rules as data: the order terminals are tried in, and which literals are retyped.

lark 1.3.1 (`lark/lexer.py`, `BasicLexer` and `_create_unless`) scans with one alternation of all
terminals, tried in the order (priority descending, max width descending, length of the pattern's
value descending, name), taking the first that matches. A string literal L that a regexp R of the
same priority fully matches (R's `re.match` of L's text is all of it) is in R's *unless* list: a
match of R whose text L fully matches becomes L (the first such L in lark's order). If L's flags
are a subset of R's, L is also *embedded*: lark drops it from the alternation, so only R's matches
produce it. An ignored R is dropped before it could be retyped, so an embedded literal of an
ignored regexp is never produced. docs/semantics.md has an example each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from glrmask_cli.grammar import TerminalSpec


@dataclass(frozen=True)
class LarkRules:
    rank: tuple[int, ...]                       # per terminal id: its position in lark's order
    embedded: dict[int, tuple[int, ...]]        # literal lark removes from the alternation -> its regexps
    unless: dict[int, tuple[int, ...]]          # regexp id (not ignored) -> literals its matches become


def order_key(t: TerminalSpec) -> tuple[int, int, int, str]:
    """lark's sort key for the basic lexer's alternation."""
    return (-t.priority, -t.max_width, -len(t.value), t.name)


def lark_rules(terminals: Sequence[TerminalSpec], ignore: Sequence[str]) -> LarkRules:
    order = sorted(range(len(terminals)), key=lambda i: order_key(terminals[i]))
    rank = [0] * len(terminals)
    for position, i in enumerate(order):
        rank[i] = position
    ignored = set(ignore)
    embedded: dict[int, list[int]] = {}
    unless: dict[int, tuple[int, ...]] = {}
    literals = [i for i in order if terminals[i].is_literal]
    for r in order:
        regexp = terminals[r]
        if regexp.is_literal:
            continue
        compiled = re.compile(regexp.to_regex())
        matched = []
        for s in literals:
            literal = terminals[s]
            if literal.priority != regexp.priority:
                continue
            m = compiled.match(literal.value)
            if m is not None and m.group(0) == literal.value:
                matched.append(s)
                if literal.flags <= regexp.flags:
                    embedded.setdefault(s, []).append(r)
        if matched and regexp.name not in ignored:
            unless[r] = tuple(matched)
    return LarkRules(tuple(rank), {s: tuple(rs) for s, rs in sorted(embedded.items())}, unless)
