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


STAGE_ENTRY_POINTS = {"load_grammar", "build_lexer", "build_contextual_lexer", "build_cfg", "normalize", "build_lr",
                      "build_lr_tables",
                      "build_effect_graphs", "build_terminal_dwa", "build_parser_dwa", "build_rows"}


def calls_of(path: Path) -> set[str]:
    """The functions a module calls: by name, or as an attribute of a name it imports (`lr.build_lr`;
    a method of a value, such as `Decimal.normalize`, is not a stage)."""
    tree = ast.parse(path.read_text())
    imported = {(alias.asname or alias.name).split(".")[0] for node in ast.walk(tree)
                if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                names.add(func.id)
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in imported:
                names.add(func.attr)
    return names


def test_only_the_pipeline_runs_the_stages():
    """The stage order lives in pipeline.py alone: `check` runs the pipeline's front end, the CLI
    and the reports call no stage, and no stage drives another one (the Parser DWA gets its Terminal
    DWA from the pipeline, built for the layout being tried)."""
    package = ROOT / "glrmask_cli"
    for path in sorted(package.rglob("*.py")):
        if path.name == "pipeline.py":
            continue
        called = calls_of(path) & STAGE_ENTRY_POINTS
        # a stage may call its own entry points (lr.py's build_lr_tables calls build_lr; the lexer
        # package's contextual lexer is made of basic lexers)
        stage_package = "".join(p.read_text() for p in path.parent.glob("*.py")) if path.parent != package \
            else path.read_text()
        own = {name for name in called if f"def {name}(" in stage_package}
        assert called <= own, f"{path.relative_to(ROOT)} runs stages {sorted(called - own)}: only pipeline.py does"


def test_the_stage_names_are_defined_once():
    """pipeline.STAGES is the one list of stage names: the CLI's progress display has none of its own,
    and a build reports (and times) exactly those stages, in that order."""
    from devtools.builds import JSON_GRAMMAR, vocabulary
    from glrmask_cli import pipeline

    for path in sorted((ROOT / "glrmask_cli").rglob("*.py")):
        if path.name == "pipeline.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Tuple, ast.List)):
                names = {e.value for e in node.elts if isinstance(e, ast.Constant)} & set(pipeline.STAGES)
                assert len(names) < 5, f"{path.relative_to(ROOT)} lists stage names {sorted(names)}"
    compiled = pipeline.compile_grammar(JSON_GRAMMAR, tokenizer=vocabulary("small-gpt2"))
    assert tuple(compiled.timings) == pipeline.STAGES[:-1]      # all but "artifact" (build_artifact writes it)
