"""Tokenizer objects a serving stack already holds -> Vocabulary, and padding to the model's logits.

Duck-typed, so none of the libraries is a dependency: a `tokenizers.Tokenizer`, a transformers fast
tokenizer (`PreTrainedTokenizerFast`: its `backend_tokenizer`, its `eos_token`), or a tiktoken
`Encoding` (its ranks through `decode_single_token_bytes`, its special tokens by name). A model's
LM head is often wider than its tokenizer (Qwen3: 151,936 logits for 151,669 ids); `pad_vocabulary`
adds the missing ids as special ones, which no mask ever allows.
"""

from __future__ import annotations

from typing import Any

from glrmask_cli.errors import TokenizerError
from glrmask_cli.vocab.formats import DEFAULT_EOS_NAMES, vocabulary_from_hf
from glrmask_cli.vocab.vocabulary import Vocabulary


def vocabulary_from_object(tokenizer: Any) -> Vocabulary:
    """A Vocabulary for a tokenizer object; TokenizerError names what the object lacks."""
    if isinstance(tokenizer, Vocabulary):
        return tokenizer
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:                                   # transformers PreTrainedTokenizerFast
        name = str(getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__)
        eos = getattr(tokenizer, "eos_token", None)
        return vocabulary_from_hf(backend, name=name, source=f"<{type(tokenizer).__name__} {name}>",
                                  config_eos=[str(eos)] if eos else ())
    if all(callable(getattr(tokenizer, a, None)) for a in ("get_added_tokens_decoder", "get_vocab")):
        return vocabulary_from_hf(tokenizer, name="tokenizers.Tokenizer", source="<tokenizers.Tokenizer>")
    if callable(getattr(tokenizer, "decode_single_token_bytes", None)) and hasattr(tokenizer, "n_vocab"):
        return _vocabulary_from_tiktoken(tokenizer)
    raise TokenizerError(f"tokenizer object of type {type(tokenizer).__name__} is not supported: pass a name, "
                         "a file, a tokenizers.Tokenizer, a transformers fast tokenizer or a tiktoken Encoding")


def _vocabulary_from_tiktoken(encoding: Any) -> Vocabulary:
    name = str(getattr(encoding, "name", "tiktoken"))
    special = {str(text): int(encoding.encode_single_token(text)) for text in sorted(encoding.special_tokens_set)}
    special_ids = set(special.values())
    tokens = []
    for token_id in range(int(encoding.n_vocab)):
        if token_id in special_ids:
            tokens.append(b"")
            continue
        try:
            tokens.append(bytes(encoding.decode_single_token_bytes(token_id)))
        except KeyError:                                       # an unused id between ranks and specials
            tokens.append(b"")
    eos = [special[n] for n in DEFAULT_EOS_NAMES if n in special]
    return Vocabulary.from_tokens(name, tokens, special_names={i: t for t, i in special.items()}, eos_ids=eos,
                                  encoder=encoding.encode_ordinary, source=f"<tiktoken.Encoding {name}>")


def pad_vocabulary(vocab: Vocabulary, size: int) -> Vocabulary:
    """`vocab` with ids up to `size` (the model's logits): the added ids are special, never allowed."""
    if size < vocab.size:
        raise TokenizerError(f"{vocab.name}: vocab_size {size} is smaller than the tokenizer's {vocab.size} ids")
    if size == vocab.size:
        return vocab
    tokens = list(vocab.token_bytes) + [b""] * (size - vocab.size)
    return Vocabulary.from_tokens(vocab.name, tokens, special_names=dict(vocab.special_names),
                                  eos_ids=vocab.eos_ids, encoder=vocab.encoder, source=vocab.source)
