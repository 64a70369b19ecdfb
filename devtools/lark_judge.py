"""lark as an independent judge: of documents, of grammars GLRMask derived, of lexeme sequences.

`spec_to_lark` writes a GrammarSpec back as Lark text (same terminal names, patterns, priorities);
`cfg_to_lark` writes a CFG over one-character terminals so that terminal *sequences* can be judged;
`lexemes_parse` judges a lexeme sequence with a Lark parser's own rules (lexing vs parsing differences);
`EarleyJudge` answers "is this in the language?" with Lark(parser='earley').
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Collection, Sequence

from lark import Lark
from lark.exceptions import LarkError

from glrmask_cli.grammar import GrammarSpec, TerminalSpec
from glrmask_cli.parser.cfg import CFG

# One-character stand-ins for terminal ids in `cfg_to_lark`: letters and digits first (readable in
# failure messages), then CJK ideographs for big grammars.
TERMINAL_CHARS = ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                  + "".join(chr(0x4E00 + i) for i in range(1000)))


def lark_parses(parser: Lark, document: str | bytes) -> bool:
    """lark's verdict on a whole document; bytes that are not UTF-8 are rejected (lark reads text)."""
    try:
        parser.parse(document.decode("utf-8") if isinstance(document, bytes) else document)
    except (LarkError, UnicodeDecodeError):
        return False
    return True


def _regex_literal(t: TerminalSpec) -> str:
    body = t.pattern.replace("/", "\\/")
    if "x" not in t.flags:
        body = body.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t").replace("\f", "\\f")
    return f"/{body}/{''.join(sorted(t.flags))}"


def _string_literal(t: TerminalSpec) -> str:
    return json.dumps(t.value, ensure_ascii=False) + ("i" if "i" in t.flags else "")


def spec_to_lark(spec: GrammarSpec) -> str:
    """Lark text with the same BNF rules, terminals and %ignore list as `spec`."""
    lines = []
    by_lhs: dict[str, list[tuple[str, ...]]] = {}
    for r in spec.rules:
        by_lhs.setdefault(r.lhs, []).append(r.rhs)
    names = {lhs: f"r{i}" for i, lhs in enumerate(sorted(by_lhs))}
    term_names = {t.name: f"T{i}" for i, t in enumerate(spec.terminals)}
    lines.append(f"start: {names[spec.start]}")
    for lhs in sorted(by_lhs):
        alts = [" ".join(names.get(s) or term_names[s] for s in rhs) for rhs in by_lhs[lhs]]
        lines.append(f"{names[lhs]}: " + "\n    | ".join(alts))
    for t in spec.terminals:
        literal = _string_literal(t) if t.is_literal else _regex_literal(t)
        prio = f".{t.priority}" if t.priority else ""
        lines.append(f"{term_names[t.name]}{prio}: {literal}")
    for name in spec.ignore:
        lines.append(f"%ignore {term_names[name]}")
    return "\n".join(lines) + "\n"


def cfg_to_lark(cfg: CFG) -> str:
    """Lark text for `cfg` where terminal id i is the one-character literal TERMINAL_CHARS[i]."""
    if cfg.n_terminals - 1 > len(TERMINAL_CHARS):
        raise ValueError(f"cfg_to_lark: at most {len(TERMINAL_CHARS)} terminals, got {cfg.n_terminals - 1}")

    def sym(s: int) -> str:
        return json.dumps(TERMINAL_CHARS[s]) if cfg.is_terminal(s) else f"n{s}"

    alternatives: dict[str, list[str]] = {}
    for r in cfg.rules:
        alternatives.setdefault(sym(r.lhs), []).append(" ".join(sym(s) for s in r.rhs))
    used = {sym(s) for r in cfg.rules for s in r.rhs if not cfg.is_terminal(s)}
    return _bnf_text(sym(cfg.start), alternatives, used)


def _bnf_text(start: str, alternatives: dict[str, list[str]], used: set[str]) -> str:
    """`start: <start>`, then one rule per name (alternatives already written as Lark text, sorted by
    name); a name in `used` or `start` without alternatives gets a rule that derives nothing."""
    lines = [f"start: {start}"]
    lines += [f"{lhs}: " + "\n    | ".join(alternatives[lhs]) for lhs in sorted(alternatives)]
    lines += [f"{name}: {name}" for name in sorted((used | {start}) - set(alternatives))]
    return "\n".join(lines) + "\n"


