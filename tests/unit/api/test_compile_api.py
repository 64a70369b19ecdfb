"""`glrmask_cli.compile_grammar`: grammar paths and text, tokenizer names, files and objects,
padded vocabularies, the in-process tokenizer cache and the on-disk build cache."""

from __future__ import annotations

import numpy as np
import pytest
import tiktoken

import glrmask_cli
from devtools.builds import JSON_GRAMMAR
from devtools.data import DataUnavailable, tokenizer_file
from glrmask_cli.api import tokenizer_vocabulary
from glrmask_cli.errors import TokenizerError
from glrmask_cli.vocab.objects import vocabulary_from_object
from glrmask_cli.vocab.registry import load_vocabulary

GRAMMAR = 'start: "[" (NUMBER ("," NUMBER)*)? "]"\nNUMBER: /[0-9]+/\n'


def test_a_second_build_comes_from_the_cache_with_the_same_bytes():
    first = glrmask_cli.compile_grammar(GRAMMAR + "// first\n", tokenizer="gpt2")
    again = glrmask_cli.compile_grammar(GRAMMAR + "// first\n", tokenizer="gpt2")
    fresh = glrmask_cli.compile_grammar(GRAMMAR + "// first\n", tokenizer="gpt2", use_cache=False)
    assert not first.from_cache and again.from_cache and not fresh.from_cache
    assert first.data == again.data == fresh.data
    assert again.metadata == first.metadata


def test_repeated_text_is_loaded_once_but_a_file_every_time(monkeypatch, tmp_path):
    """Lark text decides its grammar alone, so a repeated one (a per-request JSON Schema) skips lark's
    loader; a file may change, so it is loaded again, and a change reaches the artifact."""
    loads = []
    real = glrmask_cli.api.load_grammar_stage
    monkeypatch.setattr(glrmask_cli.api, "load_grammar_stage", lambda *a, **k: loads.append(a) or real(*a, **k))
    text = GRAMMAR + "// loaded once\n"
    first = glrmask_cli.compile_grammar(text, tokenizer="gpt2")
    again = glrmask_cli.compile_grammar(text, tokenizer="gpt2")
    assert again.from_cache and again.data == first.data and len(loads) == 1
    path = tmp_path / "g.lark"
    path.write_text(text)
    glrmask_cli.compile_grammar(path, tokenizer="gpt2")
    path.write_text(text.replace("[0-9]+", "[0-9]"))
    changed = glrmask_cli.compile_grammar(path, tokenizer="gpt2")
    assert len(loads) == 3 and not changed.from_cache


def test_the_cache_key_follows_the_grammar_and_the_options(tmp_path):
    path = tmp_path / "g.lark"
    path.write_text(GRAMMAR)
    base = glrmask_cli.compile_grammar(path, tokenizer="gpt2")
    path.write_text(GRAMMAR.replace("[0-9]+", "[0-9]"))
    changed = glrmask_cli.compile_grammar(path, tokenizer="gpt2")
    other_layout = glrmask_cli.compile_grammar(path, tokenizer="gpt2", layout="grouped")
    assert not changed.from_cache and changed.data != base.data
    assert not other_layout.from_cache


def test_a_damaged_cache_entry_is_rebuilt():
    built = glrmask_cli.compile_grammar(GRAMMAR + "// damaged\n", tokenizer="gpt2")
    built.cache_path.write_bytes(built.data[:100])
    again = glrmask_cli.compile_grammar(GRAMMAR + "// damaged\n", tokenizer="gpt2")
    assert not again.from_cache and again.data == built.data


def test_the_api_builds_what_glrmask_build_writes(tmp_path):
    from click.testing import CliRunner

    from glrmask_cli.cli import cli
    built = glrmask_cli.compile_grammar(JSON_GRAMMAR, tokenizer="gpt2", use_cache=False)
    result = CliRunner().invoke(cli, ["build", str(JSON_GRAMMAR), "-o", str(tmp_path / "j.glrm"), "--no-cache"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "j.glrm").read_bytes() == built.data
    matcher = built.load().matcher()
    matcher.commit_bytes(b'{"a": [1, 2')
    assert not matcher.is_accepting() and matcher.mask().any()


def test_a_tokenizer_is_loaded_once_per_process():
    assert tokenizer_vocabulary("gpt2") is tokenizer_vocabulary("gpt2")


def test_a_tiktoken_encoding_object_gives_the_same_vocabulary():
    gpt2 = load_vocabulary("gpt2")
    ranks = {t: i for i, t in enumerate(gpt2.token_bytes) if t}
    pattern = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
    encoding = tiktoken.Encoding("gpt2-object", pat_str=pattern, mergeable_ranks=ranks,
                                 special_tokens={"<|endoftext|>": 50256})
    vocab = vocabulary_from_object(encoding)
    assert vocab.token_bytes == gpt2.token_bytes and vocab.eos_ids == gpt2.eos_ids
    assert vocab.fingerprint == gpt2.fingerprint
    assert vocab.encode("hello world") == encoding.encode_ordinary("hello world")


def test_a_tokenizers_object_gives_the_vocabulary_of_its_file():
    tokenizers = pytest.importorskip("tokenizers")
    try:
        path = tokenizer_file("qwen3.tokenizer.json")
    except DataUnavailable as e:
        pytest.skip(str(e))
    vocab = vocabulary_from_object(tokenizers.Tokenizer.from_file(str(path)))
    assert vocab.token_bytes == load_vocabulary(str(path)).token_bytes


def test_a_padded_vocabulary_never_allows_the_padding():
    built = glrmask_cli.compile_grammar(GRAMMAR, tokenizer="gpt2", vocab_size=50_304)
    artifact = built.load()
    assert artifact.vocab_size == 50_304
    mask = artifact.matcher().mask()
    assert mask.shape == (50_304,) and not mask[50_257:].any() and mask[:50_257].any()
    with pytest.raises(TokenizerError, match="smaller than the tokenizer"):
        glrmask_cli.compile_grammar(GRAMMAR, tokenizer="gpt2", vocab_size=50_000)


def test_an_unsupported_tokenizer_object_is_a_clear_error():
    with pytest.raises(TokenizerError, match="not supported"):
        glrmask_cli.compile_grammar(GRAMMAR, tokenizer=np.zeros(3))


@pytest.mark.parametrize("tokenizer", ["gpt2", "cl100k_base.tiktoken", "qwen3.tokenizer.json", "mistral-v1.model"])
def test_every_tokenizer_family_pads(tokenizer):
    try:
        spec = tokenizer if tokenizer == "gpt2" else str(tokenizer_file(tokenizer))
    except DataUnavailable as e:
        pytest.skip(str(e))
    size = tokenizer_vocabulary(spec).size
    artifact = glrmask_cli.compile_grammar(GRAMMAR, tokenizer=spec, vocab_size=size + 77).load()
    mask = artifact.matcher().mask()
    assert artifact.vocab_size == size + 77 and not mask[size:].any() and mask[:size].any()


def test_the_build_cache_keeps_within_its_size_bound(monkeypatch):
    first = glrmask_cli.compile_grammar(GRAMMAR + "// bound 1\n", tokenizer="gpt2")
    monkeypatch.setenv("GLRMASK_CACHE_MAX_BYTES", str(len(first.data) + 1000))
    second = glrmask_cli.compile_grammar(GRAMMAR + "// bound 2\n", tokenizer="gpt2")
    assert second.cache_path.is_file() and not first.cache_path.exists()
    assert glrmask_cli.compile_grammar(GRAMMAR + "// bound 2\n", tokenizer="gpt2").from_cache
