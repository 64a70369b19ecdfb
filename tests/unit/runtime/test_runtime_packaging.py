"""The runtime distribution's metadata: what `pip wheel runtime/` puts in the wheel (checked by hand with
`unzip -l`; building a wheel here would need the network for setuptools>=77)."""

from __future__ import annotations

import tomllib
from pathlib import Path

RUNTIME = Path(__file__).resolve().parents[3] / "runtime"


def project() -> dict:
    return tomllib.loads((RUNTIME / "pyproject.toml").read_text())


def test_runtime_license_is_an_spdx_string_with_its_file():
    data = project()
    assert data["project"]["license"] == "MIT" and data["project"]["license-files"] == ["LICENSE"]
    text = (RUNTIME / "LICENSE").read_text()
    assert text.startswith("MIT License") and "Copyright (c) 2026 The GLRMask authors" in text
    # SPDX strings need setuptools >= 77; older ones reject them (or want a TOML table).
    assert data["build-system"]["requires"] == ["setuptools>=77"]


def test_runtime_ships_py_typed_and_its_readme():
    data = project()
    assert "py.typed" in data["tool"]["setuptools"]["package-data"]["glrmask_runtime"]
    assert (RUNTIME / "glrmask_runtime" / "py.typed").is_file()
    assert data["project"]["readme"] == "README.md" and (RUNTIME / "README.md").read_text().startswith("# glrmask")
    assert "Typing :: Typed" in data["project"]["classifiers"] and data["project"]["urls"]["Homepage"]


def test_runtime_version_agrees_with_the_package():
    import glrmask_runtime

    assert project()["project"]["version"] == glrmask_runtime.__version__
