"""A request's grammar in the shape vLLM v1's structured-output engine drives (`StructuredOutputGrammar`
in `vllm/v1/structured_output/backend_types.py`): accept, validate and roll back tokens, fill a
bitmask row, report termination, reset. SGLang's grammar objects use the same operations.

Runtime only: the artifact is compiled beforehand (`glrmask build`, or `glrmask_cli.vllm_backend`,
which compiles a request's Lark grammar and hands out these objects). Neither vllm nor torch is
imported here; `fill_bitmask` takes vLLM's CPU int32 torch bitmask as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from glrmask_runtime.errors import TokenRejected
from glrmask_runtime.matcher import Matcher


class GLRMaskGrammar:
    """One request's decoding state. `num_processed_tokens` counts accepted tokens, as vLLM's do."""

    def __init__(self, matcher: Matcher) -> None:
        self.matcher = matcher
        self.num_processed_tokens = 0

    def accept_tokens(self, request_id: str, tokens: Sequence[int]) -> bool:
        """Commit `tokens` in order. False if one is not allowed (or the output already ended);
        then none of them is committed."""
        done = 0
        try:
            for token in tokens:
                self.matcher.commit(int(token))
                done += 1
        except TokenRejected:
            self.matcher.rollback(done)
            return False
        self.num_processed_tokens += done
        return True

    def validate_tokens(self, tokens: Sequence[int]) -> list[int]:
        """The longest prefix of `tokens` the grammar allows from here; the state does not change."""
        done = 0
        try:
            for token in tokens:
                if self.matcher.is_finished() or not self.matcher.is_allowed(int(token)):
                    break
                self.matcher.commit(int(token))
                done += 1
        finally:
            self.matcher.rollback(done)
        return [int(t) for t in tokens[:done]]

    def rollback(self, num_tokens: int) -> None:
        """Undo the last `num_tokens` accepted tokens (ValueError past the start)."""
        self.matcher.rollback(num_tokens)
        self.num_processed_tokens -= num_tokens

    def fill_bitmask(self, bitmask: Any, batch_index: int) -> None:
        """Row `batch_index` of an int32 (batch, W) bitmask (numpy or CPU torch; W may be padded)."""
        self.matcher.fill_bitmask(bitmask, batch_index)

    def is_terminated(self) -> bool:
        """True once EOS has been accepted."""
        return self.matcher.is_finished()

    def reset(self) -> None:
        self.matcher.reset()
        self.num_processed_tokens = 0
