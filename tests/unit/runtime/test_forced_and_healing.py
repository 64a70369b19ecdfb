"""`Matcher.forced_bytes()` (fast-forwarding) and `mask_with_prefix()` (token healing).

Judge for forced bytes: a finite grammar's whole language, enumerated by lark; after a prefix, the
forced bytes are the longest common prefix of what its sentences continue with (none if the prefix
is itself a sentence)."""

from __future__ import annotations

import itertools
import os

import lark
import numpy as np

import glrmask_cli
from devtools.builds import JSON_GRAMMAR, built
from devtools.lark_judge import lark_parses

FINITE = 'start: "ab" ("cd" | "ce") "f" | "abx" | "zz" "y"\n'


def _language(grammar: str, alphabet: str, max_length: int) -> set[str]:
    judge = lark.Lark(grammar, parser="lalr")
    return {"".join(chars) for n in range(1, max_length + 1) for chars in itertools.product(alphabet, repeat=n)
            if lark_parses(judge, "".join(chars))}


def test_forced_bytes_are_what_every_sentence_continues_with():
    sentences = _language(FINITE, "abcdefxyz", 5)
    assert sentences == {"abcdf", "abcef", "abx", "zzy"}
    artifact = glrmask_cli.compile_grammar(FINITE, tokenizer="gpt2").load()
    prefixes = {s[:k] for s in sentences for k in range(len(s) + 1)}
    for prefix in sorted(prefixes):
        rest = [s[len(prefix):] for s in sentences if s.startswith(prefix)]
        expected = "" if "" in rest else os.path.commonprefix(rest)
        matcher = artifact.matcher()
        matcher.commit_bytes(prefix.encode())
        assert matcher.forced_bytes() == expected.encode(), prefix
    assert artifact.matcher().forced_bytes(limit=0) == b""


def test_mask_with_prefix_keeps_the_allowed_tokens_that_start_with_it():
    b = built(JSON_GRAMMAR, "gpt2")
    matcher = b.artifact.matcher()
    matcher.commit_bytes(b"[")
    healed = matcher.mask_with_prefix(b"tr")
    expected = np.array([allowed and data.startswith(b"tr")
                         for allowed, data in zip(matcher.mask(), b.vocab.token_bytes)])
    assert np.array_equal(healed, expected) and healed.sum() > 1
    assert np.array_equal(matcher.mask_with_prefix(b""), matcher.mask())
