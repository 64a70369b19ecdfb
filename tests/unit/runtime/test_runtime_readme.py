"""Every code block of runtime/README.md (the runtime's PyPI page) runs as written, in order, in a
scratch directory holding the repository's `grammars/`; `pip install` lines are left out."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def readme_blocks() -> list[tuple[str, str]]:
    return FENCE.findall((REPO / "runtime" / "README.md").read_text())


def test_runtime_readme_blocks_are_sh_or_python_and_cover_the_api():
    blocks = readme_blocks()
    assert {lang for lang, _ in blocks} == {"sh", "python"}
    python = "\n".join(body for lang, body in blocks if lang == "python")
    for call in ("load(", "matcher()", "mask()", "fill_bitmask(", "commit(", "commit_bytes(", "pickle.loads"):
        assert call in python, call


def test_runtime_readme_blocks_run_as_written(tmp_path):
    (tmp_path / "grammars").symlink_to(REPO / "grammars")
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    for lang, body in readme_blocks():
        if lang == "sh":
            body = "\n".join(line for line in body.splitlines() if not line.startswith("pip install"))
            if not body.strip():
                continue
        command = ["bash", "-e", "-c", body] if lang == "sh" else [sys.executable, "-c", body]
        result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, f"{lang} block failed:\n{body}\n{result.stdout}\n{result.stderr}"
