"""A regexp written as one fixed string (a JSON Schema's keys and values: /"name"/) is compiled as
that string, and its DFA is the one the regexp compiles to."""

import random
import re

import numpy as np
import pytest

from glrmask_cli.lexer.dfa import literal_dfa
from glrmask_cli.lexer.scanner import _pattern_dfa, _regexp_literal
from glrmask_cli.limits import DEFAULTS

ALPHABET = 'ab-_. /\\"*+?()[]{}|^$#&~\t\n,:;é€\U0001F600\x01'


def _compiled(pattern: str):
    return _pattern_dfa(pattern, frozenset(), DEFAULTS.max_pattern_nfa_states, DEFAULTS.max_pattern_dfa_states)


def test_escaped_strings_compile_to_the_same_dfa():
    rng = random.Random(5)
    texts = ['"name"', '"planning-note-operation"', "a.b", "\\", '"\\u0001"', "€ 1"]
    texts += ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 12))) for _ in range(200)]
    for text in texts:
        pattern = re.escape(text)
        assert _regexp_literal(pattern) == text, pattern
        fast, slow = literal_dfa(text.encode("utf-8")), _compiled(pattern)
        assert np.array_equal(fast.trans, slow.trans) and np.array_equal(fast.close, slow.close), pattern


@pytest.mark.parametrize("pattern", [r"a.b", r"\d+", r"[ab]", r"a|b", r"ab?", r"(ab)", r"a{2}", r"\w", r"^a",
                                     r"\u0041", r"\x41", r"\n"])
def test_other_regexps_are_not_read_as_strings(pattern):
    assert _regexp_literal(pattern) is None
