"""Test helper: TerminalSpecs straight from lark's loader for the corpus grammars (not via GrammarSpec)."""

from __future__ import annotations

import glob
import os

import lark
from lark.load_grammar import load_grammar

from glrmask_cli.grammar import TerminalSpec, terminal_spec

LARK_GRAMMARS = os.path.join(os.path.dirname(lark.__file__), "grammars")
CORPUS = "/work/shared/corpora/grammars"
JSON_LARK = os.path.join(CORPUS, "lark-1.3.1-sdist", "composition", "json.lark")


def corpus_grammar_paths() -> list[str]:
    own = [os.path.join(LARK_GRAMMARS, f) for f in ("common.lark", "python.lark", "lark.lark")]
    return own + sorted(glob.glob(os.path.join(CORPUS, "**", "*.lark"), recursive=True))


def lark_terminal_specs(path: str) -> tuple[list[TerminalSpec], list[str]]:
    """All terminals (sorted by name) and ignore list of a grammar, via lark's own loader."""
    text = open(path, encoding="utf-8").read()
    paths = [LARK_GRAMMARS, os.path.dirname(path)]
    g, _ = load_grammar(text, path, paths, False)
    names = [name for name, _ in g.term_defs]
    starts = [name for name, *_ in g.rule_defs]
    if not starts:                      # a terminal library such as common.lark
        text = "start: " + " | ".join(n for n in names if not n.startswith("_")) + "\n"
        text += "%import common (" + ", ".join(names) + ")\n"
        g, _ = load_grammar(text, "<wrapper>", paths, False)
        starts = ["start"]
    terms, _rules, ignore = g.compile(starts[:1], set(names))
    return sorted((terminal_spec(t, names) for t in terms), key=lambda s: s.name), list(ignore)
