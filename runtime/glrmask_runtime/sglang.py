"""A request's grammar in the shape SGLang's constrained decoding drives (`BaseGrammarObject` in
`python/sglang/srt/constrained/base_grammar_backend.py`): accept a token, allocate/fill/move/apply
the vocabulary bitmask, copy, roll back, and jump forward over forced text.

Runtime only (the artifact is compiled beforehand); torch is imported by the bitmask methods that
make or move tensors, sglang never.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from glrmask_runtime.matcher import Matcher
from glrmask_runtime.torch import allocate_token_bitmask, apply_token_bitmask_inplace


class GLRMaskSGLangGrammar:
    """One request. `finished` is SGLang's flag (set by the scheduler); `is_terminated()` is ours:
    EOS has been accepted."""

    def __init__(self, matcher: Matcher) -> None:
        self.matcher = matcher
        self.finished = False

    def accept_token(self, token: int) -> None:
        """Commit `token`; TokenRejected (state unchanged) if the grammar does not allow it."""
        self.matcher.commit(int(token))

    def rollback(self, k: int) -> None:
        self.matcher.rollback(k)

    def is_terminated(self) -> bool:
        return self.matcher.is_finished()

    def allocate_vocab_mask(self, vocab_size: int, batch_size: int, device: Any) -> Any:
        """A CPU int32 bitmask tensor (filled on the CPU; `move_vocab_mask` takes it to `device`)."""
        return allocate_token_bitmask(batch_size, vocab_size)

    def fill_vocab_mask(self, vocab_mask: Any, idx: int) -> None:
        self.matcher.fill_bitmask(vocab_mask, idx)

    @staticmethod
    def move_vocab_mask(vocab_mask: Any, device: Any) -> Any:
        return vocab_mask.to(device, non_blocking=True)

    @staticmethod
    def apply_vocab_mask(logits: Any, vocab_mask: Any) -> None:
        apply_token_bitmask_inplace(logits, vocab_mask)

    def copy(self) -> GLRMaskSGLangGrammar:
        """A grammar for another request, at the start (SGLang copies the cached compiled grammar)."""
        fresh = self.matcher.copy()
        fresh.reset()
        return GLRMaskSGLangGrammar(fresh)

    def try_jump_forward(self, tokenizer: Any) -> tuple[list[int], str] | None:
        """The text every completion starts with (whole characters), or None if nothing is forced."""
        forced = self.matcher.forced_bytes()
        for cut in range(len(forced), 0, -1):       # up to the last complete UTF-8 character
            try:
                return [], forced[:cut].decode("utf-8")
            except UnicodeDecodeError:
                continue
        return None

    def jump_forward_str_state(self, helper: tuple[list[int], str]) -> tuple[str, int]:
        return helper[1], -1

    def jump_and_retokenize(self, old_output_ids: Sequence[int], new_output_ids: Sequence[int],
                            next_state: int) -> None:
        """The scheduler re-tokenized the output after a jump: roll back to where the two token
        sequences agree, then commit the new tokens (TokenRejected if they leave the grammar)."""
        common = 0
        for old, new in zip(old_output_ids, new_output_ids):
            if old != new:
                break
            common += 1
        self.matcher.rollback(len(old_output_ids) - common)
        for token in new_output_ids[common:]:
            self.matcher.commit(int(token))
