"""llguidance worker (runs in .cache/bench/llguidance): Lark text -> LLMatcher; packed bitmask fill.

Tokenizer: LLTokenizer.from_tiktoken over the same ranks, pattern and special tokens as the harness.
llguidance has no artifact: `load` is the time to build a matcher from the grammar text (its compile).
Schema mode: LLMatcher.grammar_from_json_schema with whitespace_flexible (its default, said explicitly);
the compile is that and the first matcher (which compiles the grammar), refused if it is in error.
"""

from __future__ import annotations

import llguidance
import llguidance.numpy
import numpy as np
import worker_common as wc


def _tokenizer(spec: dict) -> llguidance.LLTokenizer:
    return llguidance.LLTokenizer.from_tiktoken(
        encoder=wc.read_ranks(spec["file"]), special_tokens=spec["special_tokens"], pattern=spec["pattern"],
        eos_token=spec["eos_ids"], n_vocab=spec["vocab_size"])


def _matcher(tokenizer, grammar: str) -> llguidance.LLMatcher:
    matcher = llguidance.LLMatcher(tokenizer, grammar, log_level=0)
    if matcher.is_error():
        raise SystemExit(f"llguidance: grammar rejected: {matcher.get_error()}")
    return matcher


class Engine:
    version = llguidance.__version__

    def __init__(self, tokenizer, grammar: str):
        self.tokenizer, self.grammar = tokenizer, grammar

    def new_state(self):
        return _matcher(self.tokenizer, self.grammar)

    def fill(self, state, bitmask: np.ndarray) -> None:
        llguidance.numpy.fill_next_token_bitmask(state, bitmask, 0)

    def commit(self, state, token_id: int) -> bool:
        return state.consume_token(token_id)

    @staticmethod
    def explain(state) -> str | None:
        """llguidance's first error line when the matcher stopped (e.g. its parser item limit)."""
        return state.get_error().splitlines()[0][:200] if state.is_error() else None


def make_engine(job: dict):
    tokenizer, t_tok = wc.timed(lambda: _tokenizer(job["tokenizer"]))
    grammar = job["grammar"]["lark"]
    _, cold, memory = wc.compile_timed(lambda: _matcher(tokenizer, grammar))
    warm = wc.timed(lambda: _matcher(tokenizer, grammar))[1] if wc.warm_wanted(job, t_tok + cold) else None
    setup = {"tokenizer_s": t_tok, "compile_cold_s": t_tok + cold, "compile_warm_s": warm, "compile_memory": memory,
             "artifact_bytes": None, "load_ms": (warm if warm is not None else cold) * 1e3,
             "load_note": "no artifact: matcher built from text"}
    return Engine(tokenizer, grammar), setup


class SchemaCompiler:
    """Schema mode: a JSON Schema as llguidance's own JSON grammar; no artifact (size `-`)."""

    version = llguidance.__version__
    refusals = (ValueError, RuntimeError)

    def __init__(self, job: dict) -> None:
        self.tokenizer = _tokenizer(job["tokenizer"])

    def compile(self, schema) -> str:
        grammar = llguidance.LLMatcher.grammar_from_json_schema(schema, overrides={"whitespace_flexible": True})
        matcher = llguidance.LLMatcher(self.tokenizer, grammar, log_level=0)
        if matcher.is_error():
            raise ValueError(matcher.get_error())
        return grammar

    def engine(self, grammar: str) -> tuple[Engine, dict]:
        return Engine(self.tokenizer, grammar), {"artifact_bytes": None}


def load_for_memory(job: dict):
    return _matcher(_tokenizer(job["tokenizer"]), job["grammar"]["lark"])


if __name__ == "__main__":
    wc.run(make_engine, load_for_memory, lambda matcher, bitmask: llguidance.numpy.fill_next_token_bitmask(
        matcher, bitmask, 0), SchemaCompiler)
