"""The vLLM-shaped request grammar (`glrmask_runtime.vllm.GLRMaskGrammar`) under a simulated
scheduler: batch bitmasks with a padded width, speculative draft tokens validated and partly
rejected, accepted tokens, rollbacks. Judges: `json.loads` on every finished output, and a fresh
matcher replaying each request's accepted tokens (the state after validate/rollback must be the
state those tokens lead to)."""

from __future__ import annotations

import json
import random

import numpy as np

import glrmask_runtime
from devtools.builds import JSON_GRAMMAR, built
from glrmask_runtime.bitmask import bitmask_to_bool
from glrmask_runtime.vllm import GLRMaskGrammar

PADDED = 50_304          # a GPT-2 model's padded head (the tokenizer has 50,257 ids)


def _sample(allowed: np.ndarray, eos: int, rng: random.Random) -> int:
    ids = np.flatnonzero(allowed)
    if allowed[eos] and rng.random() < 0.5:
        return eos
    return int(ids[rng.randrange(len(ids))])


def test_simulated_scheduler_with_speculative_tokens():
    b = built(JSON_GRAMMAR, "gpt2")
    artifact = b.artifact
    eos = artifact.eos_token_ids[0]
    rng = random.Random(7)
    requests = {f"r{i}": GLRMaskGrammar(artifact.matcher()) for i in range(4)}
    history: dict[str, list[int]] = {rid: [] for rid in requests}
    bitmask = glrmask_runtime.allocate_bitmask(len(requests), PADDED)
    rejected_drafts = 0
    for _step in range(60):
        active = [rid for rid, g in requests.items() if not g.is_terminated()]
        if not active:
            break
        for row, rid in enumerate(active):
            requests[rid].fill_bitmask(bitmask, row)
        for row, rid in enumerate(active):
            grammar = requests[rid]
            allowed = bitmask_to_bool(bitmask[row], PADDED)
            assert not allowed[artifact.vocab_size:].any()
            draft = [_sample(allowed[:artifact.vocab_size], eos, rng)] + [rng.randrange(artifact.vocab_size)
                                                                          for _ in range(2)]
            valid = grammar.validate_tokens(draft)
            assert valid == draft[:len(valid)] and len(valid) >= 1
            rejected_drafts += len(valid) < len(draft)
            before = grammar.num_processed_tokens
            assert grammar.accept_tokens(rid, valid)
            if len(valid) > 1 and rng.random() < 0.5:     # the target model keeps only the first
                grammar.rollback(len(valid) - 1)
                valid = valid[:1]
            assert grammar.num_processed_tokens == before + len(valid)
            history[rid] += valid
            replay = artifact.matcher()
            for token in history[rid]:
                replay.commit(token)
            assert np.array_equal(replay.mask(), grammar.matcher.mask())
            assert grammar.is_terminated() == replay.is_finished()
    assert rejected_drafts > 0
    finished = [rid for rid, grammar in requests.items() if grammar.is_terminated()]
    assert finished
    for rid in finished:
        json.loads(b.vocab.decode_bytes(history[rid]).decode())


def test_a_rejected_token_leaves_the_request_unchanged():
    b = built(JSON_GRAMMAR, "gpt2")
    grammar = GLRMaskGrammar(b.artifact.matcher())
    tokens = b.vocab.encode('{"a": 1')
    assert grammar.accept_tokens("r", tokens)
    mask = grammar.matcher.mask().copy()
    close, bad = b.vocab.encode("}")[0], b.vocab.encode("]")[0]
    assert not grammar.accept_tokens("r", [close, bad])
    assert np.array_equal(grammar.matcher.mask(), mask) and grammar.num_processed_tokens == len(tokens)
    assert grammar.validate_tokens([close, bad, close]) == [close]
    grammar.reset()
    assert grammar.num_processed_tokens == 0 and grammar.matcher.steps == 0
