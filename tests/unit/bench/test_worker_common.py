"""bench/workers/worker_common: the replay loop's verdicts and what it keeps, on a toy engine (a*b then EOS)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

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


def job(docs: list[list[int]], repeat: int = 1) -> dict:
    return {"tokenizer": {"eos_ids": [EOS], "vocab_size": 64}, "warmup_docs": 1, "repeat": repeat,
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


def test_repeat_times_every_pass_but_reports_each_document_once() -> None:
    out = wc.replay_all(ToyEngine(), job([[A, B], [B]], repeat=3))
    assert len(out["documents"]) == 2
    assert len(out["commit_ns"]) == 3 * 3 and len(out["mask_ns"]) == 3 * 5


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
