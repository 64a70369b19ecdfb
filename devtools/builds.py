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
_OUT = Path(tempfile.mkdtemp(prefix="glrmask-test-builds-"))
_OWNER = os.getpid()


@atexit.register
def _remove_builds() -> None:
    """The folder goes with the process that made it (not with a forked worker that inherited it)."""
    if os.getpid() == _OWNER:
        shutil.rmtree(_OUT, ignore_errors=True)


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
    out = _OUT / f"{Path(grammar).stem}-{tag}-{start or 'start'}-{Path(tokenizer).name}-{layout}-{lexer}.glrm"
    result = build_artifact(grammar, out, tokenizer=vocab, start=start, layout=layout, limits=limits, lexer=lexer)
    return Built(glrmask_runtime.load(out), vocab, result.compiled, out)
