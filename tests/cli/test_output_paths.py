"""`glrmask build -o`: what each kind of output path gets. A regular file (or nothing) is replaced
atomically; a device or FIFO is written through and stays what it was; a symbolic link's target is
written; an output that is one of the inputs, a directory or a block device is refused; `-` is the
artifact on stdout and nothing else. Device nodes are made by the test in its own directory."""

from __future__ import annotations

import base64
import os
import stat
import threading

import pytest
from click.testing import CliRunner

from glrmask_cli.cli import cli

GRAMMAR = 'start: NAME ("," NAME)*\nNAME: /[a-z]+/\n'
as_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="mknod needs root")


@pytest.fixture()
def grammar(tmp_path):
    path = tmp_path / "g.lark"
    path.write_text(GRAMMAR)
    return path


@pytest.fixture()
def reference(grammar, tmp_path_factory):
    """The artifact's bytes, built into a plain file."""
    out = tmp_path_factory.mktemp("ref") / "g.glrm"
    assert _build(grammar, out).exit_code == 0
    return out.read_bytes()


def _build(grammar, out, *extra):
    return CliRunner().invoke(cli, ["build", str(grammar), "-o", str(out), "--quiet", *extra])


def _device(path, kind, major, minor):
    os.mknod(path, kind | 0o666, os.makedev(major, minor))
    return path


def _others(folder, *keep):
    return sorted(p.name for p in folder.iterdir() if p.name not in keep)


@as_root
def test_output_dev_null_is_written_through_not_replaced(grammar, tmp_path):
    null = _device(tmp_path / "null", stat.S_IFCHR, 1, 3)
    result = _build(grammar, null)
    assert result.exit_code == 0, result.output
    assert stat.S_ISCHR(os.lstat(null).st_mode) and os.stat(null).st_rdev == os.makedev(1, 3)
    assert _others(tmp_path, "g.lark", "null") == []


@as_root
def test_output_dev_full_fails_with_enospc_and_exit_1(grammar, tmp_path):
    full = _device(tmp_path / "full", stat.S_IFCHR, 1, 7)
    result = _build(grammar, full)
    assert result.exit_code == 1
    assert result.output.startswith("Error: ") and "No space left on device" in result.output
    assert stat.S_ISCHR(os.lstat(full).st_mode) and os.stat(full).st_rdev == os.makedev(1, 7)
    assert _others(tmp_path, "g.lark", "full") == []


@as_root
def test_output_block_device_is_refused_and_kept(grammar, tmp_path):
    block = _device(tmp_path / "disk", stat.S_IFBLK, 0, 0)   # no such device: nothing could be harmed
    result = _build(grammar, block)
    assert result.exit_code == 1 and "block device" in result.output
    assert stat.S_ISBLK(os.lstat(block).st_mode)
    assert _others(tmp_path, "g.lark", "disk") == []


def test_output_fifo_is_written_through(grammar, tmp_path, reference):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    result = _build(grammar, fifo)
    reader.join(timeout=30)
    assert result.exit_code == 0, result.output
    assert received == [reference] and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_output_symlink_writes_its_target_and_keeps_the_link(grammar, tmp_path, reference):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "g.glrm"
    target.write_bytes(b"old")
    link = tmp_path / "link.glrm"
    link.symlink_to(target)
    assert _build(grammar, link).exit_code == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes() == reference and _others(tmp_path / "real") == ["g.glrm"]


def test_output_dangling_symlink_creates_its_target(grammar, tmp_path, reference):
    link = tmp_path / "link.glrm"
    link.symlink_to(tmp_path / "new.glrm")
    assert _build(grammar, link).exit_code == 0
    assert link.is_symlink() and (tmp_path / "new.glrm").read_bytes() == reference


@pytest.mark.parametrize("how", ["same path", "symlink", "hard link"])
def test_output_equal_to_the_grammar_is_refused_exit_2(grammar, tmp_path, how):
    out = {"same path": grammar, "symlink": tmp_path / "s.glrm", "hard link": tmp_path / "h.glrm"}[how]
    if how == "symlink":
        out.symlink_to(grammar)
    elif how == "hard link":
        os.link(grammar, out)
    result = _build(grammar, out)
    assert result.exit_code == 2 and "GRAMMAR input" in result.output
    assert grammar.read_text() == GRAMMAR


def test_output_equal_to_the_tokenizer_file_is_refused_exit_2(grammar, tmp_path):
    vocab = tmp_path / "v.tiktoken"
    text = "".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n" for b in range(256))
    vocab.write_text(text)
    result = _build(grammar, vocab, "--tokenizer", str(vocab))
    assert result.exit_code == 2 and "--tokenizer input" in result.output
    assert vocab.read_text() == text


def test_output_dash_writes_the_artifact_alone_to_stdout(grammar, reference):
    result = CliRunner().invoke(cli, ["build", str(grammar), "-o", "-"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == reference
    assert "wrote <stdout>" in result.stderr


def test_output_directory_is_a_usage_error(grammar, tmp_path):
    assert _build(grammar, tmp_path).exit_code == 2
