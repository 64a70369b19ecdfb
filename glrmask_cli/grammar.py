"""Stage 1: a .lark file -> GrammarSpec (BNF rules, terminal patterns, ignore list, start symbol).

Lark's own loader does the work (imports, templates, EBNF, ?rule, _rule, aliases, %override,
%extend); this module translates its result and rejects what GLRMask cannot compile.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TerminalSpec:
    name: str                  # Lark's name: "ESCAPED_STRING", "LBRACE", "__ANON_0", ...
    pattern: str               # Python regex source; string literals are re.escape()d
    flags: frozenset[str]      # subset of {"i", "m", "s", "x", "u"}
    priority: int              # Lark priority (TERM.2 -> 2), default 0
    is_literal: bool           # written as a string literal ("if", "{")
    display: str               # as the user wrote it: '"{"' or 'ESCAPED_STRING'


@dataclass(frozen=True)
class RuleSpec:
    lhs: str
    rhs: tuple[str, ...]       # symbol names; a name in GrammarSpec.terminals is a terminal


@dataclass(frozen=True)
class GrammarSpec:
    name: str                  # file stem, e.g. "json"
    sha256: str                # of the grammar file's bytes
    start: str
    terminals: tuple[TerminalSpec, ...]   # sorted by name; index = terminal id
    rules: tuple[RuleSpec, ...]           # in a deterministic order
    ignore: tuple[str, ...]               # names of %ignore'd terminals (sorted)

    def terminal_id(self, name: str) -> int:
        for i, t in enumerate(self.terminals):
            if t.name == name:
                return i
        raise KeyError(name)
