"""Compile from Python: `compile_grammar(grammar, tokenizer=...) -> GrammarArtifact`, or
`compile_json_schema(schema, tokenizer=...)` for a JSON Schema (docs/json-schema.md).

    import glrmask_cli
    built = glrmask_cli.compile_grammar("grammars/json.lark", tokenizer="gpt2")
    artifact = built.load()                 # a glrmask_runtime.Artifact
    built.write("json.glrm")                # or keep built.data (bytes)

The grammar is a path or Lark text; the tokenizer a name or file (as `glrmask build --tokenizer`),
a `Vocabulary`, or a tokenizer object (`vocab/objects.py`). Tokenizers are loaded once per process
(the cache below), and artifacts come from the on-disk build cache (`build_cache.py`) when the same
grammar, tokenizer and options were built before. `glrmask build` calls this function.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import glrmask_runtime
from glrmask_cli import build_cache
from glrmask_cli.errors import GrammarSyntaxError
from glrmask_cli.grammar import GrammarSpec
from glrmask_cli.json_schema import Whitespace, schema_to_lark
from glrmask_cli.lexer_option import DEFAULT_LEXER, LexerKind
from glrmask_cli.limits import DEFAULTS, BuildLimits
from glrmask_cli.output import write_output
from glrmask_cli.parser_dwa.layout import Layout
from glrmask_cli.pipeline import artifact_metadata, encode_artifact, load_grammar_stage
from glrmask_cli.pipeline import compile_grammar as run_pipeline
from glrmask_cli.progress import NO_PROGRESS, Progress
from glrmask_cli.vocab.objects import pad_vocabulary, vocabulary_from_object
from glrmask_cli.vocab.registry import load_vocabulary, with_eos_tokens
from glrmask_cli.vocab.vocabulary import Vocabulary

TOKENIZER_CACHE_SIZE = 8


@dataclass(frozen=True)
class GrammarArtifact:
    """A built artifact: its bytes, its metadata (what `glrmask inspect` shows), where the build
    cache keeps it (None when the cache is disabled), and whether it came from there."""
    data: bytes
    metadata: dict
    cache_path: Path | None
    from_cache: bool
    seconds: float

    def write(self, path: str | os.PathLike[str]) -> int:
        """Write the artifact (`-`: standard output) as `glrmask build -o` does; returns its size."""
        write_output(path, self.data)
        return len(self.data)

    def load(self) -> glrmask_runtime.Artifact:
        """The runtime artifact (memory-mapped from the build cache; without a cache, from a
        temporary file that is removed once mapped)."""
        if self.cache_path is not None and self.cache_path.is_file():
            return glrmask_runtime.load(self.cache_path)
        handle, temp = tempfile.mkstemp(suffix=".glrm")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(self.data)
            return glrmask_runtime.load(temp)
        finally:
            os.unlink(temp)


def compile_grammar(grammar: str | os.PathLike[str], *, tokenizer: Any = "gpt2", start: str | None = None,
                    eos_tokens: Sequence[str] = (), vocab_size: int | None = None,
                    tokenizer_pattern: str | None = None, layout: Layout = "auto", lexer: LexerKind = DEFAULT_LEXER,
                    limits: BuildLimits = DEFAULTS, use_cache: bool = True,
                    progress: Progress = NO_PROGRESS, jobs: int | None = None) -> GrammarArtifact:
    """Build (or fetch from the build cache) the artifact for `grammar` and `tokenizer`.

    `vocab_size` pads the vocabulary to the model's number of logits (the extra ids are never
    allowed). `jobs`: processes the build may use (default: the CPUs available; the artifact is the
    same for any number, so it is not part of the cache key). Raises the same GLRMaskError subclasses
    as `glrmask build` (GrammarSyntaxError, UnsupportedFeature, TokenizerError, LimitExceeded, ...)."""
    began = time.perf_counter()
    with GrammarFile(grammar) as path:
        spec = _grammar_spec(grammar, path, start, progress)
        vocab = tokenizer_vocabulary(tokenizer, pattern=tokenizer_pattern, eos_tokens=eos_tokens,
                                     vocab_size=vocab_size)
        key = build_cache.build_key(spec, vocab.fingerprint, vocab.eos_ids, layout, limits, lexer)
        hit = build_cache.lookup(key, spec.sha256, vocab.fingerprint) if use_cache else None
        if hit is not None:
            return GrammarArtifact(hit.data, hit.metadata, hit.path, True, time.perf_counter() - began)
        compiled = run_pipeline(path, tokenizer=vocab, start=start, layout=layout, limits=limits, lexer=lexer,
                                progress=progress, grammar=spec, jobs=jobs)
        data = encode_artifact(compiled, progress)
        stored = build_cache.store(key, data) if use_cache else None
    return GrammarArtifact(data, artifact_metadata(compiled), stored, False, time.perf_counter() - began)


_TEXT_SPECS: OrderedDict[tuple[str, str | None], GrammarSpec] = OrderedDict()
_TEXT_SPECS_KEPT = 256
_text_specs_lock = threading.Lock()


def _grammar_spec(grammar: str | os.PathLike[str], path: Path, start: str | None, progress: Progress) -> GrammarSpec:
    """The loaded grammar; for Lark text (a lowered JSON Schema, say), kept per process by the text's
    sha256, since text decides its grammar alone (a repeated schema then skips lark's loader: a build
    cache hit in about 1 ms instead of 8). A file is loaded every time (it or its imports may change)."""
    if GrammarFile.is_path(grammar):
        return load_grammar_stage(path, start=start, progress=progress)
    key = (hashlib.sha256(str(grammar).encode()).hexdigest(), start)
    with _text_specs_lock:
        spec = _TEXT_SPECS.get(key)
        if spec is not None:
            _TEXT_SPECS.move_to_end(key)
            return spec
    spec = load_grammar_stage(path, start=start, progress=progress)
    with _text_specs_lock:
        _TEXT_SPECS[key] = spec
        while len(_TEXT_SPECS) > _TEXT_SPECS_KEPT:
            _TEXT_SPECS.popitem(last=False)
    return spec


def load_json_schema(schema: Any) -> Any:
    """A JSON Schema given as a path to a .json file, JSON text, or the parsed value (dict or bool);
    GrammarSyntaxError if it is not JSON."""
    if isinstance(schema, (dict, bool)):
        return schema
    where, text = "<schema>", schema
    if GrammarFile.is_path(schema):
        where = os.fspath(schema)
        try:
            text = Path(where).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise GrammarSyntaxError(where, f"cannot read the schema: {err}") from err
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise GrammarSyntaxError(f"{where}:{err.lineno}:{err.colno}", f"not JSON: {err.msg}") from err


def json_schema_grammar(schema: Any, *, whitespace: Whitespace = "flexible", strict: bool = False) -> str:
    """The Lark grammar a JSON Schema (as `load_json_schema` takes it) is lowered to
    (`glrmask build --emit-lark`); SchemaUnsupported names a keyword it cannot compile. `strict`:
    objects and tuples take nothing their schema does not declare (docs/json-schema.md, "Strict")."""
    return schema_to_lark(load_json_schema(schema), whitespace, strict)


def compile_json_schema(schema: Any, *, tokenizer: Any = "gpt2", whitespace: Whitespace = "flexible",
                        strict: bool = False, **options: Any) -> GrammarArtifact:
    """`compile_grammar` for a JSON Schema (docs/json-schema.md); `options` as compile_grammar's."""
    return compile_grammar(json_schema_grammar(schema, whitespace=whitespace, strict=strict), tokenizer=tokenizer,
                           **options)


