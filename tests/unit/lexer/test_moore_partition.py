"""`moore_partition` (the lexer's minimization) and `moore_rounds` (its partitions round by round)
against the textbook refinement written plainly here: the same partitions on random automata, with
chains that need a round per state (as a bounded terminal's counting states do), whether its rounds
run whole or on the states near the last split."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from glrmask_cli.lexer import dfa
from glrmask_cli.lexer.dfa import moore_partition, moore_rounds


def textbook_rounds(trans: np.ndarray, labels: np.ndarray) -> list[list[int]]:
    """The labels, then each refinement by (own block, successors' blocks) until nothing splits,
    with Python tuples."""
    rounds = [labels.tolist()]
    while True:
        block = rounds[-1]
        signatures = [(block[s], *(block[t] for t in row)) for s, row in enumerate(trans.tolist())]
        numbers: dict[tuple[int, ...], int] = {}
        refined = [numbers.setdefault(sig, len(numbers)) for sig in signatures]
        if len(numbers) == len(set(block)):
            return rounds
        rounds.append(refined)


def textbook(trans: np.ndarray, labels: np.ndarray) -> list[int]:
    return textbook_rounds(trans, labels)[-1]


def same_partition(a: np.ndarray, b: list[int]) -> bool:
    pairs = set(zip(a.tolist(), b))
    return len(pairs) == len(set(a.tolist())) == len(set(b))


@pytest.mark.parametrize("whole_rounds_split", [1, dfa._WHOLE_ROUNDS_SPLIT, 10**9])
@given(st.integers(1, 70), st.integers(1, 5), st.integers(1, 3), st.booleans(), st.integers(0, 2**32 - 1))
def test_partition_is_the_textbooks(whole_rounds_split, n, k, n_labels, chain, seed):
    rng = np.random.default_rng(seed)
    trans = rng.integers(0, n, size=(n, k))
    if chain:                        # byte 0 walks a chain to the last state: up to n rounds
        trans[:, 0] = np.minimum(np.arange(n) + 1, n - 1)
    labels = rng.integers(0, n_labels, size=n)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dfa, "_WHOLE_ROUNDS_SPLIT", whole_rounds_split)
        block = moore_partition(trans, labels)
    assert same_partition(block, textbook(trans, labels))
    assert sorted(set(block.tolist())) == list(range(int(block.max()) + 1))      # numbered 0..k-1


@pytest.mark.parametrize("whole_rounds_split", [1, 10**9])
@given(st.integers(1, 40), st.integers(1, 4), st.integers(1, 3), st.booleans(), st.integers(0, 2**32 - 1))
def test_each_round_is_the_textbooks(whole_rounds_split, n, k, n_labels, chain, seed):
    """Round r's partition: states alike along every string of at most r symbols, as `_alike_for`
    reads them; the last one is stable."""
    rng = np.random.default_rng(seed)
    trans = rng.integers(0, n, size=(n, k))
    if chain:
        trans[:, 0] = np.minimum(np.arange(n) + 1, n - 1)
    labels = rng.integers(0, n_labels, size=n)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dfa, "_WHOLE_ROUNDS_SPLIT", whole_rounds_split)
        rounds = [block.copy() for block in moore_rounds(trans, labels)]
    expected = textbook_rounds(trans, labels)
    assert len(rounds) == len(expected)
    for block, plain in zip(rounds, expected):
        assert same_partition(block, plain)


def test_every_state_of_a_counting_chain_is_its_own_block():
    """A chain of 300 states with only the last one accepting: every state is its own block."""
    n = 300
    trans = np.minimum(np.arange(n) + 1, n - 1)[:, None]
    labels = (np.arange(n) == n - 1).astype(np.int64)
    assert len(set(moore_partition(trans, labels).tolist())) == n
