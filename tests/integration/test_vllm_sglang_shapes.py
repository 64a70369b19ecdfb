"""Our vLLM-shaped objects against vLLM's own base classes, where a vllm distribution is present
(`backend_types.py` is read from it alone: importing the vllm package needs its CUDA stack)."""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path

import pytest

from glrmask_cli.vllm_backend import GLRMaskBackend
from glrmask_runtime.vllm import GLRMaskGrammar

pytestmark = pytest.mark.integration


def _vllm_backend_types():
    spec = importlib.util.find_spec("vllm")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("vllm is not installed")
    path = Path(list(spec.submodule_search_locations)[0]) / "v1" / "structured_output" / "backend_types.py"
    module_spec = importlib.util.spec_from_file_location("vllm_backend_types", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("ours, theirs", [(GLRMaskGrammar, "StructuredOutputGrammar"),
                                          (GLRMaskBackend, "StructuredOutputBackend")])
def test_every_abstract_method_exists_with_its_parameters(ours, theirs):
    base = getattr(_vllm_backend_types(), theirs)
    for name in sorted(base.__abstractmethods__):
        expected = list(inspect.signature(getattr(base, name)).parameters)
        assert list(inspect.signature(getattr(ours, name)).parameters) == expected, name


def test_the_grammar_completes_vllms_abstract_class():
    base = _vllm_backend_types().StructuredOutputGrammar
    combined = type("GLRMaskVLLMGrammar", (GLRMaskGrammar, base), {})
    assert not combined.__abstractmethods__
