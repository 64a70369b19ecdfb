"""Rust GLRMask worker (PyPI `glrmask` 0.5.0, in .cache/bench/glrmask-rs): Lark text -> Constraint.

The grammar is followed by a TokenSet of the EOS ids (that package's way to require an end token), so
the final mask holds EOS exactly when the text is complete. Vocab: every non-special token's bytes.
Artifact: Constraint.save(); load = Constraint.load(bytes, vocab). Its Lark importer ignores %import,
hence the inlined grammar text from the harness.
Schema mode: Grammar.from_json_schema (no options: its separators are json.dumps's `, ` and `: `, no
other whitespace), followed by the EOS TokenSet as above.
"""

from __future__ import annotations

import glrmask
import numpy as np
import worker_common as wc


def _vocab(spec: dict) -> glrmask.Vocab:
    return glrmask.Vocab.from_id_to_bytes(
        {token_id: token for token_id, token in enumerate(wc.id_to_bytes(spec)) if token is not None})


def _grammar(job: dict) -> glrmask.Grammar:
    return _then_eos(glrmask.Grammar.from_lark(job["grammar"]["lark"]), job["tokenizer"]["eos_ids"])


def _then_eos(body: glrmask.Grammar, eos_ids: list[int]) -> glrmask.Grammar:
    return glrmask.Grammar.from_expr(glrmask.Expr.sequence(body, glrmask.TokenSet(eos_ids)))


class Engine:
    version = glrmask.__version__

    def __init__(self, constraint):
        self.constraint = constraint

    def new_state(self):
        return self.constraint.start()

    def fill(self, state, bitmask: np.ndarray) -> None:
        state.fill_mask(bitmask[0])

    def commit(self, state, token_id: int) -> bool:
        return state.commit_token(token_id)


def make_engine(job: dict):
    vocab, t_tok = wc.timed(lambda: _vocab(job["tokenizer"]))
    constraint, cold, memory = wc.compile_timed(lambda: _grammar(job).compile(vocab))
    warm = wc.timed(lambda: _grammar(job).compile(vocab))[1] if wc.warm_wanted(job, t_tok + cold) else None
    blob = constraint.save()
    loads = [wc.timed(lambda: glrmask.Constraint.load(blob, vocab))[1] for _ in range(3)]
    setup = {"tokenizer_s": t_tok, "compile_cold_s": t_tok + cold, "compile_warm_s": warm,
             "compile_memory": memory, "artifact_bytes": len(blob), "load_ms": sorted(loads)[1] * 1e3}
    return Engine(constraint), setup


class SchemaCompiler:
    """Schema mode: Grammar.from_json_schema, then the EOS TokenSet; artifact = Constraint.save()."""

    version = glrmask.__version__
    refusals = (ValueError, RuntimeError)

    def __init__(self, job: dict) -> None:
        self.vocab, self.eos_ids = _vocab(job["tokenizer"]), job["tokenizer"]["eos_ids"]

    def compile(self, schema):
        return _then_eos(glrmask.Grammar.from_json_schema(schema), self.eos_ids).compile(self.vocab)

    def engine(self, constraint) -> tuple[Engine, dict]:
        return Engine(constraint), {"artifact_bytes": len(constraint.save())}


def load_for_memory(job: dict):
    return _grammar(job).compile(_vocab(job["tokenizer"])).start()


def touch(state, bitmask: np.ndarray) -> None:
    state.fill_mask(bitmask[0])


if __name__ == "__main__":
    wc.run(make_engine, load_for_memory, touch, SchemaCompiler)
