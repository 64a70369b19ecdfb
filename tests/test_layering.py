"""The runtime never imports the compiler or its heavy dependencies; stages import only earlier ones."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_runtime_imports_only_numpy_msgpack_zstandard():
    code = ("import sys, glrmask_runtime, glrmask_runtime.matcher, glrmask_runtime.bitmask; "
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "{'glrmask_cli', 'lark', 'click', 'tiktoken', 'tokenizers'}); print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


STAGES = ["grammar", "lexer", "parser", "vocab", "terminal_dwa", "parser_dwa"]


def test_compiler_stages_import_only_earlier_stages():
    package = ROOT / "glrmask_cli"
    for i, stage in enumerate(STAGES):
        module = package / f"{stage}.py"
        files = [module] if module.exists() else list((package / stage).glob("*.py"))
        later = {f"glrmask_cli.{s}" for s in STAGES[i + 1:]} | {"glrmask_cli.pipeline", "glrmask_cli.cli"}
        for path in files:
            bad = {m for m in imports_of(path) if any(m == p or m.startswith(p + ".") for p in later)}
            assert not bad, f"{path.relative_to(ROOT)} imports later stages {sorted(bad)}"
