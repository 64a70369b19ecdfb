"""One loader per vocabulary file format: .tiktoken, Hugging Face tokenizer.json, SentencePiece .model.

Input: file bytes or a `tokenizers.Tokenizer`; output: a `Vocabulary` (token id -> bytes, specials,
EOS, a lazy text encoder). Policy: HF byte-level pieces invert the GPT-2 byte-to-unicode map;
SentencePiece pieces read `▁` as a space and `<0xNN>` as one byte; encoders never add a dummy
prefix space or BOS, so the bytes of encode(text) are exactly text's UTF-8 bytes.
Limits: WordPiece/Unigram-without-`▁` tokenizer.json files are rejected with a TokenizerError.
"""

from __future__ import annotations

import binascii
import functools
import itertools
import json
import re
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from glrmask_cli.errors import TokenizerError
from glrmask_cli.vocab.vocabulary import Vocabulary

# Names that end generation when a tokenizer.json/hub tokenizer has no config saying otherwise.
DEFAULT_EOS_NAMES = ("<|endoftext|>", "<|end_of_text|>", "<|eot_id|>", "<|eom_id|>", "<|im_end|>",
                     "</s>", "<｜end▁of▁sentence｜>", "<eos>", "<end_of_turn>")
SENTENCEPIECE_HINT = "pip install 'glrmask[sentencepiece]' (or: pip install sentencepiece)"
# Appended to a SentencePiece ModelProto: a second normalizer_spec (field 3) whose
# add_dummy_prefix (3) and remove_extra_whitespaces (4) are false; protobuf merges it over the first.
_SP_PLAIN_TEXT_SPEC = b"\x1a\x04\x18\x00\x20\x00"
_SP_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


# -- .tiktoken ------------------------------------------------------------------------------

_strict_b64decode = functools.partial(binascii.a2b_base64, strict_mode=True)


def parse_tiktoken(data: bytes, where: str) -> list[bytes]:
    """`base64(token) rank` lines -> bytes per rank; ranks missing from the file get b""."""
    try:
        tokens, ranks = _split_fast(data)
    except (ValueError, binascii.Error):
        tokens, ranks = _split_by_line(data, where)
    if ranks == list(range(len(ranks))):
        by_rank = tokens
    else:
        by_rank = [b""] * (max(ranks) + 1)
        for token, rank in zip(tokens, ranks):
            if by_rank[rank]:
                raise TokenizerError(f"{where}: rank {rank} appears twice; not a valid .tiktoken file")
            by_rank[rank] = token
    if len(set(tokens)) != len(tokens):
        raise TokenizerError(f"{where}: the same token bytes have two ranks; not a valid .tiktoken file")
    return by_rank


def _split_fast(data: bytes) -> tuple[list[bytes], list[int]]:
    """One split of the whole file (C speed); the line count proves every line had two fields."""
    fields = data.split()
    lines = data.splitlines()
    if not fields or len(fields) != 2 * (len(lines) - lines.count(b"")):
        raise ValueError("not two fields per line")
    tokens = list(map(_strict_b64decode, fields[0::2]))
    ranks = list(map(int, fields[1::2]))
    if min(ranks) < 0:
        raise ValueError("negative rank")
    return tokens, ranks


