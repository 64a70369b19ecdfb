"""bench.tokenizers: specs agree with the tokenizer files, and encoding round-trips (judge: tiktoken decode)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.tokenizers import TOKENIZER_NAMES, encode, encoding, load_ranks, tokenizer_spec
from bench.workloads import SHARED

pytestmark = pytest.mark.skipif(not (SHARED.parent / "tokenizers").is_dir(), reason="../shared/tokenizers absent")


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_spec_covers_ranks_and_specials(name: str) -> None:
    spec = tokenizer_spec(name)
    ranks = load_ranks(Path(spec.file))
    ids = set(ranks.values()) | set(spec.special_tokens.values())
    assert max(ids) + 1 == spec.vocab_size
    assert set(ranks.values()).isdisjoint(spec.special_tokens.values())
    assert set(spec.eos_ids) <= set(spec.special_tokens.values())


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_encode_round_trips_and_never_emits_specials(name: str) -> None:
    spec = tokenizer_spec(name)
    text = '{"k": ["<|endoftext|>", 1.5e-3, "\\u00e9 caf\u00e9 \U0001F600"], "n": null}\n'.encode()
    tokens = encode(name, text)
    assert encoding(name).decode_bytes(tokens) == text
    assert not set(tokens) & set(spec.special_tokens.values())
