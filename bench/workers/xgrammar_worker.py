"""xgrammar worker (runs in .cache/bench/xgrammar): builtin JSON grammar or Lark text -> GrammarMatcher.

Tokenizer: TokenizerInfo over the raw token bytes (VocabType.RAW); special ids and holes are empty
strings, which xgrammar treats as special. Compiler: one thread, cache off (so a warm compile is a
real compile). Artifact: CompiledGrammar.serialize_json(); load = deserialize_json with the tokenizer.
Schema mode: GrammarCompiler.compile_json_schema with any_whitespace=True and strict_mode=False (its
default strict mode forbids properties and items the schema does not declare, which the JSON Schema
specification allows); strict_mode=True for the maskbench-strict workload (job['strict']).
"""

from __future__ import annotations

import json

import numpy as np
import worker_common as wc
import xgrammar


def _tokenizer_info(spec: dict) -> xgrammar.TokenizerInfo:
    vocab = [b if b is not None else b"" for b in wc.id_to_bytes(spec)]
    return xgrammar.TokenizerInfo(vocab, xgrammar.VocabType.RAW, vocab_size=spec["vocab_size"],
                                  stop_token_ids=spec["eos_ids"])


def _compile(compiler: xgrammar.GrammarCompiler, grammar: dict):
    if grammar.get("xgrammar_builtin_json"):
        return compiler.compile_builtin_json_grammar()
    return compiler.compile_lark(grammar["lark"])


class Engine:
    version = getattr(xgrammar, "__version__", "0.2.8")

    def __init__(self, compiled):
        self.compiled = compiled

    def new_state(self):
        return xgrammar.GrammarMatcher(self.compiled)

    def fill(self, state, bitmask: np.ndarray) -> None:
        state.fill_next_token_bitmask(bitmask, 0)

    def commit(self, state, token_id: int) -> bool:
        return state.accept_token(token_id)


def make_engine(job: dict):
    info, t_tok = wc.timed(lambda: _tokenizer_info(job["tokenizer"]))
    compiler = xgrammar.GrammarCompiler(info, max_threads=1, cache_enabled=False)
    compiled, cold, memory = wc.compile_timed(lambda: _compile(compiler, job["grammar"]))
    warm = wc.timed(lambda: _compile(compiler, job["grammar"]))[1] if wc.warm_wanted(job, t_tok + cold) else None
    blob = compiled.serialize_json()
    loads = [wc.timed(lambda: xgrammar.CompiledGrammar.deserialize_json(blob, info))[1] for _ in range(3)]
    setup = {"tokenizer_s": t_tok, "compile_cold_s": t_tok + cold, "compile_warm_s": warm,
             "compile_memory": memory, "artifact_bytes": len(blob.encode()), "load_ms": sorted(loads)[1] * 1e3,
             "grammar_form": "builtin JSON" if job["grammar"].get("xgrammar_builtin_json") else "Lark"}
    return Engine(compiled), setup


class SchemaCompiler:
    """Schema mode: compile_json_schema, one thread, cache off; artifact = serialize_json()."""

    version = Engine.version
    refusals = (ValueError, RuntimeError)

    def __init__(self, job: dict) -> None:
        self.compiler = xgrammar.GrammarCompiler(_tokenizer_info(job["tokenizer"]), max_threads=1,
                                                 cache_enabled=False)
        self.strict = bool(job.get("strict"))

    def compile(self, schema):
        return self.compiler.compile_json_schema(json.dumps(schema), any_whitespace=True, strict_mode=self.strict)

    def engine(self, compiled) -> tuple[Engine, dict]:
        return Engine(compiled), {"artifact_bytes": len(compiled.serialize_json().encode())}


def load_for_memory(job: dict):
    info = _tokenizer_info(job["tokenizer"])
    compiler = xgrammar.GrammarCompiler(info, max_threads=1, cache_enabled=False)
    return xgrammar.GrammarMatcher(_compile(compiler, job["grammar"]))


def touch(matcher, bitmask: np.ndarray) -> None:
    matcher.fill_next_token_bitmask(bitmask, 0)


if __name__ == "__main__":
    wc.run(make_engine, load_for_memory, touch, SchemaCompiler)
