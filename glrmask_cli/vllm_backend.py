"""The engine-level half of a vLLM v1 structured-output backend (`StructuredOutputBackend`: compile
a request's grammar, allocate the batch bitmask), over `glrmask_cli.compile_grammar`.

    backend = GLRMaskBackend(tokenizer=hf_tokenizer, vocab_size=model_config.get_vocab_size())
    grammar = backend.compile_grammar(request_type, lark_text)    # a glrmask_runtime.vllm.GLRMaskGrammar
    bitmask = backend.allocate_token_bitmask(max_num_seqs)         # CPU int32 torch tensor

Request types (vLLM's `StructuredOutputOptions`): `GRAMMAR` (Lark text), `JSON` (a JSON Schema as
JSON text; docs/json-schema.md), `JSON_OBJECT` (any JSON object) and `CHOICE` (a JSON list of
strings: the output is one of them) are compiled to Lark text (the build cache makes a repeated one
a file read; each loaded artifact is kept, so a grammar is loaded once per backend); the others are
refused with a ValueError naming them. A request's text is never read as a path (`LarkText`).
torch is imported by `allocate_token_bitmask` only.
"""

from __future__ import annotations

import json
from typing import Any

from glrmask_cli.api import LarkText, compile_grammar, json_schema_grammar, tokenizer_vocabulary
from glrmask_cli.errors import GrammarSyntaxError
from glrmask_runtime.artifact import Artifact
from glrmask_runtime.torch import allocate_token_bitmask
from glrmask_runtime.vllm import GLRMaskGrammar

SUPPORTED_REQUESTS = ("GRAMMAR", "JSON", "JSON_OBJECT", "CHOICE")


class GLRMaskBackend:
    """`tokenizer`: a name, file or tokenizer object; `vocab_size`: the model's number of logits
    (at least the tokenizer's size; the ids past it are never allowed)."""

    def __init__(self, tokenizer: Any, vocab_size: int) -> None:
        self.vocab = tokenizer_vocabulary(tokenizer, vocab_size=vocab_size)
        self.vocab_size = vocab_size
        self._artifacts: dict[tuple[str, str, tuple[int, ...]], Artifact] = {}   # (type, spec, stop ids)

    def compile_grammar(self, request_type: Any, grammar_spec: str,
                        stop_token_ids: set[int] | None = None) -> GLRMaskGrammar:
        """A request's grammar; `stop_token_ids` (vLLM 0.33+) replace the tokenizer's EOS ids."""
        kind = str(getattr(request_type, "name", request_type)).upper()
        if kind not in SUPPORTED_REQUESTS:
            raise ValueError(f"GLRMaskBackend: request type {kind} is not supported (supported: "
                             f"{', '.join(SUPPORTED_REQUESTS)})")
        stops = tuple(sorted(stop_token_ids or ()))
        artifact = self._artifacts.get((kind, grammar_spec, stops))
        if artifact is None:
            # jobs=1: the engine's process holds a GPU context and threads, so the build never forks it
            built = compile_grammar(request_grammar(kind, grammar_spec), tokenizer=self.vocab,
                                    eos_tokens=[str(t) for t in stops], jobs=1)
            artifact = self._artifacts[(kind, grammar_spec, stops)] = built.load()
        return GLRMaskGrammar(artifact.matcher())

    def allocate_token_bitmask(self, max_num_seqs: int) -> Any:
        return allocate_token_bitmask(max_num_seqs, self.vocab_size)

    def destroy(self) -> None:
        self._artifacts.clear()


def request_grammar(kind: str, spec: str) -> LarkText:
    """The Lark text of a request of type `kind` (one of SUPPORTED_REQUESTS) whose spec is `spec`;
    GrammarSyntaxError for a JSON or CHOICE spec that is not what that type takes, SchemaUnsupported
    for a schema keyword the lowering refuses."""
    if kind == "GRAMMAR":
        return LarkText(spec)
    if kind == "JSON_OBJECT":
        return LarkText(json_schema_grammar({"type": "object"}))
    try:
        value = json.loads(spec)
    except json.JSONDecodeError as err:
        raise GrammarSyntaxError(f"<{kind} request>:{err.lineno}:{err.colno}", f"not JSON: {err.msg}") from err
    if kind == "JSON":
        if not isinstance(value, (dict, bool)):
            raise GrammarSyntaxError("<JSON request>", "a JSON Schema is an object or a boolean")
        return LarkText(json_schema_grammar(value))
    if not isinstance(value, list) or not value or not all(isinstance(c, str) and c for c in value):
        raise GrammarSyntaxError("<CHOICE request>", "expected a JSON list of non-empty strings")
    return LarkText("start: " + " | ".join(json.dumps(c) for c in dict.fromkeys(value)) + "\n")
