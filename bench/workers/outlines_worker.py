"""outlines-core worker (runs in .cache/bench/outlines): a regex -> Index -> Guide per document.

Only for workloads whose language fits a regex: JSON through outlines-core's own schema-to-regex
(schema `{}`, nesting bounded by max_recursion_depth, whitespace as given). The vocabulary holds every
non-special token; the first EOS id is the Vocabulary's eos. Artifact: the pickled Index.
"""

from __future__ import annotations

import pickle
from importlib.metadata import version

import numpy as np
import outlines_core
import worker_common as wc


def _vocabulary(spec: dict) -> outlines_core.Vocabulary:
    by_bytes: dict[bytes, list[int]] = {}
    for token_id, token in enumerate(wc.id_to_bytes(spec)):
        if token is not None:
            by_bytes.setdefault(token, []).append(token_id)
    return outlines_core.Vocabulary(spec["eos_ids"][0], by_bytes)


def _regex(grammar: dict) -> str:
    cfg = grammar.get("outlines")
    if not cfg:
        raise SystemExit("outlines: this workload has no regex form (its language is not regular)")
    return outlines_core.json_schema.build_regex_from_schema(
        cfg["schema"], cfg["whitespace"], cfg["max_recursion_depth"])


class Engine:
    version = version("outlines-core")

    def __init__(self, index):
        self.index = index

    def new_state(self):
        return outlines_core.Guide(self.index)

    def fill(self, state, bitmask: np.ndarray) -> None:
        state.write_mask_into(bitmask.ctypes.data, bitmask.shape[1], 4)

    def commit(self, state, token_id: int) -> bool:
        try:
            state.advance(token_id, return_tokens=False)
        except ValueError:
            return False
        return True


def make_engine(job: dict):
    vocab, t_tok = wc.timed(lambda: _vocabulary(job["tokenizer"]))
    regex = _regex(job["grammar"])
    index, cold, memory = wc.compile_timed(lambda: outlines_core.Index(regex, vocab))
    blob = pickle.dumps(index)
    loads = [wc.timed(lambda: pickle.loads(blob))[1] for _ in range(3)]
    setup = {"tokenizer_s": t_tok, "compile_cold_s": t_tok + cold, "compile_warm_s": None, "compile_memory": memory,
             "artifact_bytes": len(blob), "load_ms": sorted(loads)[1] * 1e3, "regex_chars": len(regex),
             "compile_note": "warm compile not repeated (a second Index build costs the same)"}
    return Engine(index), setup


def load_for_memory(job: dict):
    return outlines_core.Guide(outlines_core.Index(_regex(job["grammar"]), _vocabulary(job["tokenizer"])))


def touch(guide, bitmask: np.ndarray) -> None:
    guide.write_mask_into(bitmask.ctypes.data, bitmask.shape[1], 4)


if __name__ == "__main__":
    wc.run(make_engine, load_for_memory, touch)
