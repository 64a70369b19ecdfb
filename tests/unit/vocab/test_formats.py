"""Format details on hand-made input: byte-level map (judged by `tokenizers`), SentencePiece-style
tokenizer.json files (Llama-2 conventions, built here), .tiktoken rank gaps."""

from __future__ import annotations

import base64
import json

import pytest
import tokenizers

from glrmask_cli.vocab import load_vocabulary
from glrmask_cli.vocab.formats import byte_level_pieces_to_bytes, parse_tiktoken, sentencepiece_piece_to_bytes
from tests.support.vocab_files import ROUND_TRIP_TEXTS


def test_byte_level_alphabet_is_the_libraries():
    alphabet = tokenizers.pre_tokenizers.ByteLevel.alphabet()
    assert len(alphabet) == 256
    decoded = byte_level_pieces_to_bytes(sorted(alphabet), "test")
    assert sorted(decoded) == [bytes([b]) for b in range(256)]


@pytest.mark.parametrize("label", sorted(ROUND_TRIP_TEXTS))
def test_byte_level_inverts_the_libraries_pre_tokenizer(label):
    text = ROUND_TRIP_TEXTS[label]
    pre = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    pieces = [piece for piece, _ in pre.pre_tokenize_str(text)]
    assert b"".join(byte_level_pieces_to_bytes(pieces, "test")) == text.encode("utf-8")


def test_byte_level_rejects_foreign_characters():
    from glrmask_cli.errors import TokenizerError

    with pytest.raises(TokenizerError, match="not byte-level BPE text"):
        byte_level_pieces_to_bytes(["ok", "has space"], "test")


def test_sentencepiece_pieces():
    assert sentencepiece_piece_to_bytes("<0x0A>") == b"\n"
    assert sentencepiece_piece_to_bytes("<0xff>") == b"\xff"
    assert sentencepiece_piece_to_bytes("\u2581hello\u2581") == b" hello "
    assert sentencepiece_piece_to_bytes("<0x0A") == b"<0x0A"
    assert sentencepiece_piece_to_bytes("日本") == "日本".encode()


def test_tiktoken_rank_gaps_become_unused_special_ids(tmp_path):
    lines = [(b"a", 0), (b"b", 1), (b"ab", 4)]
    data = b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in lines)
    assert parse_tiktoken(data, "x") == [b"a", b"b", b"", b"", b"ab"]
    path = tmp_path / "gappy.tiktoken"
    path.write_bytes(data)
    vocab = load_vocabulary(str(path))
    assert vocab.size == 5 and vocab.special_ids == frozenset({2, 3})


def sentencepiece_style_json(variant: str) -> str:
    """A small Llama-2-style BPE tokenizer.json: `▁` for spaces, byte fallback, a dummy prefix."""
    specials = ["<unk>", "<s>", "</s>"]
    pieces = specials + [f"<0x{b:02X}>" for b in range(256)]
    words = ["\u2581", "h", "e", "l", "o", "w", "r", "d", "é", "\u2581h", "el", "\u2581hel", "lo", "\u2581hello"]
    vocab = {p: i for i, p in enumerate(pieces + words)}
    merges = [["\u2581", "h"], ["e", "l"], ["\u2581h", "el"], ["l", "o"], ["\u2581hel", "lo"]]
    model = {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "vocab": vocab, "merges": merges}
    decoder = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    if variant == "prepend":       # older conversions: normalizer adds the dummy prefix
        normalizer = {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                                                          {"type": "Replace", "pattern": {"String": " "},
                                                           "content": "\u2581"}]}
        pre_tokenizer = None
    else:                          # newer conversions: Metaspace pre-tokenizer, prepend_scheme "first"
        normalizer = None
        pre_tokenizer = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}
    added = [{"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i, s in enumerate(specials)]
    return json.dumps({"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
                       "normalizer": normalizer, "pre_tokenizer": pre_tokenizer, "post_processor": None,
                       "decoder": decoder, "model": model})


@pytest.mark.parametrize("variant", ["prepend", "metaspace"])
def test_sentencepiece_style_tokenizer_json(tmp_path, variant):
    path = tmp_path / "tokenizer.json"
    path.write_text(sentencepiece_style_json(variant), encoding="utf-8")
    judge = tokenizers.Tokenizer.from_file(str(path))
    assert [t.tokens for t in [judge.encode("hello", add_special_tokens=False)]] == [["\u2581hello"]]
    vocab = load_vocabulary(str(path))
    assert vocab.size == judge.get_vocab_size()
    assert vocab.eos_ids == (judge.token_to_id("</s>"),)
    assert vocab.special_ids == frozenset(judge.token_to_id(s) for s in ("<unk>", "<s>", "</s>"))
    assert vocab.token_bytes[judge.token_to_id("\u2581hello")] == b" hello"
    assert vocab.token_bytes[judge.token_to_id("<0x0A>")] == b"\n"
    # no dummy prefix: "hello" is not " hello", and text round-trips byte for byte
    assert vocab.encode("hello") != [judge.token_to_id("\u2581hello")]
    for text in ROUND_TRIP_TEXTS.values():
        assert vocab.decode_bytes(vocab.encode(text)) == text.encode("utf-8"), text
    assert vocab.encode(" hello") == [judge.token_to_id("\u2581hello")]


def test_tiktoken_blank_and_whitespace_lines_are_skipped():
    data = b"YQ== 0\n\n   \nYg== 1\r\n"
    assert parse_tiktoken(data, "x") == [b"a", b"b"]


@pytest.mark.parametrize("data, message", [
    (b"YQ== 0\nYg== 1 extra\n", r"x:2: expected `base64 rank`"),
    (b"YQ== 0\nYg==\n", r"x:2: expected `base64 rank`"),
    (b"YQ== -1\n", r"x:1: expected `base64 rank`"),
    (b"YQ== 0\nYQ== 1\n", r"same token bytes have two ranks"),
    (b"\n \n", r"no `base64 rank` lines"),
])
def test_tiktoken_malformed(data, message):
    from glrmask_cli.errors import TokenizerError

    with pytest.raises(TokenizerError, match=message):
        parse_tiktoken(data, "x")
