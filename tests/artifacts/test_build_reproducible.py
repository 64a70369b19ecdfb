"""Same inputs give byte-identical artifacts; a caller's tokenizer fingerprint must match."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import glrmask_runtime
from devtools.builds import JSON_GRAMMAR, LARK_GRAMMARS, REPO_ROOT, built


def build_in_subprocess(out, seed: str, grammar=JSON_GRAMMAR, layout: str = "auto", jobs: int = 1) -> bytes:
    code = ("import sys; from glrmask_cli.pipeline import build_artifact; "
            "build_artifact(sys.argv[1], sys.argv[2], tokenizer='gpt2', layout=sys.argv[3], jobs=int(sys.argv[4]))")
    env = dict(os.environ, PYTHONHASHSEED=seed)
    subprocess.run([sys.executable, "-c", code, str(grammar), str(out), layout, str(jobs)], check=True, env=env,
                   cwd=REPO_ROOT)
    return out.read_bytes()


def test_same_inputs_give_identical_bytes(tmp_path):
    first = build_in_subprocess(tmp_path / "a.glrm", "1")
    second = build_in_subprocess(tmp_path / "b.glrm", "2")
    assert first == second
    assert first == built(JSON_GRAMMAR, "gpt2").path.read_bytes()


def test_grouped_layout_gives_identical_bytes(tmp_path):
    """Groups, their splits and merges, and the runtime-close table are ordered deterministically."""
    grammar = LARK_GRAMMARS / "lark.lark"
    first = build_in_subprocess(tmp_path / "a.glrm", "3", grammar, "grouped")
    assert first == build_in_subprocess(tmp_path / "b.glrm", "4", grammar, "grouped")


def test_the_artifact_does_not_depend_on_the_number_of_jobs(tmp_path):
    """Groups built on worker processes are added to the shared pool in the groups' order, and the
    row pool's lexer states computed on them are numbered in lexer-state order."""
    grammar = LARK_GRAMMARS / "lark.lark"
    one = build_in_subprocess(tmp_path / "a.glrm", "5", grammar, "grouped", jobs=1)
    assert one == build_in_subprocess(tmp_path / "b.glrm", "6", grammar, "grouped", jobs=3)


def test_tokenizer_fingerprint_mismatch_is_a_clear_error():
    b = built(JSON_GRAMMAR, "gpt2")
    assert glrmask_runtime.load(b.path, tokenizer_fingerprint=b.vocab.fingerprint).vocab_size == b.vocab.size
    with pytest.raises(glrmask_runtime.TokenizerMismatch, match="another tokenizer"):
        glrmask_runtime.load(b.path, tokenizer_fingerprint="0" * 64)


def test_truncated_artifact_raises_artifact_error(tmp_path):
    data = built(JSON_GRAMMAR, "gpt2").path.read_bytes()
    for cut in (0, 10, 64, len(data) // 2, len(data) - 1):
        path = tmp_path / f"cut{cut}.glrm"
        path.write_bytes(data[:cut])
        with pytest.raises(glrmask_runtime.ArtifactError):
            glrmask_runtime.load(path)
