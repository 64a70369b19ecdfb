"""The engine-level half of a vLLM v1 structured-output backend (`StructuredOutputBackend`: compile
a request's grammar, allocate the batch bitmask), over `glrmask_cli.compile_grammar`.

    backend = GLRMaskBackend(tokenizer=hf_tokenizer, vocab_size=model_config.get_vocab_size())
    grammar = backend.compile_grammar(request_type, lark_text)    # a glrmask_runtime.vllm.GLRMaskGrammar
    bitmask = backend.allocate_token_bitmask(max_num_seqs)         # CPU int32 torch tensor

Requests whose type is a Lark grammar (vLLM's `GRAMMAR`) are compiled (the build cache makes a
repeated grammar a file read; each loaded artifact is kept, so a grammar is loaded once per
backend); other request types are refused with a ValueError naming them. torch is imported by
`allocate_token_bitmask` only.
"""

from __future__ import annotations

from typing import Any

from glrmask_cli.api import compile_grammar, tokenizer_vocabulary
from glrmask_runtime.artifact import Artifact
from glrmask_runtime.torch import allocate_token_bitmask
from glrmask_runtime.vllm import GLRMaskGrammar

SUPPORTED_REQUESTS = ("GRAMMAR",)


class GLRMaskBackend:
    """`tokenizer`: a name, file or tokenizer object; `vocab_size`: the model's number of logits
    (at least the tokenizer's size; the ids past it are never allowed)."""

    def __init__(self, tokenizer: Any, vocab_size: int) -> None:
        self.vocab = tokenizer_vocabulary(tokenizer, vocab_size=vocab_size)
        self.vocab_size = vocab_size
        self._artifacts: dict[tuple[str, tuple[int, ...]], Artifact] = {}

    def compile_grammar(self, request_type: Any, grammar_spec: str,
                        stop_token_ids: set[int] | None = None) -> GLRMaskGrammar:
        """A request's grammar; `stop_token_ids` (vLLM 0.33+) replace the tokenizer's EOS ids."""
        kind = str(getattr(request_type, "name", request_type)).upper()
        if kind not in SUPPORTED_REQUESTS:
            raise ValueError(f"GLRMaskBackend: request type {kind} is not supported (supported: "
                             f"{', '.join(SUPPORTED_REQUESTS)}, a Lark grammar)")
        stops = tuple(sorted(stop_token_ids or ()))
        artifact = self._artifacts.get((grammar_spec, stops))
        if artifact is None:
            # jobs=1: the engine's process holds a GPU context and threads, so the build never forks it
            built = compile_grammar(grammar_spec, tokenizer=self.vocab, eos_tokens=[str(t) for t in stops], jobs=1)
            artifact = self._artifacts[(grammar_spec, stops)] = built.load()
        return GLRMaskGrammar(artifact.matcher())

    def allocate_token_bitmask(self, max_num_seqs: int) -> Any:
        return allocate_token_bitmask(max_num_seqs, self.vocab_size)

    def destroy(self) -> None:
        self._artifacts.clear()