def lexemes_parse(judge: Lark, lexemes: Sequence[tuple[str, Collection[str]]]) -> bool:
    """Does lark's parser -- the judge's own rules, not its lexer -- accept this lexeme sequence?

    Each lexeme is (text, names of the judge's terminals it may be); a name counts only if its pattern
    matches the whole text (Python `re`, as lark uses). True means a document lark rejects differs
    from ours in how its text splits into lexemes only, not in what the rules allow."""
    patterns = {t.name: re.compile(t.pattern.to_regexp(), judge.lexer_conf.g_regex_flags) for t in judge.terminals}
    kinds: dict[tuple[str, ...], str] = {}          # the terminal names a lexeme may be -> its character
    sequence = []
    for text, names in lexemes:
        kind = tuple(sorted(n for n in names if n in patterns and patterns[n].fullmatch(text)))
        if not kind:
            return False
        sequence.append(kinds.setdefault(kind, TERMINAL_CHARS[len(kinds)]))
    symbols = {s.name: f"t{i}" if s.is_term else f"n{i}"
               for i, s in enumerate(dict.fromkeys(s for r in judge.rules for s in (r.origin, *r.expansion)))}
    alternatives: dict[str, list[str]] = {}
    for r in judge.rules:
        alternatives.setdefault(symbols[r.origin.name], []).append(" ".join(symbols[s.name] for s in r.expansion))
    for kind, char in kinds.items():
        for name in kind:
            if name in symbols:
                alternatives.setdefault(symbols[name], []).append(json.dumps(char))
    used = set(symbols.values())
    parser = Lark(_bnf_text(symbols[judge.options.start[0]], alternatives, used), parser="earley", lexer="basic")
    return lark_parses(parser, "".join(sequence))


def terminals_to_text(terminal_ids: tuple[int, ...] | list[int]) -> str:
    return "".join(TERMINAL_CHARS[t] for t in terminal_ids)


class EarleyJudge:
    """Membership by Lark's Earley parser (basic lexer: the grammar's terminals are the tokens)."""

    def __init__(self, lark_text: str, lexer: str = "basic"):
        self.text = lark_text
        self.parser = Lark(lark_text, parser="earley", lexer=lexer, ambiguity="forest")

    @classmethod
    def from_cfg(cls, cfg: CFG) -> "EarleyJudge":
        return cls(cfg_to_lark(cfg))

    def accepts(self, text: str) -> bool:
        try:
            self.parser.parse(text)
        except LarkError:
            return False
        return True

    def accepts_terminals(self, terminal_ids: tuple[int, ...] | list[int]) -> bool:
        return self.accepts(terminals_to_text(terminal_ids))


# ---------------------------------------------------------------- sentences to judge

def min_heights(cfg: CFG) -> dict[int, int]:
    """Height of the lowest derivation tree per productive nonterminal (terminals: 0)."""
    height: dict[int, int] = {}
    changed = True
    while changed:
        changed = False
        for r in cfg.rules:
            hs = [0 if cfg.is_terminal(s) else height.get(s) for s in r.rhs]
            if None not in hs:
                h = 1 + max(hs, default=0)
                if h < height.get(r.lhs, 1 << 30):
                    height[r.lhs] = h
                    changed = True
    return height


def random_sentence(cfg: CFG, rng: random.Random, budget: int = 12) -> tuple[int, ...] | None:
    """A random terminal string of `cfg` (leftmost derivation; past `budget` expansions only the
    rules of least height are taken, so it ends). None if the start symbol derives nothing."""
    height = min_heights(cfg)
    if cfg.start not in height:
        return None
    by_lhs: dict[int, list[tuple[int, ...]]] = {}
    for r in cfg.rules:
        if all(cfg.is_terminal(s) or s in height for s in r.rhs):
            by_lhs.setdefault(r.lhs, []).append(r.rhs)
    out: list[int] = []
    stack = [cfg.start]
    steps = 0
    while stack:
        s = stack.pop()
        if cfg.is_terminal(s):
            out.append(s)
            continue
        alts = by_lhs[s]
        steps += 1
        if steps > budget:
            best = min(1 + max((0 if cfg.is_terminal(x) else height[x] for x in rhs), default=0) for rhs in alts)
            alts = [rhs for rhs in alts
                    if 1 + max((0 if cfg.is_terminal(x) else height[x] for x in rhs), default=0) == best]
        stack.extend(reversed(rng.choice(alts)))
    return tuple(out)


def mutations(sentence: tuple[int, ...], terminals: list[int], rng: random.Random, n: int = 4):
    """`n` random one-edit variants of `sentence` (delete, insert, replace or swap a terminal)."""
    out = []
    for _ in range(n):
        s = list(sentence)
        kind = rng.randrange(4)
        i = rng.randrange(len(s) + 1)
        if kind == 0 and s:
            del s[min(i, len(s) - 1)]
        elif kind == 1 or not s:
            s.insert(i, rng.choice(terminals))
        elif kind == 2:
            s[min(i, len(s) - 1)] = rng.choice(terminals)
        elif len(s) > 1:
            j = min(i, len(s) - 2)
            s[j], s[j + 1] = s[j + 1], s[j]
        out.append(tuple(s))
    return out
