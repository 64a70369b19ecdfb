"""The README's blocks for the optional integrations (`# needs: torch ...`) run as written."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.test_readme import REPO, integration_blocks

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("index", range(len(integration_blocks())))
def test_integration_block_runs(index, tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    (tmp_path / "grammars").symlink_to(REPO / "grammars")
    body = integration_blocks()[index]
    result = subprocess.run([sys.executable, "-c", body], cwd=tmp_path, capture_output=True, text=True,
                            timeout=600, env=dict(os.environ))
    assert result.returncode == 0, f"README block failed:\n{body}\n--- stderr:\n{result.stderr}"
