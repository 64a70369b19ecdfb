"""glrmask_runtime.stack_memo and the parser's interned cells: equal stacks are the same cells however
they were reached, a mask remembered for them equals brute force, and `commit` goes on from the
remembered stacks exactly as the recognizer does. The oracle is brute force (bytes fed to the
recognizer) and the recognizer's own parse."""

from __future__ import annotations

import numpy as np
import pytest

from devtools.brute_force import sampled_states
from devtools.builds import built
from glrmask_runtime.glr import GSSNode, iter_paths
from glrmask_runtime.stack_memo import StackMemo
from tests.support.ambiguous import AMBIGUOUS_GRAMMAR, EXPRESSIONS
from tests.support.masks import assert_masks_equal


def paths(stacks: tuple[GSSNode, ...]) -> list[tuple[int, ...]]:
    return sorted(iter_paths(stacks))


def test_a_full_memo_keeps_the_newest_and_limit_zero_keeps_nothing():
    memo = StackMemo(limit=3)
    stacks = [(GSSNode(s),) for s in range(10)]
    for k, s in enumerate(stacks):
        memo.keep(s, k)
        assert len(memo) == min(k + 1, 3)
    assert [memo.get(s) for s in stacks] == [None] * 7 + [7, 8, 9]      # the oldest evicted one by one
    assert memo.get((GSSNode(9),)) is None     # by the cells themselves
    memo.clear()
    assert len(memo) == 0 and memo.get(stacks[-1]) is None
    memo.limit = 0
    memo.keep(stacks[0], 0)
    assert len(memo) == 0




@pytest.fixture(scope="module")
def ambiguous(tmp_path_factory):
    path = tmp_path_factory.mktemp("memo") / "ambiguous.lark"
    path.write_text(AMBIGUOUS_GRAMMAR)
    b = built(path, "small-gpt2", layout="runtime-close", lexer="basic")
    assert b.artifact.n_runtime_closes > 0                                # masks close lexemes at run time
    return b


def _masks(b, seed: int) -> list[np.ndarray]:
    return [m.mask().copy() for m in sampled_states(b, EXPRESSIONS, 60, seed=seed)]


def test_masks_through_the_memo_equal_brute_force_cold_and_warm(ambiguous):
    """Graph-structured stacks (the grammar is ambiguous) with runtime closes: the memo's masks equal
    brute force when it is empty, while it learns (each mask it computes), when it answers from
    what it learnt, and when it is off."""
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


def test_masks_stay_exact_while_every_bounded_cache_evicts(ambiguous, monkeypatch):
    """With every runtime cache a few entries long (interned cells, remembered GLR steps, scanner
    runs, row combinations, unpacked rows, the memo), they evict all the time: equal stacks become distinct
    cells and the memo misses, and the masks still equal brute force, the caches within bounds."""
    art = ambiguous.artifact
    parser, scanner = art.recognizer.parser, art.recognizer.scanner
    caches = [(parser._interned, 8), (parser._steps, 4), (scanner._runs, 4), (art.combined_masks, 2),
              (art._bool_rows, 2), (art.mask_memo, 3)]
    for cache, limit in caches:
        monkeypatch.setattr(cache, "limit", limit)
    art.forget()
    bounds = [max(limit, len(cache)) for cache, limit in caches]     # earlier tests may have filled some
    for seed in (5, 6):
        assert_masks_equal(ambiguous, sampled_states(ambiguous, EXPRESSIONS, 60, seed=seed))
        assert all(len(cache) <= bound for (cache, _), bound in zip(caches, bounds))
    art.forget()


def test_commit_after_a_remembered_mask_gives_the_parsers_stacks(ambiguous):
    """`commit` takes the stacks after a close from the memo: the parse goes on exactly as the
    recognizer's own."""
    art = ambiguous.artifact
    tokens = [ambiguous.vocab.token_bytes.index(piece) for piece in (b"1", b"+", b"2", b"*", b"3")]
    art.mask_memo.clear()
    for _ in range(2):                      # remembered the first time round, from the memo the second
        m = art.matcher()
        state = art.recognizer.initial()
        for token in tokens:
            m.mask()
            m.commit(token)
            state = art.recognizer.feed(state, art.token_bytes(token))
            assert paths(m.parse_state.stacks) == paths(state.stacks)
        assert m.is_accepting()


def test_equal_stacks_are_the_same_cells_however_they_were_reached(ambiguous):
    """The parser interns cells: the same text fed in different pieces, and two different texts
    that leave the parser in the same place, give stacks of the very same cells (what the memo
    keys on), with the paths the recognizer's own parse has."""
    r = ambiguous.artifact.recognizer

    def fed(*pieces: bytes):
        state = r.initial()
        for piece in pieces:
            state = r.feed(state, piece)
        return state

    whole, split, other = fed(b"(1+2)*"), fed(b"(1", b"+", b"2)", b"*"), fed(b"(1+2) *")
    assert whole.stacks == split.stacks == other.stacks
    assert all(a is b for a, b in zip(whole.stacks, other.stacks, strict=True))
    assert paths(whole.stacks) == paths(fed(b"(", b"1+2", b")*").stacks)
    assert whole.stacks != fed(b"((1+2)*").stacks      # one more open parenthesis below


def test_forget_empties_what_masks_and_commits_learnt(ambiguous):
    """`Artifact.forget` empties the stack memo, the row combinations and the parser's remembered
    steps; the masks computed afterwards are the same."""
    art = ambiguous.artifact
    before = _masks(ambiguous, 6)
    assert len(art.mask_memo) and art.recognizer.parser._steps
    art.forget()
    assert not len(art.mask_memo) and not art.combined_masks and not art.recognizer.parser._steps
    after = _masks(ambiguous, 6)
    assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))


def test_threads_sharing_an_artifact_get_the_masks_one_thread_gets(ambiguous, monkeypatch):
    """Matchers on four threads share the artifact's caches (interned cells, remembered steps,
    scanner runs, row combinations, unpacked rows, the memo), each a few entries long so that they evict all the
    time, with the interpreter switching threads every microsecond: every thread's masks are those
    computed on one thread."""
    import sys
    import threading

    seeds = range(20, 24)
    alone = {seed: _masks(ambiguous, seed) for seed in seeds}
    art = ambiguous.artifact
    parser, scanner = art.recognizer.parser, art.recognizer.scanner
    for cache, limit in [(parser._interned, 8), (parser._steps, 4), (scanner._runs, 4), (art.combined_masks, 2),
                         (art._bool_rows, 2), (art.mask_memo, 3)]:
        monkeypatch.setattr(cache, "limit", limit)
    art.forget()
    interval = sys.getswitchinterval()
    found: dict[int, list[np.ndarray]] = {}
    failures: list[BaseException] = []

    def work(seed: int) -> None:
        try:
            found[seed] = _masks(ambiguous, seed)
        except BaseException as e:       # noqa: BLE001 - re-raised on the main thread
            failures.append(e)

    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(seed,)) for seed in seeds]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
        art.forget()
    assert not failures, failures
    for seed in seeds:
        assert len(found[seed]) == len(alone[seed])
        assert all(np.array_equal(a, b) for a, b in zip(found[seed], alone[seed], strict=True)), seed
