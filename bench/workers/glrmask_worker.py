"""GLRMask worker (runs in the project .venv): build the artifact, memory-map it, replay documents.

Compile: glrmask_cli.pipeline.build_artifact on the workload's grammar file (as written, from its start
rule) and the tokenizer file (cold: first build in this fresh process, tokenizer included; warm: a
second build, skipped after a cold one over --warm-max). Load: the first
glrmask_runtime.load (it may fill the expansion cache) and the median of 5 later loads. Per step the
packed fill_bitmask is the timed mask; mask() (bool view) is timed separately right after it.
Schema mode (the maskbench workload): `SchemaCompiler`, driven by schema_common.py.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

import numpy as np
import worker_common as wc

import glrmask_runtime
from glrmask_runtime import load as load_artifact
from glrmask_runtime.errors import TokenRejected


def _artifact_path(job: dict) -> Path:
    folder = Path(job["artifact_dir"])
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{job['workload']}.{job['tokenizer']['name']}.glrm"


class _StageLines:
    """Build progress as worker progress lines (`stage <name> at <s> s`, notes at most every 10 s), so
    a build killed at --build-budget says which stage it was in."""

    def __init__(self) -> None:
        self.began = time.monotonic()
        self.last_note = 0.0

    def stage(self, name: str) -> None:
        wc.progress(f"stage {name} at {time.monotonic() - self.began:.0f} s")

    def total(self, n: int, unit: str) -> None:
        pass

    def advance(self, n: int = 1) -> None:
        pass

    def note(self, text: str) -> None:
        now = time.monotonic()
        if now - self.last_note >= 10:
            self.last_note = now
            wc.progress(f"{text} at {now - self.began:.0f} s")


def _build(job: dict, out: Path):
    from glrmask_cli.pipeline import build_artifact

    spec = job["tokenizer"]
    return build_artifact(job["grammar"]["path"], out, tokenizer=spec["file"],
                          tokenizer_pattern=spec["pattern"], start=job["grammar"].get("start"),
                          eos_tokens=[str(e) for e in spec["eos_ids"]], lexer=job["grammar"].get("lexer", "contextual"),
                          progress=_StageLines())


class Engine:
    version = glrmask_runtime.__version__

    def __init__(self, artifact):
        self.artifact = artifact

    def new_state(self):
        return self.artifact.matcher()

    def before_pass(self) -> None:
        """Forget what earlier passes learnt (`Artifact.forget`: the memo by stacks, the combinations
        of rows, the parser's remembered steps)."""
        self.artifact.forget()

    def fill(self, state, bitmask: np.ndarray) -> None:
        state.fill_bitmask(bitmask, 0)

    def commit(self, state, token_id: int) -> bool:
        try:
            state.commit(token_id)
        except TokenRejected:
            return False
        return True

    def extra_timer(self, state) -> int:
        """The bool mask() view, timed right after the packed fill (reported as mask_bool)."""
        t0 = time.perf_counter_ns()
        state.mask()
        return time.perf_counter_ns() - t0


def _check_vocab(artifact, spec: dict) -> list[str]:
    problems = []
    if artifact.vocab_size != spec["vocab_size"]:
        problems.append(f"vocab_size {artifact.vocab_size} != harness {spec['vocab_size']}")
    if sorted(artifact.eos_token_ids) != sorted(spec["eos_ids"]):
        problems.append(f"eos ids {sorted(artifact.eos_token_ids)} != harness {sorted(spec['eos_ids'])}")
    return problems


def make_engine(job: dict):
    out = _artifact_path(job)
    built, cold, memory = wc.compile_timed(lambda: _build(job, out))
    warm = wc.timed(lambda: _build(job, out))[1] if wc.warm_wanted(job, cold) else None
    artifact, first_load = wc.timed(lambda: load_artifact(out))
    loads = [wc.timed(lambda: load_artifact(out))[1] for _ in range(5)]
    setup = {"compile_cold_s": cold, "compile_warm_s": warm, "compile_memory": memory,
             "artifact_bytes": os.path.getsize(out),
             "load_ms": statistics.median(loads) * 1e3, "load_first_ms": first_load * 1e3,
             "artifact": str(out), "stage_seconds": getattr(built.compiled, "timings", {}),
             "vocab_problems": _check_vocab(artifact, job["tokenizer"])}
    return Engine(artifact), setup


class SchemaCompiler:
    """Schema mode: glrmask_cli.compile_json_schema (whitespace flexible; strict where job['strict'])
    with the build cache off, so every timed compile is a real one; `cached_compile_s` times a repeat
    served from the build cache, kept in job['build_cache_dir'] (filled by one untimed compile unless
    an earlier run left the entry)."""

    version = glrmask_runtime.__version__
    refusals = (glrmask_runtime.GLRMaskError,)

    def __init__(self, job: dict) -> None:
        from glrmask_cli import api

        os.environ["GLRMASK_CACHE_DIR"] = job["build_cache_dir"]
        spec = job["tokenizer"]
        self.api, self.spec = api, spec
        self.options = {"tokenizer": spec["file"], "tokenizer_pattern": spec["pattern"],
                        "eos_tokens": [str(e) for e in spec["eos_ids"]], "whitespace": "flexible",
                        "strict": bool(job.get("strict"))}
        api.tokenizer_vocabulary(spec["file"], pattern=spec["pattern"], eos_tokens=self.options["eos_tokens"])

    def compile(self, schema):
        return self.api.compile_json_schema(schema, use_cache=False, **self.options)

    def engine(self, built) -> tuple[Engine, dict]:
        artifact, load_s = wc.timed(built.load)
        info = {"artifact_bytes": len(built.data), "load_ms": load_s * 1e3}
        problems = _check_vocab(artifact, self.spec)
        if problems:
            info["vocab_problems"] = problems
        return Engine(artifact), info

    def cached_compile_s(self, schema) -> float:
        self.api.compile_json_schema(schema, use_cache=True, **self.options)
        built, seconds = wc.timed(lambda: self.api.compile_json_schema(schema, use_cache=True, **self.options))
        if not built.from_cache:
            raise RuntimeError("the repeated compile was not served from the build cache")
        return seconds


def load_for_memory(job: dict):
    return load_artifact(_artifact_path(job)).matcher()


def touch(matcher, bitmask: np.ndarray) -> None:
    matcher.fill_bitmask(bitmask, 0)


if __name__ == "__main__":
    wc.run(make_engine, load_for_memory, touch, SchemaCompiler)
