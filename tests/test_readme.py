"""Every code block of README.md runs as written, in order, in a scratch directory that holds the
repository's `grammars/` (the README says to run them from the repository root): `sh` blocks with
bash -e (the `glrmask` on PATH is this checkout's), `python` blocks with this interpreter. The
`make setup` / `make test` lines are what CI itself runs, so they are the only ones left out."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


NEEDS = re.compile(r"\A# needs: ([\w ]+)\n")   # a block for an optional integration (make test-integration)


def readme_blocks() -> list[tuple[str, str]]:
    return [(lang, body) for lang, body in FENCE.findall((REPO / "README.md").read_text())]


def integration_blocks() -> list[str]:
    """The python blocks that need optional packages (run by tests/integration/test_readme_integrations.py)."""
    return [body for lang, body in readme_blocks() if lang == "python" and NEEDS.match(body)]


def test_every_readme_block_is_sh_or_python():
    blocks = readme_blocks()
    assert blocks and {lang for lang, _ in blocks} <= {"sh", "python"}


def test_readme_blocks_run_as_written(tmp_path):
    (tmp_path / "grammars").symlink_to(REPO / "grammars")
    bin_dir = os.path.dirname(sys.executable)
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
    ran = 0
    for lang, body in readme_blocks():
        if lang == "python" and NEEDS.match(body):
            continue
        if lang == "sh":
            body = "\n".join(line for line in body.splitlines() if not line.startswith("make "))
            if not body.strip():
                continue
            command = ["bash", "-e", "-c", body]
        else:
            command = [sys.executable, "-c", body]
        result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, f"README block failed:\n{body}\n--- stderr:\n{result.stderr}"
        ran += 1
    assert ran >= 2 and (tmp_path / "json.glrm").is_file() and (tmp_path / "dwa.dot").stat().st_size > 0