def _split_by_line(data: bytes, where: str) -> tuple[list[bytes], list[int]]:
    """Line by line, so that a malformed line can be named in the error."""
    tokens, ranks = [], []
    for number, line in enumerate(data.splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        try:
            if len(parts) != 2 or int(parts[1]) < 0:
                raise ValueError("not `base64 rank`")
            tokens.append(_strict_b64decode(parts[0]))
            ranks.append(int(parts[1]))
        except (ValueError, binascii.Error):
            shown = line[:40].decode("latin-1")
            raise TokenizerError(f"{where}:{number}: expected `base64 rank`, found {shown!r}; "
                                 "not a .tiktoken file") from None
    if not tokens:
        raise TokenizerError(f"{where}: no `base64 rank` lines; not a .tiktoken file")
    return tokens, ranks


class TiktokenEncoder:
    """Ordinary text -> ids with tiktoken's BPE; the Encoding is built on first use."""

    def __init__(self, name: str, pattern: str, tokens: Sequence[bytes], special_tokens: Mapping[str, int]):
        self._args = (name, pattern, tokens, dict(special_tokens))
        self._encoding: Any = None
        self._lock = threading.Lock()

    def build(self) -> Any:
        """Build (once) and return the tiktoken.Encoding; a bad pattern is a TokenizerError."""
        with self._lock:
            if self._encoding is None:
                import tiktoken

                name, pattern, tokens, special = self._args
                ranks = {token: rank for rank, token in enumerate(tokens) if token}
                try:
                    self._encoding = tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks,
                                                       special_tokens=special)
                except ValueError as err:
                    raise TokenizerError(f"{name}: cannot build the encoder ({err}); "
                                         "check --tokenizer-pattern") from err
            return self._encoding

    def __call__(self, text: str) -> list[int]:
        return self.build().encode_ordinary(text)


def vocabulary_from_tiktoken(tokens: list[bytes], *, name: str, source: str, pattern: str | None,
                             special_tokens: Mapping[str, int], eos_names: Sequence[str] = (),
                             n_vocab: int | None = None) -> Vocabulary:
    """Ranks + the model's special tokens -> Vocabulary; ids between ranks and specials are unused."""
    size = max([len(tokens), *(i + 1 for i in special_tokens.values()), n_vocab or 0])
    padded = tokens + [b""] * (size - len(tokens))
    for special_name, token_id in special_tokens.items():
        if token_id < len(tokens) and tokens[token_id]:
            raise TokenizerError(f"{source}: special token {special_name} id {token_id} is also a rank")
    encoder = TiktokenEncoder(name, pattern, tokens, special_tokens) if pattern else None
    names = {token_id: special_name for special_name, token_id in special_tokens.items()}
    eos = [special_tokens[n] for n in eos_names if n in special_tokens]
    return Vocabulary.from_tokens(name, padded, special_names=names, eos_ids=eos,
                                  encoder=encoder, source=source)


# -- Hugging Face tokenizer.json --------------------------------------------------------------

