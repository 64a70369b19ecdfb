"""GLRMask compiler: Lark grammar + tokenizer vocabulary -> Parser DWA artifact.

    import glrmask_cli
    artifact = glrmask_cli.compile_grammar("grammars/json.lark", tokenizer="gpt2").load()

`compile_grammar`, `compile_json_schema` and `GrammarArtifact` live in `glrmask_cli.api`; they are
imported on first use, so `glrmask --help` does not load the compiler.
"""

from typing import Any

__version__ = "0.1.0"
__all__ = ["GrammarArtifact", "compile_grammar", "compile_json_schema"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from glrmask_cli import api
        return getattr(api, name)
    raise AttributeError(f"module 'glrmask_cli' has no attribute {name!r}")
