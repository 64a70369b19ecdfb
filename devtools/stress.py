"""Documents generated here: the parser stress grammars with their sentences, stdlib expressions.

`STRESS` maps a name to Lark text (ambiguity, right/hidden-left recursion, epsilon rules, dangling
else); `stress_sentences` gives seeded random sentences plus byte mutations (some valid, some not:
lark decides). `stdlib_expressions` takes one-line expressions from the first 30 stdlib modules via `ast`.
"""

from __future__ import annotations

import ast
import glob
import os
import random
from pathlib import Path

from devtools.cfg_text import mutate, random_sentence
from glrmask_cli.grammar import GrammarSpec
from glrmask_cli.parser.cfg import build_cfg

STRESS = {
    "ambiguous": 'start: e\ne: e "+" e | e "*" e | "n" | "(" e ")"',
    "right_recursive": 'start: l\nl: "a" l | "a" "," l | "b" | "[" l "]" l',
    "epsilon_heavy": 'start: a b a\na: "x" a b | b\nb: "y" b "z" | c\nc: "w" |',
    "hidden_left_recursive": 'start: s\ns: a s "x" | "y" | b s "z"\na: "u" |\nb: a a',
    "dangling_else": 'start: s\ns: "i" s | "i" s "e" s | "o" | "{" s* "}"',
}


def stress_sentences(spec: GrammarSpec, n: int, seed: int) -> list[bytes]:
    """Up to `n` random sentences of `spec` (literal terminals only) and two byte mutations of each."""
    cfg = build_cfg(spec)
    text_of = [t.value for t in spec.terminals]
    rng = random.Random(seed)
    found: dict[bytes, None] = {}
    for _ in range(n * 5):
        s = random_sentence(cfg, rng, max_depth=7)
        if s is not None and len(found) < n:
            found["".join(text_of[t] for t in s).encode()] = None
    alphabet = sorted({c for t in text_of for c in t.encode()})
    for s in list(found):
        for _ in range(2):
            mutated = mutate(tuple(alphabet.index(b) for b in s), len(alphabet) + 1, rng)
            found[bytes(alphabet[i] for i in mutated)] = None
    return list(found)


def stdlib_expressions(n: int) -> list[bytes]:
    """`n` distinct one-line expressions (longer than 3 bytes) from the first 30 stdlib modules, shuffled."""
    found = set()
    for f in sorted(glob.glob(os.path.dirname(os.__file__) + "/*.py"))[:30]:
        src = Path(f).read_text(encoding="utf-8")
        lines = src.splitlines()
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.expr) and node.lineno == node.end_lineno:
                seg = lines[node.lineno - 1].encode()[node.col_offset:node.end_col_offset]
                if len(seg) > 3:
                    found.add(seg)
    exprs = sorted(found)
    random.Random(3).shuffle(exprs)
    return exprs[:n]
