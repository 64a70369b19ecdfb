"""Artifacts for tests and the exactness runner, built once per process into a temporary folder.

`built(grammar, tokenizer)` compiles and loads; the tokenizer "small-gpt2" (`vocabulary`) is a 4,001-token
slice of the GPT-2 vocabulary (the first 4,000 tokens and an EOS) for tests that try every token at many
states.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import glrmask_runtime
from devtools.data import REPO_ROOT, lark_grammars_dir
from glrmask_cli.lexer_option import DEFAULT_LEXER, LexerKind
from glrmask_cli.limits import DEFAULTS, BuildLimits
from glrmask_cli.pipeline import Compiled, build_artifact
from glrmask_cli.vocab.registry import load_vocabulary
from glrmask_cli.vocab.vocabulary import Vocabulary

JSON_GRAMMAR = REPO_ROOT / "grammars" / "json.lark"
LARK_GRAMMARS = lark_grammars_dir()


@functools.cache
def _out() -> Path:
    """The process's folder for built artifacts, made on the first build (a worker process that
    imports this module and builds nothing, e.g. one a pool terminates, leaves none) and removed when
    the process that made it exits (not by a forked worker that inherited it)."""
    folder = Path(tempfile.mkdtemp(prefix="glrmask-test-builds-"))
    owner = os.getpid()

    def remove() -> None:
        if os.getpid() == owner:
            shutil.rmtree(folder, ignore_errors=True)

    atexit.register(remove)
    return folder


@dataclass(frozen=True)
class Built:
    artifact: glrmask_runtime.Artifact
    vocab: Vocabulary
    compiled: Compiled
    path: Path


@functools.lru_cache(maxsize=None)
def vocabulary(spec: str) -> Vocabulary:
    """A vocabulary by registry spec, or "small-gpt2"."""
    if spec == "small-gpt2":
        gpt2 = load_vocabulary("gpt2")
        tokens = list(gpt2.token_bytes[:4000]) + [b""]
        return Vocabulary.from_tokens("small-gpt2", tokens, special_names={4000: "<|endoftext|>"}, eos_ids=[4000])
    return load_vocabulary(spec)


@functools.lru_cache(maxsize=None)
def built(grammar: str | os.PathLike, tokenizer: str = "gpt2", start: str | None = None,
          layout: str = "auto", limits: BuildLimits = DEFAULTS, lexer: LexerKind = DEFAULT_LEXER) -> Built:
    """The grammar built and loaded, once per argument set (the limits are part of the key)."""
    vocab = vocabulary(tokenizer)
    # same stem, other file or other limits: another artifact
    tag = hashlib.sha256(f"{Path(grammar).resolve()}\0{limits!r}".encode()).hexdigest()[:8]
    out = _out() / f"{Path(grammar).stem}-{tag}-{start or 'start'}-{Path(tokenizer).name}-{layout}-{lexer}.glrm"
    result = build_artifact(grammar, out, tokenizer=vocab, start=start, layout=layout, limits=limits, lexer=lexer)
    return Built(glrmask_runtime.load(out), vocab, result.compiled, out)
