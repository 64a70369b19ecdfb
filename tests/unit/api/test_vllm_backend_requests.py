"""What the vLLM backend compiles from a request: each supported type's language, judged on token
sequences of documents (jsonschema for JSON Schemas), and a request's text never read as a path."""

from __future__ import annotations

import json

import jsonschema
import pytest

from glrmask_cli.errors import GrammarSyntaxError
from glrmask_cli.vllm_backend import GLRMaskBackend

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"enum": ["x", "y"]}},
          "required": ["a"], "additionalProperties": False}


@pytest.fixture(scope="module")
def backend() -> GLRMaskBackend:
    return GLRMaskBackend("gpt2", vocab_size=50_304)       # a padded head, as models have


def accepts(backend: GLRMaskBackend, kind: str, spec: str, text: str) -> bool:
    """Whether the request's grammar takes `text` token by token and then EOS."""
    grammar = backend.compile_grammar(kind, spec)
    eos = max(backend.vocab.eos_ids)
    return grammar.accept_tokens("r", list(backend.vocab.encode(text)) + [eos])


@pytest.mark.parametrize("document", [{"a": 1}, {"a": -20, "b": "y"}, {"b": "x"}, {"a": 1, "c": 2}, {"a": "1"},
                                      {"a": 1, "b": "z"}, [], {}])
def test_a_json_request_takes_what_its_schema_validates(backend, document):
    valid = jsonschema.Draft202012Validator(SCHEMA).is_valid(document)
    assert accepts(backend, "JSON", json.dumps(SCHEMA), json.dumps(document)) == valid


@pytest.mark.parametrize("text, ok", [('{"k": [1, {"n": null}]}', True), ("{}", True), ("[1]", False), ("1", False)])
def test_a_json_object_request_takes_any_object(backend, text, ok):
    assert accepts(backend, "JSON_OBJECT", "", text) == ok


@pytest.mark.parametrize("text, ok", [("yes", True), ("no", True), ('é "q"', True), ("ye", False), ("yesno", False)])
def test_a_choice_request_takes_exactly_one_of_its_strings(backend, text, ok):
    assert accepts(backend, "CHOICE", json.dumps(["yes", "no", 'é "q"']), text) == ok


def test_a_request_naming_a_file_is_lark_text_not_that_file(backend, tmp_path):
    grammar = tmp_path / "secret.lark"
    grammar.write_text('start: "secret"\n')         # a grammar that would build, were the path read
    with pytest.raises(GrammarSyntaxError) as err:
        backend.compile_grammar("GRAMMAR", str(grammar))
    assert str(grammar) not in str(err.value)


@pytest.mark.parametrize("kind, spec", [("JSON", "{"), ("JSON", "[1]"), ("CHOICE", "[]"), ("CHOICE", '[""]'),
                                        ("CHOICE", '"yes"')])
def test_a_malformed_request_is_a_grammar_error(backend, kind, spec):
    with pytest.raises(GrammarSyntaxError):
        backend.compile_grammar(kind, spec)


def test_other_request_types_are_refused_by_name(backend):
    with pytest.raises(ValueError, match="REGEX is not supported"):
        backend.compile_grammar("REGEX", "a+")
