"""Oracle 1 of `make exactness` (docs/ARCHITECTURE.md, "Exactness"): real documents, tokenized by the
real tokenizer, replayed token by token.

Every token of a document lark accepts must be in the mask before it is committed, and EOS must be
allowed exactly when the committed text is itself a complete document (lark's verdict on the prefix);
a document lark rejects must be refused at some step or never reach an accepting state.
"""

from __future__ import annotations

import functools

import pytest
from lark import Lark

from devtools.builds import JSON_GRAMMAR, built
from devtools.data import tokenizer_file
from devtools.documents import SUITE, maskbench_instances, suite_documents
from devtools.lark_judge import lark_parses


@functools.lru_cache(maxsize=None)
def json_judge() -> Lark:
    return Lark(JSON_GRAMMAR.read_text(), parser="lalr")


def lark_accepts(text: str) -> bool:
    return lark_parses(json_judge(), text)


def replay(b, text: str) -> tuple[int | None, list[bool]]:
    """Commit the text's tokens while they are allowed. Returns (index of the first refused token or
    None, is_accepting() before each token and at the end)."""
    matcher = b.artifact.matcher()
    accepting = []
    for i, token_id in enumerate(b.vocab.encode(text)):
        accepting.append(matcher.is_accepting())
        if not matcher.mask()[token_id]:
            return i, accepting
        matcher.commit(token_id)
    accepting.append(matcher.is_accepting())
    eos_in_mask = any(matcher.mask()[e] for e in b.artifact.eos_token_ids)
    assert eos_in_mask == accepting[-1], "EOS in mask() disagrees with is_accepting()"
    return None, accepting


def check_document(b, name: str, text: str) -> None:
    refused, accepting = replay(b, text)
    if lark_accepts(text):
        assert refused is None, f"{name}: valid document refused at token {refused}"
        ids = b.vocab.encode(text)
        prefixes = [b.vocab.decode_bytes(ids[:i]) for i in range(len(ids))]
        expected = [_decodes_and_accepted(p) for p in prefixes] + [True]
        assert accepting == expected, f"{name}: EOS allowed at the wrong steps"
    else:
        assert refused is not None or not accepting[-1], f"{name}: invalid document accepted"


def _decodes_and_accepted(prefix: bytes) -> bool:
    try:
        return lark_accepts(prefix.decode("utf-8"))
    except UnicodeDecodeError:
        return False


def json_artifact(tokenizer: str):
    """grammars/json.lark built for gpt2 (bundled) or the pinned cl100k_base file."""
    return built(JSON_GRAMMAR, tokenizer if tokenizer == "gpt2" else str(tokenizer_file("cl100k_base.tiktoken")))


@pytest.mark.parametrize("tokenizer", ["gpt2", "cl100k_base"])
def test_json_test_suite(tokenizer):
    b = json_artifact(tokenizer)
    docs = suite_documents()
    assert len(docs) > 250
    for name, text in docs:
        check_document(b, name, text)


@pytest.mark.parametrize("filename", ["o200k_base.tiktoken.gz", "llama3.tiktoken", "qwen3.tokenizer.json",
                                      "deepseek-v4.tokenizer.json", "mistral-v1.model"])
def test_json_test_suite_other_tokenizers(filename):
    """The same oracle with every other real vocabulary (tiktoken, HF tokenizer.json, SentencePiece)."""
    b = built(JSON_GRAMMAR, str(tokenizer_file(filename)))
    for name, text in suite_documents():
        check_document(b, name, text)


@pytest.mark.parametrize("tokenizer", ["gpt2", "cl100k_base"])
def test_maskbench_valid_instances(tokenizer):
    b = json_artifact(tokenizer)
    instances = maskbench_instances()
    assert len(instances) > 200
    for name, text in instances:
        refused, accepting = replay(b, text)
        assert refused is None and accepting[-1], f"{name}: valid instance refused"


def test_invalid_utf8_documents_are_refused():
    """JSON text must be UTF-8: the suite's invalid-UTF-8 files never reach an accepting state."""
    b = built(JSON_GRAMMAR, "gpt2")
    for path in sorted(SUITE.glob("*.json")):
        data = path.read_bytes()
        try:
            data.decode("utf-8")
            continue
        except UnicodeDecodeError:
            pass
        matcher = b.artifact.matcher()
        try:
            matcher.commit_bytes(data)
        except Exception as err:   # noqa: BLE001 - the only allowed failure is InputRejected
            assert type(err).__name__ == "InputRejected", err
            continue
        assert not matcher.is_accepting(), f"{path.name}: invalid UTF-8 accepted"
