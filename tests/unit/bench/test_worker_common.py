"""bench/workers/worker_common: the replay loop's verdicts, what it keeps and the min over replays, on a toy
engine (a*b then EOS) with a real or a scripted clock."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.tokenizers import load_ranks, tokenizer_spec
from bench.workers import worker_common as wc
from bench.workloads import SHARED

A, B, EOS = 0, 1, 40          # EOS in the second bitmask word, to exercise the word/bit layout


class ToyEngine:
    """Language a* b: state = 'open' or 'done'; commit(EOS) is never replayed (EOS is only checked)."""

    version = "toy"

    def new_state(self) -> dict:
        return {"done": False}

    def fill(self, state: dict, bitmask: np.ndarray) -> None:
        bitmask[0] = 0
        allowed = [EOS] if state["done"] else [A, B]
        for t in allowed:
            bitmask[0, t >> 5] |= np.int32(1 << (t & 31))

    def commit(self, state: dict, token_id: int) -> bool:
        if state["done"] or token_id not in (A, B):
            return False
        state["done"] = token_id == B
        return True


def job(docs: list[list[int]], replays: int = 1) -> dict:
    return {"tokenizer": {"eos_ids": [EOS], "vocab_size": 64}, "warmup_docs": 1, "replays": replays,
            "documents": [{"id": f"d{i}", "tokens": t} for i, t in enumerate(docs)]}


def test_verdicts_and_kept_latencies() -> None:
    out = wc.replay_all(ToyEngine(), job([[A, A, B], [B, A], [A, A], [B]]))
    verdicts = {d["id"]: d for d in out["documents"]}
    assert (verdicts["d0"]["status"], verdicts["d0"]["steps"]) == ("ok", 3)
    step, ns, token = verdicts["d0"]["slowest_commit"]
    assert 0 <= step < 3 and token == [A, A, B][step] and ns >= 0
    assert 0 <= verdicts["d0"]["slowest_mask"][0] <= 3          # 3 token steps + the EOS check
    assert verdicts["d1"]["status"] == "rejected" and verdicts["d1"]["step"] == 1
    assert "not in mask" in verdicts["d1"]["reason"]
    assert verdicts["d2"] == {"id": "d2", "status": "rejected", "step": 2, "reason": "no EOS id in the final mask"}
    assert verdicts["d3"]["status"] == "ok"
    # only accepted documents are timed: 3+1 commits, (3+1)+(1+1) masks (one more per document for EOS)
    assert len(out["commit_ns"]) == 4 and len(out["mask_ns"]) == 6
    assert all(isinstance(x, int) and x >= 0 for x in out["mask_ns"] + out["commit_ns"])


def test_replays_time_every_pass_but_report_each_document_once() -> None:
    out = wc.replay_all(ToyEngine(), job([[A, B], [B]], replays=3))
    assert len(out["documents"]) == 2 and out["replays"] == 3 and out["short_of_replays"] == 0
    # single pass: the first pass only; min: one value per step, as many steps as one pass
    assert len(out["commit_ns"]) == 3 and len(out["mask_ns"]) == 5
    assert len(out["commit_min_ns"]) == 3 and len(out["mask_min_ns"]) == 5
    assert all(d["replays"] == 3 for d in out["documents"])
    assert len(out["floor_ns"]) == len(out["floor_min_ns"]) == 5


class LearningEngine(ToyEngine):
    """Counts the masks it fills since it last forgot (an engine with a memo learnt from documents)."""

    def __init__(self) -> None:
        self.filled_since_forgetting: list[int] = []
        self.filled = 0

    def before_pass(self) -> None:
        self.filled_since_forgetting.append(self.filled)
        self.filled = 0

    def fill(self, state: dict, bitmask: np.ndarray) -> None:
        self.filled += 1
        super().fill(state, bitmask)


def test_an_engine_forgets_before_every_timed_pass_not_during_one() -> None:
    engine = LearningEngine()
    wc.replay_all(engine, job([[A, B], [B]], replays=3))
    # warm-up (1 document: 3 masks), then before each of 3 passes; each pass fills 5 masks
    assert engine.filled_since_forgetting == [3, 5, 5] and engine.filled == 5


class FakeClock:
    """perf_counter_ns that only moves when the engine says a call took time (exact latencies)."""

    def __init__(self) -> None:
        self.now = 0

    def perf_counter_ns(self) -> int:
        return self.now

    @staticmethod
    def monotonic() -> float:
        return 0.0


class NoisyEngine(ToyEngine):
    """Every fill costs 100 ns, every commit 50 ns, plus `noise[(pass, document, step)]` on a fill."""

    def __init__(self, clock: FakeClock, noise: dict[tuple[int, int, int], int]) -> None:
        self.clock, self.noise = clock, noise
        self.calls: dict[int, int] = {}          # document (by its first token list id) -> replays begun
        self.doc, self.step, self.pass_ = 0, 0, 0

    def new_state(self) -> dict:
        state = super().new_state()
        state["step"] = 0
        return state

    def fill(self, state: dict, bitmask: np.ndarray) -> None:
        super().fill(state, bitmask)
        self.clock.now += 100 + self.noise.get((self.pass_, self.doc, state["step"]), 0)

    def commit(self, state: dict, token_id: int) -> bool:
        self.clock.now += 50
        state["step"] += 1
        return super().commit(state, token_id)


def test_min_over_replays_drops_noise_that_single_pass_keeps(monkeypatch) -> None:
    clock = FakeClock()
    engine = NoisyEngine(clock, {(0, 0, 1): 10_000, (1, 0, 2): 7_000, (1, 1, 0): 3_000, (2, 1, 0): 5_000})
    original = wc.replay_document
    seen: dict[int, int] = {}

    def replay(eng, tokens, *args, **kwargs):               # tell the engine which pass and document this is
        index = id(tokens)
        engine.doc = docs.index(tokens)
        engine.pass_ = seen.get(index, 0) - (1 if engine.doc < 1 else 0)   # the warm-up replays doc 0 once
        seen[index] = seen.get(index, 0) + 1
        return original(eng, tokens, *args, **kwargs)

    docs = [[A, A, B], [B]]
    monkeypatch.setattr(wc, "time", clock)
    monkeypatch.setattr(wc, "replay_document", replay)
    out = wc.replay_all(engine, job(docs, replays=3))
    # document 0: fills at steps 0..3; pass 0 is slow at step 1, pass 1 at step 2; document 1: steps 0..1
    assert out["mask_ns"] == [100, 10_100, 100, 100, 100, 100]
    assert out["mask_min_ns"] == [100, 100, 100, 100, 100, 100]     # doc 1 step 0 was slow in passes 1 and 2 only
    assert out["commit_ns"] == out["commit_min_ns"] == [50, 50, 50, 50]
    assert out["documents"][0]["slowest_mask"] == [1, 10_100]
    assert out["documents"][0]["slowest_mask_min"][1] == 100


def test_elementwise_min_is_the_per_step_minimum() -> None:
    assert wc.elementwise_min([[5, 1, 9], [4, 2, 9], [6, 3, 1]]) == [4, 1, 1]
    assert wc.elementwise_min([[7, 8]]) == [7, 8] and wc.elementwise_min([]) == []
    with pytest.raises(ValueError, match="differ in length"):
        wc.elementwise_min([[1, 2], [1]])


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=1, max_value=20).flatmap(
    lambda n: st.lists(st.lists(st.integers(min_value=0, max_value=10**6), min_size=n, max_size=n),
                       min_size=1, max_size=5)))
def test_elementwise_min_never_exceeds_a_replay_and_is_one_of_them(runs: list[list[int]]) -> None:
    least = wc.elementwise_min(runs)
    for i, value in enumerate(least):
        assert all(value <= r[i] for r in runs) and any(value == r[i] for r in runs)


def test_a_replay_that_changes_verdict_is_reported_and_pass_one_kept() -> None:
    class Flaky(ToyEngine):
        def __init__(self) -> None:
            self.commits = 0

        def commit(self, state: dict, token_id: int) -> bool:
            self.commits += 1
            return self.commits < 6 and super().commit(state, token_id)

    out = wc.replay_all(Flaky(), {**job([[A, B]], replays=3), "warmup_docs": 0})
    doc = out["documents"][0]
    assert doc["status"] == "ok" and "failed" in doc["unstable"] and doc["replays"] == 2
    assert out["short_of_replays"] == 1


def test_compile_timed_reports_the_peak_of_the_compile() -> None:
    value, seconds, memory = wc.compile_timed(lambda: bytearray(64 << 20))     # 64 MiB touched
    assert len(value) == 64 << 20 and seconds >= 0
    assert memory["peak_rss_kb"] >= memory["rss_before_kb"] + (60 << 10) or not memory["peak_reset"]
    assert wc.warm_wanted({"warm_max_s": 60}, 59.0) and not wc.warm_wanted({"warm_max_s": 60}, 61.0)


def test_extra_timer_kept_only_for_accepted_documents() -> None:
    out = wc.replay_all(ToyEngine(), job([[A, B], [A, A]]), extra=lambda state: 7)
    assert out["extra_ns"] == [7, 7]


def test_commit_failure_is_reported() -> None:
    class Refusing(ToyEngine):
        def commit(self, state: dict, token_id: int) -> bool:
            return False

    out = wc.replay_all(Refusing(), job([[A]]))
    assert out["documents"][0]["reason"] == "commit(0) failed" and out["commit_ns"] == []


def test_memory_kb_reads_this_process() -> None:
    mem = wc.memory_kb()
    assert mem["rss"] > 0 and 0 < mem["pss"] <= mem["rss"]


@pytest.mark.skipif(not (SHARED.parent / "tokenizers").is_dir(), reason="../shared/tokenizers absent")
def test_worker_vocabulary_matches_the_harness() -> None:
    spec = tokenizer_spec("cl100k_base")
    table = wc.id_to_bytes(spec.to_job())
    ranks = load_ranks(Path(spec.file))
    assert len(table) == spec.vocab_size
    assert all(table[rank] == token for token, rank in ranks.items())
    assert all(table[i] is None for i in spec.special_tokens.values())


def test_budget_skips_remaining_documents() -> None:
    out = wc.replay_all(ToyEngine(), {**job([[A, B], [B]]), "budget_s": -1.0})
    assert [d["status"] for d in out["documents"]] == ["skipped", "skipped"]
    assert out["mask_ns"] == [] and out["commit_ns"] == []
