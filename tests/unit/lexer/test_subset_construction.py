"""The combined lexer's subset construction numbers states by content, not by hash: with every
successor's hash forced equal (each one a collision, resolved by comparing the keys themselves) the
lexer comes out identical, retyped literals (lark's unless lists) and several terminals per state
included."""

from __future__ import annotations

import os

import numpy as np
import pytest

from glrmask_cli.grammar import load_grammar
from glrmask_cli.lexer import build_lexer, scanner

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

KEYWORDS = r"""
start: item+
item: "if" NAME | "in" NUMBER | NAME "=" STRING | "iffy"
NAME: /[a-z_][a-z0-9_]*/
NUMBER: /[0-9]+(\.[0-9]+)?/
STRING: /"[^"]*"/
%ignore " "
"""


def _tables(path: str):
    spec = load_grammar(path)
    return build_lexer(spec.terminals, spec.ignore, path).tables


@pytest.mark.parametrize("grammar", ["keywords", "json"])
def test_colliding_hashes_give_the_same_lexer(grammar, tmp_path, monkeypatch):
    if grammar == "keywords":
        path = str(tmp_path / "keywords.lark")
        with open(path, "w") as f:
            f.write(KEYWORDS)
    else:
        path = os.path.join(ROOT, "grammars", "json.lark")
    expected = _tables(path)
    monkeypatch.setattr(scanner, "hash_weights", lambda n: np.zeros(n, np.uint64))
    collided = _tables(path)
    assert expected.n_states > 10
    for field in ("transitions", "close_sets", "viable_sets", "term_set_offsets", "term_set_items", "ignored"):
        assert np.array_equal(getattr(expected, field), getattr(collided, field)), field
