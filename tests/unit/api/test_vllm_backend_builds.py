"""The vLLM backend builds inside the engine's process, which holds a GPU context and threads: it
must never fork that process, whatever the build's size."""

import pytest

import glrmask_cli
import glrmask_cli.forks as forks
import glrmask_cli.lexer.contextual as contextual
import glrmask_cli.pipeline as pipeline
from glrmask_cli.vllm_backend import GLRMaskBackend


def test_the_backend_builds_without_forking(monkeypatch, tmp_path):
    monkeypatch.setenv("GLRMASK_CACHE_DIR", str(tmp_path))          # a build, not a cache hit
    monkeypatch.setattr(contextual, "_SERIAL_SECONDS", -1.0)        # any other build would fork here

    def no_fork(*args, **kwargs):
        raise AssertionError("the build forked the serving process")

    monkeypatch.setattr(forks, "ProcessPoolExecutor", no_fork)
    monkeypatch.setattr(pipeline, "available_jobs", lambda: 2)      # a build's default on any machine
    backend = GLRMaskBackend("gpt2", vocab_size=50_257)
    backend.compile_grammar("GRAMMAR", 'start: "a" b | "c"\nb: "b" | "d" "e"\n')     # builds, in this process
    with pytest.raises(AssertionError, match="forked"):     # the same build with two jobs does fork
        glrmask_cli.compile_grammar('start: "a" b | "c"\nb: "b" | "d" "e"\n', tokenizer="gpt2", use_cache=False,
                                    jobs=2)
