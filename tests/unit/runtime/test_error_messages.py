"""Runtime error messages name terminals as the grammar wrote them, on a real built artifact."""

from __future__ import annotations

import pytest

import glrmask_runtime
from devtools.builds import JSON_GRAMMAR, built
from glrmask_cli.pipeline import artifact_metadata, artifact_sections
from glrmask_runtime.format import encode_container


@pytest.fixture(scope="module")
def b():
    return built(JSON_GRAMMAR, "gpt2")


def rejection(artifact, data: bytes) -> glrmask_runtime.InputRejected:
    m = artifact.matcher()
    with pytest.raises(glrmask_runtime.InputRejected) as info:
        m.commit_bytes(data)
    return info.value


def test_commit_bytes_names_an_unexpected_closing_brace_by_its_grammar_name(b):
    error = rejection(b.artifact, b'{"a": }')
    assert str(error) == 'rejected at byte 6: unexpected "}" at "}"'
    assert "STRING" in error.expected and '"{"' in error.expected and "NUMBER" in error.expected
    assert not any(name.startswith("terminal ") for name in error.expected)


def test_commit_bytes_names_a_missing_colon_and_an_unexpected_number(b):
    error = rejection(b.artifact, b'{"a" 1')
    assert "unexpected NUMBER" in str(error) and error.expected == ('":"',)


def test_end_of_input_is_named_as_such(b):
    m = b.artifact.matcher()
    m.commit_bytes(b"[1]")
    with pytest.raises(glrmask_runtime.InputRejected) as info:
        m.commit_bytes(b"]")
    assert "end of input" in info.value.expected


def write(tmp_path, metadata, sections):
    path = tmp_path / "a.glrm"
    path.write_bytes(encode_container(metadata, sections))
    return path


def test_artifact_without_terminal_names_still_loads_and_numbers_them(b, tmp_path):
    metadata, sections = artifact_metadata(b.compiled), artifact_sections(b.compiled)
    metadata["grammar"] = {k: v for k, v in metadata["grammar"].items() if k != "terminals"}
    artifact = glrmask_runtime.load(write(tmp_path, metadata, sections))
    brace = b.artifact.metadata["grammar"]["terminals"].index('"}"')
    assert f"unexpected terminal {brace} " in str(rejection(artifact, b'{"a": }'))


@pytest.mark.parametrize("bad", [["x"], "STRING", [1] * 12], ids=["too-few", "not-a-list", "not-strings"])
def test_malformed_terminal_names_are_an_artifact_error(b, tmp_path, bad):
    metadata, sections = artifact_metadata(b.compiled), artifact_sections(b.compiled)
    metadata["grammar"] = dict(metadata["grammar"], terminals=bad)
    with pytest.raises(glrmask_runtime.ArtifactError, match="grammar.terminals"):
        glrmask_runtime.load(write(tmp_path, metadata, sections))
