"""Vocabulary: token id -> bytes, special ids, EOS ids, fingerprint, optional text encoder.

Input: per-id byte strings from a loader (formats.py). Output: an immutable `Vocabulary`.
Policy: every id whose bytes are empty (control tokens, unused ids between ranks and specials)
is special and never matches text; EOS ids are special too. The fingerprint is a sha256 over
the size, every token's bytes and the sorted special ids, so two vocabularies that mask alike
share it. Work on bytes only: many tokens are not valid UTF-8 alone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType

import numpy as np

from glrmask_cli.errors import TokenizerError
from glrmask_cli.ragged import positions_within

FINGERPRINT_LABEL = b"glrmask-vocabulary-v1\n"


def compute_fingerprint(token_bytes: tuple[bytes, ...], special_ids: Iterable[int]) -> str:
    """Hex sha256 over: label, size (u64), each token's length (u32), all bytes, special ids (u32)."""
    lengths = np.fromiter(map(len, token_bytes), dtype="<u4", count=len(token_bytes))
    specials = np.array(sorted(special_ids), dtype="<u4")
    digest = hashlib.sha256(FINGERPRINT_LABEL)
    digest.update(len(token_bytes).to_bytes(8, "little"))
    digest.update(lengths.tobytes())
    digest.update(b"".join(token_bytes))
    digest.update(len(specials).to_bytes(8, "little"))
    digest.update(specials.tobytes())
    return digest.hexdigest()


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """An LLM vocabulary as the compiler sees it. Build it with `Vocabulary.from_tokens`.

    `token_bytes[i]` is token i's bytes (b"" for special and unused ids); `special_ids` never
    match text (they include the EOS ids and every empty id); `special_names` maps named
    control tokens to their text (e.g. 50256 -> "<|endoftext|>"); `encoder` turns ordinary text
    into ids (no special tokens), or is None when the source has no encoder.
    """

    name: str
    token_bytes: tuple[bytes, ...]
    special_ids: frozenset[int]
    eos_ids: tuple[int, ...]
    fingerprint: str
    encoder: Callable[[str], list[int]] | None = None
    special_names: Mapping[int, str] = field(default_factory=lambda: MappingProxyType({}))
    source: str = ""

    def __post_init__(self) -> None:
        size = len(self.token_bytes)
        if size == 0:
            raise ValueError("Vocabulary: token_bytes is empty")
        if any(not 0 <= i < size for i in self.special_ids):
            raise ValueError(f"Vocabulary {self.name}: special id out of range [0, {size})")
        if not set(self.eos_ids) <= self.special_ids:
            raise ValueError(f"Vocabulary {self.name}: EOS ids {self.eos_ids} must be special ids")
        if list(self.eos_ids) != sorted(set(self.eos_ids)):
            raise ValueError(f"Vocabulary {self.name}: eos_ids must be sorted and distinct")

    @classmethod
    def from_tokens(cls, name: str, token_bytes: Iterable[bytes], *,
                    special_names: Mapping[int, str] | None = None, eos_ids: Iterable[int] = (),
                    encoder: Callable[[str], list[int]] | None = None, source: str = "") -> Vocabulary:
        """Build a vocabulary; named specials, EOS ids and empty ids become special (bytes b"").

        Raises ValueError on ids out of range or non-bytes tokens (a loader bug, not user input).
        """
        tokens = list(token_bytes)
        size = len(tokens)
        names = dict(sorted((special_names or {}).items()))
        eos = tuple(sorted(set(eos_ids)))
        for token_id in (*names, *eos):
            if not 0 <= token_id < size:
                raise ValueError(f"Vocabulary {name}: special id {token_id} out of range [0, {size})")
        for token_id in (*names, *eos):
            tokens[token_id] = b""
        if not set(map(type, tokens)) <= {bytes}:
            raise ValueError(f"Vocabulary {name}: every token must be bytes")
        lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=size)
        special = frozenset(np.flatnonzero(lengths == 0).tolist())
        frozen = tuple(tokens)
        return cls(name=name, token_bytes=frozen, special_ids=special, eos_ids=eos,
                   fingerprint=compute_fingerprint(frozen, special), encoder=encoder,
                   special_names=MappingProxyType(names), source=source)

    # -- queries ---------------------------------------------------------------------------

    @property
    def size(self) -> int:
        """Number of ids, i.e. the length of a mask over this vocabulary."""
        return len(self.token_bytes)

    def encode(self, text: str) -> list[int]:
        """Ordinary text -> token ids (special tokens' text is encoded as text)."""
        if self.encoder is None:
            raise TokenizerError(f"{self.name}: this vocabulary has no text encoder; "
                                 "for a .tiktoken file pass --tokenizer-pattern")
        return list(self.encoder(text))

    def decode_bytes(self, token_ids: Iterable[int]) -> bytes:
        """Concatenated bytes of `token_ids` (special ids contribute nothing)."""
        return b"".join([self.token_bytes[i] for i in token_ids])

    def token_label(self, token_id: int) -> str:
        """Readable form of one id for reports: a special token's name or its bytes' repr."""
        if token_id in self.special_names:
            return self.special_names[token_id]
        if token_id in self.special_ids:
            return f"<unused {token_id}>"
        return repr(self.token_bytes[token_id])

    def ids_for_bytes(self, data: bytes) -> list[int]:
        """All ordinary ids whose bytes equal `data` (SentencePiece may have several)."""
        if not data:
            return []
        return [i for i, b in enumerate(self.token_bytes) if b == data]

    @cached_property
    def token_lengths(self) -> np.ndarray:
        """int32 byte length per id (0 for special ids); read-only."""
        lengths = np.fromiter(map(len, self.token_bytes), dtype=np.int32, count=self.size)
        lengths.flags.writeable = False
        return lengths

    @cached_property
    def token_data(self) -> np.ndarray:
        """uint8: every id's bytes, one after another (id i's are token_data[token_offsets[i]:
        token_offsets[i + 1]]); read-only."""
        return np.frombuffer(b"".join(self.token_bytes), dtype=np.uint8)

    @cached_property
    def token_offsets(self) -> np.ndarray:
        """int64, size + 1: where each id's bytes start in `token_data` (the last: its length); read-only."""
        offsets = np.zeros(self.size + 1, dtype=np.int64)
        offsets[1:] = np.cumsum(self.token_lengths)
        offsets.flags.writeable = False
        return offsets

    @cached_property
    def token_positions(self) -> np.ndarray:
        """int64, one per byte of `token_data`: its index inside its token; read-only."""
        positions = positions_within(self.token_lengths.astype(np.int64))
        positions.flags.writeable = False
        return positions

    def byte_matrix(self) -> np.ndarray:
        """uint8 array (size, max length): row i holds token i's bytes, zero padded.

        Use with `token_lengths` to scan the whole vocabulary one byte column at a time.
        """
        lengths = self.token_lengths
        width = int(lengths.max(initial=0))
        matrix = np.zeros((self.size, max(width, 1)), dtype=np.uint8)
        rows = np.repeat(np.arange(self.size), lengths)
        matrix[rows, self.token_positions] = self.token_data
        return matrix

    def __repr__(self) -> str:
        return (f"Vocabulary(name={self.name!r}, size={self.size}, specials={len(self.special_ids)}, "
                f"eos_ids={self.eos_ids}, fingerprint={self.fingerprint[:12]}...)")
