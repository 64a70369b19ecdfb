"""devtools.data's Debian path on a fake, small .deb built here (nothing is downloaded): the hash check, the
../shared and cache lookups, extraction with dpkg-deb, the Go and Java file selections."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from devtools import data

pytestmark = pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="dpkg-deb not installed")


def build_deb(tmp: Path, name: str, files: dict[str, bytes]) -> Path:
    root = tmp / f"{name}-root"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(f"Package: {name}\nVersion: 1.0-1\nArchitecture: all\n"
                                             "Maintainer: test <t@example.org>\nDescription: fake\n")
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    out = tmp / f"{name}_1.0-1_all.deb"
    subprocess.run(["dpkg-deb", "--build", "--root-owner-group", str(root), str(out)], check=True,
                   capture_output=True)
    return out


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """devtools.data with its cache and archives under tmp_path and no ../shared."""
    monkeypatch.setattr(data, "CACHE_DIR", tmp_path / "cache")
    monkeypatch.setattr(data, "ARCHIVES", tmp_path / "cache" / "archives")
    monkeypatch.setenv(data.SHARED_ENV, "")
    return tmp_path


def pin_for(deb: Path) -> data.PinnedDeb:
    return data.PinnedDeb(deb.name.split("_")[0], "1.0-1", hashlib.sha256(deb.read_bytes()).hexdigest(), "MIT")


GO_TREE = {f"{data.GO_SOURCE_ROOT}/strings/strings.go": b"package strings\n",
           f"{data.GO_SOURCE_ROOT}/strings/strings_test.go": b"package strings\n",
           f"{data.GO_SOURCE_ROOT}/strings/testdata/x.go": b"package x\n",
           f"{data.GO_SOURCE_ROOT}/cmd/go/main.go": b"package main\n",
           f"{data.GO_SOURCE_ROOT}/vendor/golang.org/x/y.go": b"package y\n",
           f"{data.GO_SOURCE_ROOT}/sort/sort.go": b"package sort\n",
           "usr/share/doc/fake/copyright": b"BSD\n"}


def test_cached_archive_is_checked_and_go_library_files_selected(sandbox, monkeypatch) -> None:
    deb = build_deb(sandbox, "fake-go", GO_TREE)
    pin = pin_for(deb)
    data.ARCHIVES.mkdir(parents=True)
    shutil.copy(deb, data.ARCHIVES / pin.filename)
    monkeypatch.setattr(shutil, "which", lambda name: None if name == "apt-get" else "/usr/bin/" + name)
    folder = data.debian_files(pin, "src", data._go_library_files)
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) == \
        ["sort/sort.go", "strings/strings.go"]
    assert folder == data.CACHE_DIR / "fake-go_1.0-1" / "src"
    (data.ARCHIVES / pin.filename).unlink()                   # extracted once: the archive is not needed again
    assert data.debian_files(pin, "src", data._go_library_files) == folder


def test_a_wrong_hash_is_not_used_and_without_apt_get_data_is_unavailable(sandbox, monkeypatch) -> None:
    deb = build_deb(sandbox, "fake-go", GO_TREE)
    pin = data.PinnedDeb("fake-go", "1.0-1", "0" * 64, "MIT")
    data.ARCHIVES.mkdir(parents=True)
    shutil.copy(deb, data.ARCHIVES / pin.filename)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(data.DataUnavailable, match="no apt-get"):
        data.debian_archive(pin)


def test_shared_folder_is_the_faster_source(sandbox, monkeypatch) -> None:
    deb = build_deb(sandbox, "fake-go", GO_TREE)
    pin = pin_for(deb)
    shared = sandbox / "shared"
    (shared / "corpora" / "debian").mkdir(parents=True)
    shutil.copy(deb, shared / "corpora" / "debian" / pin.filename)
    monkeypatch.setenv(data.SHARED_ENV, str(shared))
    assert data.debian_archive(pin) == shared / "corpora" / "debian" / pin.filename


def test_java_base_files_come_from_src_zip_with_a_size_cap(sandbox) -> None:
    zipped = sandbox / "src.zip"
    with zipfile.ZipFile(zipped, "w") as zf:
        zf.writestr("java.base/java/util/List.java", "package java.util;\ninterface List {}\n")
        zf.writestr("java.base/java/util/Huge.java", "x" * (data.JAVA_MAX_FILE_BYTES + 1))
        zf.writestr("java.desktop/java/awt/Frame.java", "package java.awt;\n")
        zf.writestr("java.base/java/util/notes.txt", "not java\n")
    deb = build_deb(sandbox, "fake-jdk", {data.JDK_SRC_ZIP: zipped.read_bytes()})
    pin = pin_for(deb)
    data.ARCHIVES.mkdir(parents=True)
    shutil.copy(deb, data.ARCHIVES / pin.filename)
    folder = data.debian_files(pin, "java.base", data._java_base_files)
    assert [str(p.relative_to(folder)) for p in folder.rglob("*.java")] == ["java.base/java/util/List.java"]


def test_a_selection_of_nothing_is_an_error(sandbox) -> None:
    deb = build_deb(sandbox, "fake-go", {"usr/share/doc/fake/copyright": b"x\n"})
    pin = pin_for(deb)
    data.ARCHIVES.mkdir(parents=True)
    shutil.copy(deb, data.ARCHIVES / pin.filename)
    with pytest.raises(data.DataError, match="no files selected"):
        data.debian_files(pin, "src", data._go_library_files)
    assert not (data.CACHE_DIR / "fake-go_1.0-1" / "src").exists()     # no half folder left behind


def test_pins_name_the_debian_files() -> None:
    assert data.GOLANG_SRC.filename == "golang-1.19-src_1.19.8-2_all.deb"
    assert data.OPENJDK_SRC.filename == "openjdk-17-source_17.0.19+10-1~deb12u2_all.deb"
