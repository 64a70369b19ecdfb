"""Vocabulary test helpers: pinned tokenizer files (loaded once per session), their judges (tiktoken's and
the `tokenizers` library's own encoders), the texts every encoder must round-trip, and a comparison
of a Vocabulary with a tiktoken Encoding."""

from __future__ import annotations

import functools
import gzip
from pathlib import Path
from unittest import mock

import pytest

from devtools.data import CACHE_DIR, PINNED, tokenizer_file
from glrmask_cli.vocab import Vocabulary, load_vocabulary

# Texts every encoder must round-trip byte for byte (issue 2: ASCII, accented, CJK, emoji, code, whitespace).
ROUND_TRIP_TEXTS = {
    "ascii": "The quick brown fox jumps over the lazy dog. 12345 + 678 = 7023!",
    "accented": "Élodie a mangé une crème brûlée à Zürich; São Paulo, Ñandú, Øresund, naïve café.",
    "cjk": "東京は日本の首都です。北京欢迎你！서울특별시 — 漢字かなカナ",
    "emoji": "Launch 🚀🔥 family 👨\u200d👩\u200d👧\u200d👦 flag 🇯🇵 thumbs 👍🏽 ∑∞≠",
    "code": 'def f(x):\n\treturn {"a": [1, 2.5e-3, None]}  # ok\r\n\nclass A:\n    pass\n',
    "spaces": "a  b   c    d\n\n\n   \n\t\t  end   ",
    "newlines": "\n\n\n\n\r\n\r\n line\n\n\n\n\n\n\n\n",
    "special_text": "<|endoftext|> </s> <s> <|im_end|> <unk>",
    "leading_space": " leading space and trailing newline\n",
    "meta_space": "a\u2581b \u2581\u2581 c\u2581",   # SentencePiece's space marker as literal text
    "empty": "",
}


def pinned_path(filename: str) -> Path:
    """A tokenizer file as a path the loader accepts (tokenizer_file checks its sha256)."""
    return tokenizer_file(filename)


@functools.lru_cache(maxsize=None)
def file_vocabulary(filename: str) -> Vocabulary:
    """load_vocabulary(path) once per session for each pinned file."""
    if filename.endswith(".model"):
        pytest.importorskip("sentencepiece", reason="mistral-v1.model needs the sentencepiece extra")
    return load_vocabulary(str(pinned_path(filename)))


def openai_file(name: str) -> Path:
    """Decompressed local copy of an OpenAI encoding file (o200k is pinned gzipped)."""
    if name == "o200k_base":
        return _gunzipped(str(tokenizer_file("o200k_base.tiktoken.gz")))
    return tokenizer_file("r50k_base.tiktoken" if name in ("r50k_base", "gpt2") else f"{name}.tiktoken")


@functools.lru_cache(maxsize=None)
def _gunzipped(path: str) -> Path:
    target = CACHE_DIR / Path(path).with_suffix("").name
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".part")
        partial.write_bytes(gzip.decompress(Path(path).read_bytes()))
        partial.replace(target)
    return target


@functools.lru_cache(maxsize=None)
def tiktoken_judge(name: str):
    """tiktoken's own Encoding for an OpenAI name, its file read locally (tiktoken checks the hash).

    The definition (pattern, special tokens, size) comes from tiktoken_ext.openai_public; only the
    download is redirected to the pinned file. p50k_base's file is r50k_base's plus 24 space runs,
    which tiktoken's published sha256 for p50k_base confirms.
    """
    import base64

    import tiktoken
    import tiktoken.load
    from tiktoken_ext import openai_public

    def local_load(url: str, expected_hash: str | None = None):
        if name == "p50k_base":
            data = openai_file("r50k_base").read_bytes() + b"".join(
                base64.b64encode(b" " * n) + b" %d\n" % (50255 + n) for n in range(2, 26))
            tiktoken.load.check_hash(data, expected_hash) or pytest.fail("p50k_base: sha256 mismatch")
            return {base64.b64decode(tok): int(rank) for tok, rank in (line.split() for line in data.splitlines())}
        return tiktoken.load.load_tiktoken_bpe(str(openai_file(name)), expected_hash)

    with mock.patch.object(openai_public, "load_tiktoken_bpe", local_load):
        return tiktoken.Encoding(**getattr(openai_public, name)())


@functools.lru_cache(maxsize=None)
def hf_judge(filename: str):
    """The `tokenizers` library's own Tokenizer for a pinned tokenizer.json."""
    import tokenizers

    return tokenizers.Tokenizer.from_file(str(pinned_path(filename)))


ALL_FILES = sorted(PINNED)


def assert_same_as_tiktoken(vocab: Vocabulary, encoding) -> None:
    """Size, special names, EOS, unused ids and every token's bytes equal tiktoken's Encoding."""
    assert vocab.size == encoding.n_vocab
    names = {encoding.encode_single_token(n): n for n in encoding.special_tokens_set}
    assert dict(vocab.special_names) == names
    assert vocab.eos_ids == (encoding.eot_token,)
    unused = set()
    for token_id in range(encoding.n_vocab):
        if token_id in names:
            continue
        try:
            expected = encoding.decode_single_token_bytes(token_id)
        except KeyError:
            unused.add(token_id)
            expected = b""
        assert vocab.token_bytes[token_id] == expected, token_id
    assert vocab.special_ids == frozenset(names) | unused
