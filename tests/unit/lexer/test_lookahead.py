"""A negative lookahead of fixed strings (a JSON Schema object's other keys) built as a product gives
the DFA the subset construction gives, and the shapes it does not cover are left to that."""

import re

import numpy as np
import pytest

from glrmask_cli.lexer.dfa import determinize, minimize
from glrmask_cli.lexer.lookahead import excluding_dfa
from glrmask_cli.lexer.nfa import build_nfa
from glrmask_cli.lexer.syntax import parse_pattern
from glrmask_cli.limits import DEFAULTS

BODY = r'(?:[^"\\\x00-\x1f]|\\["\\\/bfnrt]|\\u[0-9a-fA-F]{4})*"'
LIMITS = (DEFAULTS.max_pattern_nfa_states, DEFAULTS.max_pattern_dfa_states)


def _other_keys(*keys: str) -> str:
    return '"(?!(?:' + "|".join(re.escape(k) for k in keys) + ')")' + BODY


@pytest.mark.parametrize("pattern", [
    _other_keys("name", "type"),
    _other_keys("a", "ab", "abc"),                       # keys that are prefixes of others
    _other_keys("é", "€uro", "\U0001F600"),              # multi-byte UTF-8
    _other_keys('say \\"hi\\"', "tab\\t"),               # escaped characters in a key's JSON text
    _other_keys(*[f"field{i}" for i in range(40)]),
    "ab(?!c|de)[a-z]+;",                                 # a longer prefix, and excluded strings the rest may hold
    "(?!x)[a-z]{1,3}!",                                  # no prefix
])
def test_the_product_is_the_subset_construction(pattern):
    tree = parse_pattern(pattern)
    product = excluding_dfa(tree, *LIMITS)
    assert product is not None, "not built as a product: a weak case"
    fast, slow = minimize(product), minimize(determinize(build_nfa(tree, LIMITS[0]), LIMITS[1]))
    assert np.array_equal(fast.trans, slow.trans) and np.array_equal(fast.close, slow.close)


@pytest.mark.parametrize("pattern", [
    "a(?!bc)[a-z]",            # a match may end while the lookahead is still undecided
    "a(?=b)[a-z]+",            # a positive lookahead
    "a(?!b+)[a-z]+",           # excluded strings that are not a few fixed ones
    "(?:a|b)(?!c)[a-z]+",      # a prefix that is not one string
    "a(?!b)[a-z]+(?!c)x",      # a second lookaround
    "[a-z]+",                  # none
])
def test_other_shapes_are_left_to_the_subset_construction(pattern):
    assert excluding_dfa(parse_pattern(pattern), *LIMITS) is None
