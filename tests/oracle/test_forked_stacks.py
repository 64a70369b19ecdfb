"""Masks on forked stacks (a graph-structured stack whose tops share a DWA root) equal brute force,
whichever way the walks go: each stack as a chain (a few stacks) or one walk that remembers every
(cell, DWA state) it has been at (many)."""

from __future__ import annotations

import pytest

import glrmask_runtime.matcher
from devtools.brute_force import sampled_states
from devtools.builds import built
from tests.support.masks import assert_masks_equal

# After "aaa" six readings are alive at once (which w it is shows only at the end); w6 also forks
# again after "b".
FORKING_GRAMMAR = """
start: w1 | w2 | w3 | w4 | w5 | w6
w1: "a" w1 | "a" "1"
w2: "a" w2 | "a" "2"
w3: "a" w3 | "a" "3"
w4: "a" w4 | "a" "4"
w5: "a" w5 | "b" "5"
w6: "a" w6 | "b" "6" w6 | "6"
%ignore " "
"""
DOCUMENTS = [b"aaaa1", b"a a a 2", b"aaaaaaaaaaaaa3", b"aaab5", b"aab6a6", b"aaaa 4"]


@pytest.mark.parametrize("linear_starts", [0, 2, 8], ids=["remembering", "mixed", "chains"])
@pytest.mark.parametrize("layout", ["one", "runtime-close", "grouped"])
def test_masks_on_forked_stacks_equal_brute_force(tmp_path, monkeypatch, layout, linear_starts):
    grammar = tmp_path / "forking.lark"
    grammar.write_text(FORKING_GRAMMAR)
    b = built(grammar, "small-gpt2", layout=layout)
    b.artifact.forget()
    monkeypatch.setattr(glrmask_runtime.matcher, "_LINEAR_STARTS", linear_starts)
    states = sampled_states(b, DOCUMENTS, 60, seed=3)
    assert max(sum(len(t.stacks) for t in b.artifact.threads(m.parse_state)) for m in states) >= 6
    assert_masks_equal(b, states)
