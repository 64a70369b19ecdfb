"""Oracle 3 of `make exactness` (docs/ARCHITECTURE.md, "Exactness"): seeded random walks that sample
tokens from the mask must produce text that lark parses whenever they end with EOS, and must never reach
a dead end (an empty mask without EOS)."""

from __future__ import annotations

import random

import pytest
from lark import Lark

from devtools.brute_force import random_walk
from devtools.builds import JSON_GRAMMAR, LARK_GRAMMARS, built


def run_walks(b, judge: Lark, n_walks: int, seed: int, max_steps: int = 80, steer_after: int = 12):
    rng = random.Random(seed)
    endings = {"eos": 0, "dead": 0, "length": 0}
    for _ in range(n_walks):
        tokens, ending = random_walk(b.artifact.matcher(), rng, max_steps, steer_after, b.artifact.eos_token_ids)
        endings[ending] += 1
        text = b.vocab.decode_bytes(tokens)
        assert ending != "dead", f"dead end after {text!r}"
        if ending == "eos":
            judge.parse(text.decode("utf-8"))   # raises if lark rejects the output
    return endings


@pytest.mark.parametrize("tokenizer", ["small-gpt2", "gpt2"])
def test_json_walks_parse(tokenizer):
    endings = run_walks(built(JSON_GRAMMAR, tokenizer), Lark(JSON_GRAMMAR.read_text(), parser="lalr"), 60, seed=7)
    assert endings["eos"] >= 30, endings


def test_lark_grammar_walks_parse():
    grammar = LARK_GRAMMARS / "lark.lark"
    judge = Lark(grammar.read_text(), parser="earley", lexer="dynamic")
    endings = run_walks(built(grammar, "small-gpt2"), judge, 30, seed=9)
    assert endings["eos"] >= 2, endings
