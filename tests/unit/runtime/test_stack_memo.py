"""glrmask_runtime.stack_memo: a result filed for some stacks is returned exactly for the stacks that
agree with them wherever the computation looked, and the stacks it made are rebuilt over the real
cells. The oracle is the same computation run directly on the real stacks (no memo, no shadows)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from devtools.brute_force import sampled_states
from devtools.builds import built
from glrmask_runtime.glr import GSSNode, iter_paths
from glrmask_runtime.stack_memo import Miss, Shadows, StackMemo, realize
from tests.support.masks import assert_masks_equal


def random_stacks(rng: random.Random) -> tuple[GSSNode, ...]:
    """A small graph-structured stack over 3 states (so that different stacks often agree near the
    top): cells mostly with one parent, some with two (merges, paths that meet again), 1-2 tops."""
    cells = [GSSNode(rng.randrange(3))]
    for _ in range(rng.randrange(0, 9)):
        parents = {id(p): p for p in rng.sample(cells[-3:], k=min(len(cells[-3:]), 1 + (rng.random() < 0.2)))}
        cells.append(GSSNode(rng.randrange(3), tuple(parents.values())))
    tops = {id(c): c for c in rng.sample(cells[-2:], k=min(2, len(cells), 1 + (rng.random() < 0.3)))}
    return tuple(tops.values())


def compute(tops: tuple[GSSNode, ...], lexer_state: int) -> tuple[tuple, tuple[GSSNode, ...]]:
    """A stand-in for a mask computation: reads down each top while the state is odd (how deep
    depends on what it reads), then a GLR-like step: pops top.state + lexer_state cells over every
    path (cells met twice are taken once, by identity) and pushes a new cell on each one exposed."""
    read, made = [], []
    for top in tops:
        node, path = top, [top.state]
        while node.state % 2 == 1 and node.parents:
            node = node.parents[0]
            path.append(node.state)
        read.append((tuple(path), len(top.parents)))
        level = [top]
        for _ in range((top.state + lexer_state) % 3):
            level = list({id(p): p for n in level for p in n.parents}.values())
        made += [GSSNode(10 + exposed.state, (exposed,)) for exposed in level]
    return tuple(read), tuple(made)


def paths(stacks: tuple[GSSNode, ...]) -> list[tuple[int, ...]]:
    return sorted(iter_paths(stacks))


@pytest.mark.parametrize("seed", range(6))
def test_memo_answers_what_the_computation_gives_on_the_real_stacks(seed):
    rng = random.Random(seed)
    memo = StackMemo()
    hits = 0
    for _ in range(3000):
        stacks, q = random_stacks(rng), rng.randrange(2)
        want, want_made = compute(stacks, q)
        found = memo.lookup(q, stacks)
        if isinstance(found, Miss):
            shadows = Shadows(stacks)
            value, made = compute(shadows.tops, q)
            found = memo.file(found, shadows, value, {7: made})
        else:
            hits += 1
        (value, templates), seen = found
        assert value == want
        assert paths(realize(templates[7], seen)) == paths(want_made) if want_made else 7 not in templates
    assert hits > 1000          # stacks over 3 states agree near the top often: the memo is used


def test_a_full_memo_is_emptied_and_limit_zero_keeps_nothing():
    memo = StackMemo(limit=3)
    rng = random.Random(1)
    for _ in range(50):
        stacks = random_stacks(rng)
        found = memo.lookup(0, stacks)
        if isinstance(found, Miss):
            shadows = Shadows(stacks)
            memo.file(found, shadows, compute(shadows.tops, 0)[0], {})
        assert len(memo) <= 3
    memo.clear()
    assert len(memo) == 0 and isinstance(memo.lookup(0, (GSSNode(1),)), Miss)


AMBIGUOUS = """
start: e
e: e "+" e | e "*" e | "(" e ")" | NUMBER
NUMBER: /[0-9]+/
%ignore " "
"""
EXPRESSIONS = [b"1+2*3", b"(1 + 22) * 333 + 4", b"((1))", b"1*2*3*4+5+6", b"12 + (3*(4+5)) * 6", b"7"]


@pytest.fixture(scope="module")
def ambiguous(tmp_path_factory):
    path = tmp_path_factory.mktemp("memo") / "ambiguous.lark"
    path.write_text(AMBIGUOUS)
    b = built(path, "small-gpt2", layout="runtime-close", lexer="basic")
    assert b.artifact.n_runtime_closes > 0                                # masks close lexemes at run time
    return b


def _masks(b, seed: int) -> list[np.ndarray]:
    return [m.mask().copy() for m in sampled_states(b, EXPRESSIONS, 60, seed=seed)]


def test_masks_through_the_memo_equal_brute_force_cold_and_warm(ambiguous):
    """Graph-structured stacks (the grammar is ambiguous) with runtime closes: the memo's masks equal
    brute force when it is empty, while it learns (where a lookup misses a second time), when it
    answers from what it learnt, and when it is off."""
    memo = ambiguous.artifact.mask_memo
    memo.clear()
    sizes = []
    for _ in range(6):                      # the same states again until nothing new is learnt
        assert_masks_equal(ambiguous, sampled_states(ambiguous, EXPRESSIONS, 60, seed=3))
        sizes.append(len(memo))
        if len(sizes) > 2 and sizes[-1] == sizes[-2]:
            break
    assert 0 < sizes[-1] == sizes[-2]       # it learnt, and then answered every mask
    warm = _masks(ambiguous, 4)
    memo.limit, limit = 0, memo.limit
    try:
        memo.clear()
        off = _masks(ambiguous, 4)
        assert len(memo) == 0
    finally:
        memo.limit = limit
    assert all(np.array_equal(a, b) for a, b in zip(warm, off, strict=True))


def test_commit_after_a_remembered_mask_gives_the_parsers_stacks(ambiguous):
    """`commit` takes the stacks after a close from the memo's templates: the parse goes on exactly
    as the recognizer's own."""
    art = ambiguous.artifact
    tokens = [ambiguous.vocab.token_bytes.index(piece) for piece in (b"1", b"+", b"2", b"*", b"3")]
    for _ in range(3):                      # learnt the second time round, from the memo the third
        m = art.matcher()
        state = art.recognizer.initial()
        for token in tokens:
            m.mask()
            m.commit(token)
            state = art.recognizer.feed(state, art.token_bytes(token))
            assert paths(m.parse_state.stacks) == paths(state.stacks)
        assert m.is_accepting()
