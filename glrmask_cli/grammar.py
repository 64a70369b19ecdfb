"""Stage 1: a .lark file -> GrammarSpec (BNF rules, terminal patterns, ignore list, start symbol).

Lark's own loader does the work (imports, templates, EBNF, ?rule, _rule, aliases, %override,
%extend) through `lark.load_grammar.load_grammar` + `Grammar.compile`; no LALR table is built, so
conflicting grammars load. This module translates the result and rejects what GLRMask cannot
compile: syntax errors, used %declare'd terminals, empty-matching terminals, backreferences.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import re._constants as sre_constants
import re._parser as sre_parser
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from lark.exceptions import GrammarError as LarkGrammarError
from lark.exceptions import LarkError
from lark.grammar import Rule as LarkRule
from lark.lexer import PatternStr, TerminalDef
from lark.load_grammar import load_grammar as lark_load_grammar
from lark.utils import get_regexp_width

from glrmask_cli.errors import GrammarSyntaxError, UnsupportedFeature

DEFAULT_START = "start"
BOM = "\ufeff"


@dataclass(frozen=True)
class TerminalSpec:
    name: str                  # Lark's name: "ESCAPED_STRING", "LBRACE", "__ANON_0", ...
    value: str                 # Lark's pattern value: a literal's text, or a regexp's source
    flags: frozenset[str]      # subset of {"i", "m", "s", "x", "u"}
    priority: int              # Lark priority (TERM.2 -> 2), default 0
    is_literal: bool           # written as a string literal ("if", "{")
    display: str               # as the user wrote it: '"{"' or 'ESCAPED_STRING'

    @property
    def pattern(self) -> str:
        """Python regex source (a literal's text re.escape()d), without the flags."""
        return re.escape(self.value) if self.is_literal else self.value

    def to_regex(self) -> str:
        """The pattern with its flags applied inline, for Python's `re`."""
        return f"(?{''.join(sorted(self.flags))}:{self.pattern})" if self.flags else self.pattern

    @property
    def max_width(self) -> int:
        """The longest text the terminal can match, as lark computes it (unbounded: a large number)."""
        return len(self.value) if self.is_literal else _regexp_max_width(self.to_regex())


@functools.lru_cache(maxsize=4096)
def _regexp_max_width(regex: str) -> int:
    """lark's longest match of a regexp (cached: each of lark's contextual lexers sorts its terminals
    by it, and a pattern is parsed once instead of once per context)."""
    return int(get_regexp_width(regex)[1])


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
    # lark's compiled rules (priorities kept), for what lark's own LALR parser makes of the grammar
    # (parser/lark_lalr.py); decided by the fields above and the grammar's text, so not compared
    lark_rules: tuple[LarkRule, ...] = field(default=(), compare=False, repr=False)

    def terminal_id(self, name: str) -> int:
        for i, t in enumerate(self.terminals):
            if t.name == name:
                return i
        raise KeyError(name)

    def terminal(self, name: str) -> TerminalSpec:
        return self.terminals[self.terminal_id(name)]

    @property
    def nonterminals(self) -> tuple[str, ...]:
        """Rule names, sorted."""
        return tuple(sorted({r.lhs for r in self.rules}))


# ---------------------------------------------------------------- public entry points

def load_grammar(path: str | os.PathLike, start: str | None = None) -> GrammarSpec:
    """Load a .lark file. `start` defaults to Lark's default rule name, "start".

    Raises GrammarSyntaxError (unreadable or malformed file, unknown start rule) and
    UnsupportedFeature (a construct GLRMask cannot compile), both with `file:line:col` where known.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise GrammarSyntaxError(str(p), f"cannot read grammar file ({e.strerror})") from e
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise GrammarSyntaxError(str(p), f"grammar file is not UTF-8 (byte {e.start})") from e
    return _build_spec(text, str(p), p.stem, hashlib.sha256(data).hexdigest(), start, ())


def load_grammar_text(text: str, name: str = "<string>", start: str | None = None,
                      import_paths: Iterable[str | os.PathLike] = ()) -> GrammarSpec:
    """Load grammar source text (tests, embedding). `name` is used in error locations."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    stem = Path(name).stem if not name.startswith("<") else name.strip("<>") or "string"
    return _build_spec(text, name, stem, digest, start, tuple(os.fspath(p) for p in import_paths))


# ---------------------------------------------------------------- building

def _build_spec(text: str, source: str, stem: str, digest: str, start: str | None,
                import_paths: tuple[str, ...]) -> GrammarSpec:
    start = start or DEFAULT_START
    text = text.removeprefix(BOM)   # editors on Windows write one; Lark would read it as a stray character
    grammar = _lark_grammar(text, source, import_paths)
    rule_names = sorted({name for name, params, _t, _o in grammar.rule_defs if not params})
    if start not in rule_names:
        raise GrammarSyntaxError(source, f"start rule {start!r} is not defined",
                                 hint=f"choose --start from: {', '.join(rule_names) or '(no rules)'}")
    try:
        terminal_defs, lark_rules, ignore = grammar.compile([start], ())
    except LarkGrammarError as e:
        raise _syntax_error(e, source, text) from e
    declared = {name for name, (tree, _p) in grammar.term_defs if tree is None}
    user_defined = {name for name, (tree, _p) in grammar.term_defs if tree is not None}
    # The terminals are lark's: those of every rule lark keeps (it drops only rules nothing mentions,
    # so rules in a cycle that `start` does not reach stay), which its basic lexer scans with (python.lark
    # from eval_input: "_" lexes as the literal of a match pattern, not as NAME). The rules are those
    # `start` reaches; a terminal only the others use is lexed, never shifted.
    rules = _reachable(_rules(lark_rules), start)
    _check_declared(rules, declared, {t.name for t in terminal_defs}, source, text)
    terminals = tuple(sorted((terminal_spec(t, user_defined) for t in terminal_defs), key=lambda t: t.name))
    for t in terminals:
        _check_terminal(t, source, text)
    return GrammarSpec(name=stem, sha256=digest, start=start, terminals=terminals, rules=rules,
                       ignore=tuple(sorted(set(ignore))), lark_rules=tuple(lark_rules))


def _lark_grammar(text: str, source: str, import_paths: tuple[str, ...]):
    try:
        grammar, _used = lark_load_grammar(text, source, list(import_paths), False)
    except (LarkGrammarError, LarkError) as e:
        raise _syntax_error(e, source, text) from e
    except OSError as e:  # an %import that no search path holds
        missing = getattr(e, "filename", None) or str(e)
        raise GrammarSyntaxError(source, f"cannot import grammar {missing}",
                                 hint="check the %import path (relative imports start with '.')") from e
    return grammar


def _rules(lark_rules) -> tuple[RuleSpec, ...]:
    """Lark's compiled rules, in Lark's (deterministic, file-ordered) order, duplicates dropped."""
    seen: dict[RuleSpec, None] = {}
    for r in lark_rules:
        seen.setdefault(RuleSpec(str(r.origin.name), tuple(str(s.name) for s in r.expansion)), None)
    return tuple(seen)


def _reachable(rules: tuple[RuleSpec, ...], start: str) -> tuple[RuleSpec, ...]:
    """The rules reachable from `start` (Lark only drops rules that nothing mentions)."""
    by_lhs: dict[str, list[RuleSpec]] = {}
    for r in rules:
        by_lhs.setdefault(r.lhs, []).append(r)
    seen, todo = {start}, [start]
    while todo:
        for r in by_lhs.get(todo.pop(), ()):
            for s in r.rhs:
                if s in by_lhs and s not in seen:
                    seen.add(s)
                    todo.append(s)
    return tuple(r for r in rules if r.lhs in seen)


def terminal_spec(t: TerminalDef, user_defined: Iterable[str] = ()) -> TerminalSpec:
    """A lark terminal as a TerminalSpec; names in `user_defined` are displayed by name, others
    (anonymous literals and regexps) as written."""
    literal = isinstance(t.pattern, PatternStr)
    if t.name in user_defined and not t.name.startswith("__"):  # "__IGNORE_0" comes from `%ignore /re/`
        display = t.name
    else:
        display = t.pattern.raw or (repr(t.pattern.value) if literal else f"/{t.pattern.value}/")
    return TerminalSpec(name=t.name, value=t.pattern.value, flags=frozenset(t.pattern.flags),
                        priority=int(t.priority), is_literal=literal, display=display)


# ---------------------------------------------------------------- checks

def _check_declared(rules: tuple[RuleSpec, ...], declared: set[str], defined: set[str],
                    source: str, text: str) -> None:
    for r in rules:
        for s in r.rhs:
            if s in declared and s not in defined:
                raise UnsupportedFeature(_where(source, text, s, declare=True),
                                         "is %declare'd (it needs a Lark postlexer, e.g. an Indenter)",
                                         terminal=s, hint=f"used in rule {r.lhs}; define it with a "
                                         "pattern or pick a start rule that does not reach it")


def _check_terminal(t: TerminalSpec, source: str, text: str) -> None:
    try:
        parsed = sre_parser.parse(t.to_regex())
        re.compile(t.to_regex())
    except re.error as e:
        raise GrammarSyntaxError(_where(source, text, t.name), f"invalid regular expression ({e})",
                                 terminal=t.display) from e
    if parsed.getwidth()[0] == 0:
        raise UnsupportedFeature(_where(source, text, t.name), "can match the empty string",
                                 terminal=t.display, hint="make it match at least one character "
                                 "and use ? or [ ] in the rules instead")
    if _has_backreference(parsed):
        raise UnsupportedFeature(_where(source, text, t.name),
                                 "uses a regex backreference (not a regular language)",
                                 terminal=t.display)


def _has_backreference(parsed) -> bool:
    stack = [parsed]
    while stack:
        for op, av in stack.pop():
            if op in (sre_constants.GROUPREF, sre_constants.GROUPREF_EXISTS):
                return True
            stack.extend(_subpatterns(av))
    return False


def _subpatterns(av) -> list:
    """The nested SubPatterns of one opcode's argument (any nesting of tuples/lists)."""
    out, todo = [], [av]
    while todo:
        x = todo.pop()
        if isinstance(x, sre_parser.SubPattern):
            out.append(x)
        elif isinstance(x, (tuple, list)):
            todo.extend(x)
    return out


# ---------------------------------------------------------------- locations

_LINE_COL = re.compile(r"line (\d+),? col(?:umn)? (\d+)")


def _syntax_error(e: Exception, source: str, text: str) -> GrammarSyntaxError:
    """Translate a lark loader error: keep its first line, take line/column from it if it has one."""
    message = str(e).strip()
    first = message.splitlines()[0].rstrip(": ") if message else type(e).__name__
    line, col = getattr(e, "line", None), getattr(e, "column", None)
    m = _LINE_COL.search(message)
    if m and not isinstance(line, int):
        line, col = int(m.group(1)), int(m.group(2))
    first = re.sub(r",? at$", "", _LINE_COL.sub("", first).replace(f" in {source}", "").rstrip(" ,:"))
    where = f"{source}:{line}:{col}" if isinstance(line, int) and line > 0 else _where_from_names(
        source, text, first)
    return GrammarSyntaxError(where, first or "invalid grammar")


def _where_from_names(source: str, text: str, message: str) -> str:
    """A location for a message that names a rule or terminal (lark gives none): its definition."""
    for name in re.findall(r"[A-Za-z_][A-Za-z_0-9]*", message):
        if name in ("Rule", "Terminal", "Terminals", "rule", "terminal"):
            continue
        where = _where(source, text, name)
        if where != source:
            return where
    return source


def _where(source: str, text: str, name: str, declare: bool = False) -> str:
    """`file:line:col` of the definition of `name` in the top-level file, else just `file`."""
    if declare:
        pat = re.compile(r"^[ \t]*%declare\b[^\n]*\b" + re.escape(name) + r"\b", re.M)
    else:
        pat = re.compile(r"^[ \t]*(?:%override[ \t]+|%extend[ \t]+)?[?!]?" + re.escape(name)
                         + r"(?:\.-?\d+)?[ \t]*(?:\{[^}\n]*\})?[ \t]*:", re.M)
    m = pat.search(text)
    if not m:
        return source
    line = text.count("\n", 0, m.start()) + 1
    col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
    return f"{source}:{line}:{col}"


__all__ = ["DEFAULT_START", "GrammarSpec", "RuleSpec", "TerminalSpec", "load_grammar", "load_grammar_text",
           "terminal_spec"]