def _gpt2_unicode_to_byte() -> dict[int, int]:
    """Inverse of GPT-2's byte-to-unicode map: printable Latin-1 bytes are themselves,
    the other 68 bytes map, in increasing order, to U+0100 onwards."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    others = [b for b in range(256) if b not in set(printable)]
    table = {b: b for b in printable}
    table.update({0x100 + k: b for k, b in enumerate(others)})
    return table


_UNICODE_TO_BYTE = _gpt2_unicode_to_byte()
_BYTE_LEVEL_CHARS = frozenset(chr(c) for c in _UNICODE_TO_BYTE)
_TRANSLATE_TO_LATIN1 = {c: chr(b) for c, b in _UNICODE_TO_BYTE.items()}


def byte_level_pieces_to_bytes(pieces: Sequence[str], where: str) -> list[bytes]:
    """Byte-level BPE pieces -> bytes (one character = one byte), in one translate pass."""
    joined = "".join(pieces)
    foreign = set(joined) - _BYTE_LEVEL_CHARS
    if foreign:
        bad = next(p for p in pieces if set(p) & foreign)
        raise TokenizerError(f"{where}: piece {bad!r} is not byte-level BPE text; "
                             "unsupported tokenizer.json")
    blob = joined.translate(_TRANSLATE_TO_LATIN1).encode("latin-1")
    ends = list(itertools.accumulate(map(len, pieces)))
    return [blob[start:end] for start, end in zip([0, *ends[:-1]], ends)]


def sentencepiece_piece_to_bytes(piece: str) -> bytes:
    """`<0xNN>` is byte NN; otherwise `▁` is a space and the rest is UTF-8 text."""
    match = _SP_BYTE_PIECE.fullmatch(piece)
    if match:
        return bytes([int(match.group(1), 16)])
    return piece.replace("\u2581", " ").encode("utf-8")


def _component_types(node: Any) -> set[str]:
    """All `type` names in a tokenizer.json component tree (Sequence nodes included)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("type"), str):
                found.add(item["type"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _piece_style(tok: Any, where: str) -> str:
    """'byte_level' or 'sentencepiece', from the decoder (else the pre-tokenizer)."""
    for component in (tok.decoder, tok.pre_tokenizer):
        if component is None:
            continue
        types = _component_types(_state(component))
        if "ByteLevel" in types:
            return "byte_level"
        if types & {"Metaspace", "ByteFallback", "Replace"}:
            return "sentencepiece"
    raise TokenizerError(f"{where}: neither a byte-level nor a SentencePiece-style tokenizer "
                         "(WordPiece and others are not supported)")


def _model_pieces(model_vocab: Mapping[str, int], skip: Collection[int]) -> tuple[list[int], list[str]]:
    """Model pieces in id order (vectorized sort), leaving out ids that added tokens redefine."""
    pieces = list(model_vocab)
    ids = np.fromiter(model_vocab.values(), dtype=np.int64, count=len(pieces))
    order = np.argsort(ids, kind="stable")
    if skip:
        order = order[~np.isin(ids[order], np.fromiter(skip, dtype=np.int64))]
    return ids[order].tolist(), list(map(pieces.__getitem__, order.tolist()))


def vocabulary_from_hf(tok: Any, *, name: str, source: str, config_eos: Sequence[str | int] = ()) -> Vocabulary:
    """A loaded `tokenizers.Tokenizer` -> Vocabulary. `config_eos`: EOS names/ids from its config."""
    style = _piece_style(tok, source)
    model_vocab: dict[str, int] = tok.get_vocab(with_added_tokens=False)
    added = tok.get_added_tokens_decoder()
    size = 1 + max([*model_vocab.values(), *added.keys()])
    tokens = [b""] * size
    ids, pieces = _model_pieces(model_vocab, skip=added.keys())
    if style == "byte_level":
        converted = byte_level_pieces_to_bytes(pieces, source)
    else:
        converted = [sentencepiece_piece_to_bytes(p) for p in pieces]
    for token_id, data in zip(ids, converted):
        tokens[token_id] = data
    names: dict[int, str] = {}
    for token_id, added_token in sorted(added.items()):
        if added_token.special:
            names[token_id] = added_token.content
        else:
            tokens[token_id] = added_token.content.encode("utf-8")
    ids_by_text = {**model_vocab, **{t.content: i for i, t in sorted(added.items())}} if config_eos else {}
    eos = _resolve_eos(config_eos, names, ids_by_text, tokens, source)
    return Vocabulary.from_tokens(name, tokens, special_names=names, eos_ids=eos,
                                  encoder=HFEncoder(tok, style), source=source)


def _resolve_eos(config_eos: Sequence[str | int], names: dict[int, str], ids_by_text: Mapping[str, int],
                 tokens: Sequence[bytes], where: str) -> list[int]:
    """EOS ids from the config (token texts or ids) or, failing that, DEFAULT_EOS_NAMES among specials.

    A config EOS that is an ordinary token is added to `names`, so it becomes a control token.
    """
    if config_eos:
        eos = []
        for item in config_eos:
            token_id = item if isinstance(item, int) else ids_by_text.get(item)
            if token_id is None or not 0 <= token_id < len(tokens):
                raise TokenizerError(f"{where}: EOS token {item!r} from the tokenizer config is not "
                                     "in the vocabulary; pass --eos-token")
            text = tokens[token_id].decode("utf-8", "backslashreplace") or f"<eos {token_id}>"
            names.setdefault(token_id, item if isinstance(item, str) else text)
            eos.append(token_id)
        return eos
    by_name = {text: token_id for token_id, text in names.items()}
    return [by_name[n] for n in DEFAULT_EOS_NAMES if n in by_name]


def _without_prefix_space(node: Any) -> bool:
    """Turn off dummy-prefix insertion in a tokenizer.json tree in place; True if it changed."""
    changed = False
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            kept = [x for x in item if not (isinstance(x, dict) and x.get("type") == "Prepend")]
            changed |= len(kept) != len(item)
            item[:] = kept
            stack.extend(item)
        elif isinstance(item, dict):
            if item.get("type") in ("Metaspace", "ByteLevel") and item.get("add_prefix_space"):
                item["add_prefix_space"] = False
                changed = True
            if item.get("type") == "Metaspace" and item.get("prepend_scheme", "never") != "never":
                item["prepend_scheme"] = "never"
                changed = True
            stack.extend(item.values())
    return changed


def _state(component: Any) -> Any:
    """A tokenizers component as its tokenizer.json subtree (None stays None)."""
    return None if component is None else json.loads(component.__getstate__())


def encode_keeping_meta_space(text: str, encode: Callable[[str], list[int]],
                              byte_id: Callable[[str], int | None], where: str) -> list[int]:
    """SentencePiece reads a literal `▁` (U+2581) as a space; spell it with its three byte pieces."""
    if "\u2581" not in text:
        return encode(text)
    spelled = [byte_id(f"<0x{b:02X}>") for b in "\u2581".encode("utf-8")]
    if None in spelled:
        raise TokenizerError(f"{where}: text contains U+2581, which this vocabulary cannot spell "
                             "(no byte-fallback pieces)")
    out: list[int] = []
    for k, part in enumerate(text.split("\u2581")):
        if k:
            out.extend(spelled)  # type: ignore[arg-type]
        if part:
            out.extend(encode(part))
    return out


class HFEncoder:
    """Ordinary text -> ids with `tokenizers`: no BOS, no dummy prefix, special text kept as text."""

    def __init__(self, tok: Any, style: str):
        self._tok = tok
        self._style = style
        self._ready: Any = None
        self._lock = threading.Lock()

    def _build(self) -> Any:
        with self._lock:
            if self._ready is None:
                import tokenizers

                tok = self._tok
                parts = {"normalizer": _state(tok.normalizer), "pre_tokenizer": _state(tok.pre_tokenizer)}
                if _without_prefix_space(parts):   # rebuild only when needed: to_str is slow
                    spec = json.loads(tok.to_str())
                    spec.update(parts)
                    tok = tokenizers.Tokenizer.from_str(json.dumps(spec))
                tok.encode_special_tokens = True
                self._ready = tok
            return self._ready

    def __call__(self, text: str) -> list[int]:
        tok = self._build()
        encode = lambda part: tok.encode(part, add_special_tokens=False).ids  # noqa: E731
        if self._style == "sentencepiece":
            return encode_keeping_meta_space(text, encode, tok.token_to_id, "tokenizer.json")
        return encode(text)


def config_eos_near(folder: Path) -> list[str | int]:
    """EOS names/ids from generation_config.json and tokenizer_config.json beside a tokenizer file."""
    found: list[str | int] = []
    for filename, key in (("generation_config.json", "eos_token_id"), ("tokenizer_config.json", "eos_token")):
        path = folder / filename
        if not path.is_file():
            continue
        try:
            value = json.loads(path.read_text(encoding="utf-8")).get(key)
        except (OSError, ValueError, AttributeError) as err:
            raise TokenizerError(f"{path}: unreadable ({err}); fix or remove it, or pass --eos-token") from err
        if isinstance(value, dict):
            value = value.get("content")
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, (int, str)) and item not in found:
                found.append(item)
    return found


def load_tokenizer_json(path: Path) -> Vocabulary:
    """A tokenizer.json file -> Vocabulary (EOS from a config beside it, else by name)."""
    import tokenizers

    try:
        tok = tokenizers.Tokenizer.from_file(str(path))
    except Exception as err:  # tokenizers raises bare Exception for every parse problem
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise TokenizerError(f"{path}: not a readable tokenizer.json ({first})") from err
    return vocabulary_from_hf(tok, name=path.name, source=str(path), config_eos=config_eos_near(path.parent))


def load_hub_tokenizer(hub_id: str) -> Vocabulary:
    """A Hugging Face hub id -> Vocabulary via `Tokenizer.from_pretrained` (network or HF cache)."""
    import tokenizers

    try:
        tok = tokenizers.Tokenizer.from_pretrained(hub_id)
    except Exception as err:  # offline, unknown repo, gated repo: all surface as Exception
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        first = first if len(first) <= 120 else first[:117] + "..."
        raise TokenizerError(f"hub id {hub_id}: cannot fetch tokenizer.json ({first}); "
                             "download it and pass its path, or check the network") from err
    return vocabulary_from_hf(tok, name=hub_id, source=f"hf:{hub_id}")


# -- SentencePiece .model -----------------------------------------------------------------------

def _import_sentencepiece(where: str) -> Any:
    try:
        import sentencepiece
    except ImportError as err:
        raise TokenizerError(f"{where}: SentencePiece models need the sentencepiece package; "
                             f"{SENTENCEPIECE_HINT}") from err
    return sentencepiece


def _sentencepiece_processor(data: bytes, where: str) -> Any:
    spm = _import_sentencepiece(where)
    processor = spm.SentencePieceProcessor()
    try:
        processor.LoadFromSerializedProto(data)
    except Exception as err:  # sentencepiece raises RuntimeError/OSError variants
        raise TokenizerError(f"{where}: not a readable SentencePiece model ({err})") from err
    return processor


class SentencePieceEncoder:
    """Ordinary text -> ids with sentencepiece, without dummy prefix or whitespace folding."""

    def __init__(self, data: bytes, where: str):
        self._data = data
        self._where = where
        self._processor: Any = None
        self._lock = threading.Lock()

    def __call__(self, text: str) -> list[int]:
        with self._lock:
            if self._processor is None:
                self._processor = _sentencepiece_processor(self._data + _SP_PLAIN_TEXT_SPEC, self._where)
        processor = self._processor
        return encode_keeping_meta_space(text, lambda part: processor.encode(part, out_type=int),
                                         self._byte_piece_id, self._where)

    def _byte_piece_id(self, piece: str) -> int | None:
        token_id = self._processor.piece_to_id(piece)
        return token_id if self._processor.is_byte(token_id) else None


def load_sentencepiece(path: Path, data: bytes) -> Vocabulary:
    """A SentencePiece ModelProto -> Vocabulary (control/unknown/unused pieces are special)."""
    where = str(path)
    processor = _sentencepiece_processor(data, where)
    tokens: list[bytes] = []
    names: dict[int, str] = {}
    for token_id in range(processor.get_piece_size()):
        piece = processor.id_to_piece(token_id)
        if processor.is_control(token_id) or processor.is_unknown(token_id):
            names[token_id] = piece
            tokens.append(b"")
        elif processor.is_unused(token_id):
            tokens.append(b"")
        elif processor.is_byte(token_id):
            tokens.append(sentencepiece_piece_to_bytes(piece))
        else:
            tokens.append(piece.replace("\u2581", " ").encode("utf-8"))
    eos = [processor.eos_id()] if processor.eos_id() >= 0 else []
    encoder: Callable[[str], list[int]] = SentencePieceEncoder(data, where)
    return Vocabulary.from_tokens(path.name, tokens, special_names=names, eos_ids=eos,
                                  encoder=encoder, source=where)
