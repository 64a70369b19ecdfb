"""On-disk cache of built artifacts, so that building the same grammar for the same tokenizer again
is a file read.

Key: sha256 over the resolved grammar (terminals, rules, ignore list, start, file name and sha256:
what the compiler reads, imports included), the tokenizer's fingerprint and EOS ids, the layout and
build limits, and the compiler itself (the sha256 of every source file of `glrmask_cli` and
`glrmask_runtime`, so a changed compiler never reuses an old artifact).
Location: `<runtime cache dir>/builds/<key>.glrm` (`glrmask_runtime.cache.cache_dir`: the same
`$GLRMASK_CACHE_DIR`, where the empty string disables both caches), with a bound of its own of
`$GLRMASK_CACHE_MAX_BYTES`, as the image cache has (least recently used entries go first).
Entries are written atomically (`output.write_output`); one that does not decode as the artifact it
should be is rebuilt.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import glrmask_runtime
from glrmask_cli.grammar import GrammarSpec
from glrmask_cli.limits import BuildLimits
from glrmask_cli.output import write_output
from glrmask_runtime.cache import cache_dir, evict, max_bytes, touch
from glrmask_runtime.errors import GLRMaskError
from glrmask_runtime.format import read_container

SUFFIX = ".glrm"


@functools.lru_cache(maxsize=1)
def compiler_fingerprint() -> str:
    """sha256 of the compiler's and the runtime's source files (paths and contents)."""
    digest = hashlib.sha256()
    for package in (Path(__file__).parent, Path(glrmask_runtime.__file__).parent):
        for path in sorted(package.rglob("*.py")):
            digest.update(str(path.relative_to(package.parent)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def build_key(grammar: GrammarSpec, fingerprint: str, eos_ids: tuple[int, ...], layout: str,
              limits: BuildLimits, lexer: str) -> str:
    content = {
        "grammar": {"name": grammar.name, "sha256": grammar.sha256, "start": grammar.start,
                    "terminals": [[t.name, t.value, sorted(t.flags), t.priority, t.is_literal, t.display]
                                  for t in grammar.terminals],
                    "rules": [[r.lhs, list(r.rhs)] for r in grammar.rules], "ignore": list(grammar.ignore)},
        "tokenizer": [fingerprint, list(eos_ids)],
        "layout": layout, "limits": asdict(limits), "compiler": compiler_fingerprint(), "lexer": lexer,
    }
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


def entry_path(key: str) -> Path | None:
    directory = cache_dir()
    return None if directory is None else directory / "builds" / f"{key}{SUFFIX}"


@dataclass(frozen=True)
class Entry:
    path: Path
    data: bytes
    metadata: dict


def lookup(key: str, grammar_sha256: str, fingerprint: str) -> Entry | None:
    """The cached artifact for `key`, if present, valid and naming this grammar and tokenizer."""
    path = entry_path(key)
    if path is None:
        return None
    try:
        metadata = read_container(path).metadata       # validates the file (integrity, format)
        data = path.read_bytes()
    except (OSError, GLRMaskError):
        return None
    if (metadata.get("grammar", {}).get("sha256") != grammar_sha256
            or metadata.get("tokenizer", {}).get("fingerprint") != fingerprint):
        return None
    touch(path)
    return Entry(path, data, metadata)


def store(key: str, data: bytes) -> Path | None:
    """Write an entry (atomically); None when the cache is disabled or cannot be written."""
    path = entry_path(key)
    if path is None:
        return None
    limit = max_bytes()
    if len(data) > limit:
        return None
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_output(path, data)
    except (OSError, GLRMaskError):
        return None
    evict(path.parent, limit, keep=path.name, suffix=SUFFIX)
    return path
