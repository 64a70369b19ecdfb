"""Tokenizer vocabularies: `load_vocabulary(spec)` -> `Vocabulary` (id -> bytes, specials, EOS, fingerprint)."""

from glrmask_cli.vocab.registry import describe_tokenizers as describe_tokenizers
from glrmask_cli.vocab.registry import load_vocabulary as load_vocabulary
from glrmask_cli.vocab.vocabulary import Vocabulary as Vocabulary