# -- tokenizers, loaded once per process ----------------------------------------------------------

_tokenizers: OrderedDict[tuple, tuple[Any, Vocabulary]] = OrderedDict()
_tokenizers_lock = threading.Lock()


def tokenizer_vocabulary(tokenizer: Any, *, pattern: str | None = None, eos_tokens: Sequence[str] = (),
                         vocab_size: int | None = None) -> Vocabulary:
    """The Vocabulary for a tokenizer name, file, Vocabulary or object; the last few are kept, so
    a second grammar with the same tokenizer does not load it again."""
    if isinstance(tokenizer, Vocabulary) and not eos_tokens and vocab_size is None:
        return tokenizer
    if isinstance(tokenizer, (str, os.PathLike)):
        key: tuple = ("spec", os.fspath(tokenizer), pattern, tuple(eos_tokens), vocab_size)
    else:
        key = ("object", id(tokenizer), pattern, tuple(eos_tokens), vocab_size)
    with _tokenizers_lock:
        hit = _tokenizers.get(key)
        if hit is not None:
            _tokenizers.move_to_end(key)
            return hit[1]
    if isinstance(tokenizer, (str, os.PathLike)):
        vocab = load_vocabulary(os.fspath(tokenizer), pattern=pattern, eos_tokens=eos_tokens)
    else:
        vocab = vocabulary_from_object(tokenizer)
        if eos_tokens:
            vocab = with_eos_tokens(vocab, eos_tokens)
    if vocab_size is not None:
        vocab = pad_vocabulary(vocab, vocab_size)
    with _tokenizers_lock:
        _tokenizers[key] = (tokenizer, vocab)          # the object is kept, so its id stays its own
        while len(_tokenizers) > TOKENIZER_CACHE_SIZE:
            _tokenizers.popitem(last=False)
    return vocab


# -- helpers ----------------------------------------------------------------------------------------

class LarkText(str):
    """Lark grammar text that is never read as a path, even on one line naming a file (a request's
    grammar in a server: reading it as a path would compile, and quote in errors, the server's files)."""


class GrammarFile:
    """A path for the grammar (a context manager): itself, or Lark text written to a temporary file
    (named after its sha256, so messages and the artifact's grammar name are stable)."""

    def __init__(self, grammar: str | os.PathLike[str]) -> None:
        self.grammar = grammar
        self.temp: tempfile.TemporaryDirectory | None = None

    @staticmethod
    def is_path(grammar: str | os.PathLike[str]) -> bool:
        """A path (a PathLike, or a one-line string naming a file, unless it is `LarkText`), not Lark text."""
        return isinstance(grammar, os.PathLike) or (not isinstance(grammar, LarkText) and "\n" not in grammar
                                                    and Path(grammar).is_file())

    def __enter__(self) -> Path:
        if self.is_path(self.grammar):
            return Path(self.grammar)
        text = str(self.grammar)
        self.temp = tempfile.TemporaryDirectory(prefix="glrmask-")
        path = Path(self.temp.name) / f"grammar-{hashlib.sha256(text.encode()).hexdigest()[:12]}.lark"
        path.write_text(text, encoding="utf-8")
        return path

    def __exit__(self, *exc: object) -> None:
        if self.temp is not None:
            self.temp.cleanup()
