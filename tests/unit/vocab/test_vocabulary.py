"""Vocabulary on small hand-made token lists: specials, EOS, fingerprint, byte matrix, EOS override."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from glrmask_cli.errors import TokenizerError
from glrmask_cli.vocab.registry import with_eos_tokens
from glrmask_cli.vocab.vocabulary import Vocabulary, compute_fingerprint

TOKENS = [b"a", b"b", b"ab", b"\xe4\xb8", b"\x96", b"", b" ", b" "]


def tiny(**kwargs) -> Vocabulary:
    return Vocabulary.from_tokens("tiny", TOKENS, **kwargs)


def test_empty_ids_and_named_specials_are_special_with_no_bytes():
    vocab = tiny(special_names={2: "<|ctl|>"}, eos_ids=[4])
    assert vocab.size == len(TOKENS)
    assert vocab.special_ids == frozenset({2, 4, 5})
    assert vocab.eos_ids == (4,)
    assert [vocab.token_bytes[i] for i in sorted(vocab.special_ids)] == [b"", b"", b""]
    assert vocab.token_bytes[0] == b"a" and vocab.token_bytes[3] == b"\xe4\xb8"
    assert vocab.token_label(2) == "<|ctl|>" and vocab.token_label(5) == "<unused 5>"
    assert vocab.token_label(0) == "b'a'"


def test_fingerprint_is_sha256_of_documented_layout():
    vocab = tiny(special_names={2: "<|ctl|>"})
    digest = hashlib.sha256(b"glrmask-vocabulary-v1\n")
    tokens = list(vocab.token_bytes)
    digest.update(len(tokens).to_bytes(8, "little"))
    digest.update(b"".join(len(t).to_bytes(4, "little") for t in tokens))
    digest.update(b"".join(tokens))
    specials = sorted(vocab.special_ids)
    digest.update(len(specials).to_bytes(8, "little"))
    digest.update(b"".join(i.to_bytes(4, "little") for i in specials))
    assert vocab.fingerprint == digest.hexdigest()


def test_fingerprint_changes_with_bytes_and_specials_but_not_names_or_eos():
    base = tiny()
    assert tiny().fingerprint == base.fingerprint
    changed_bytes = Vocabulary.from_tokens("tiny", [b"A", *TOKENS[1:]])
    assert changed_bytes.fingerprint != base.fingerprint
    assert tiny(special_names={0: "<x>"}).fingerprint != base.fingerprint
    assert tiny(special_names={0: "<x>"}).fingerprint == tiny(special_names={0: "<y>"}).fingerprint
    assert tiny(eos_ids=[5]).fingerprint == base.fingerprint   # 5 is already special (empty)
    # moving bytes between neighbours must change it (lengths are hashed, not only the concatenation)
    split_ab_c, split_a_bc = Vocabulary.from_tokens("t", [b"ab", b"c"]), Vocabulary.from_tokens("t", [b"a", b"bc"])
    assert split_ab_c.fingerprint != split_a_bc.fingerprint
    assert compute_fingerprint(base.token_bytes, base.special_ids) == base.fingerprint


def test_byte_matrix_rows_equal_token_bytes():
    vocab = tiny(special_names={2: "<|ctl|>"})
    matrix = vocab.byte_matrix()
    lengths = vocab.token_lengths
    assert matrix.dtype == np.uint8 and lengths.dtype == np.int32
    assert matrix.shape == (vocab.size, max(len(t) for t in vocab.token_bytes))
    for token_id, data in enumerate(vocab.token_bytes):
        assert lengths[token_id] == len(data)
        assert bytes(matrix[token_id, : lengths[token_id]]) == data
        assert not matrix[token_id, lengths[token_id]:].any()


def test_ids_for_bytes_lists_duplicates_and_decode_bytes_skips_specials():
    vocab = tiny(eos_ids=[4])
    assert vocab.ids_for_bytes(b" ") == [6, 7]
    assert vocab.ids_for_bytes(b"") == []
    assert vocab.decode_bytes([0, 4, 1, 6]) == b"ab "


def test_encode_without_encoder_is_a_tokenizer_error():
    with pytest.raises(TokenizerError, match="no text encoder.*--tokenizer-pattern"):
        tiny().encode("ab")


def test_encoder_is_used_for_encode():
    vocab = tiny(encoder=lambda text: [0] * text.count("a"))
    assert vocab.encode("aXa") == [0, 0]


@pytest.mark.parametrize("kwargs", [{"special_names": {99: "<x>"}}, {"eos_ids": [-1]}, {"eos_ids": [8]}])
def test_out_of_range_special_ids_are_rejected(kwargs):
    with pytest.raises(ValueError, match="out of range"):
        tiny(**kwargs)


def test_direct_construction_checks_invariants():
    with pytest.raises(ValueError, match="EOS ids"):
        Vocabulary("x", (b"a", b""), frozenset({1}), (0,), "f")
    with pytest.raises(ValueError, match="empty"):
        Vocabulary("x", (), frozenset(), (), "f")


def test_eos_override_by_id_name_and_text():
    vocab = tiny(special_names={5: "<|end|>"}, eos_ids=[5])
    assert with_eos_tokens(vocab, ["1"]).eos_ids == (1,)
    by_name = with_eos_tokens(vocab, ["<|end|>"])
    assert by_name.eos_ids == (5,) and by_name.fingerprint == vocab.fingerprint
    by_text = with_eos_tokens(vocab, ["ab", "1"])
    assert by_text.eos_ids == (1, 2)
    assert by_text.token_bytes[2] == b"" and 2 in by_text.special_ids
    assert by_text.special_names[2] == "ab"
    assert by_text.fingerprint != vocab.fingerprint


@pytest.mark.parametrize("item, message", [
    ("99", "id out of range"),
    ("zzz", "neither an id, a special token name, nor one token"),
    (" ", r"several ids have these bytes in tiny \(\[6, 7\]\); give the id"),
])
def test_eos_override_errors(item, message):
    vocab = tiny(special_names={5: "<|end|>"})
    with pytest.raises(TokenizerError, match=message) as caught:
        with_eos_tokens(vocab, [item])
    assert "\n" not in str(caught.value) and str(caught.value).startswith("--eos-token")
