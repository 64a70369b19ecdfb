"""A transformers `LogitsProcessor` over one artifact: every row of the batch follows the grammar.

    processor = GLRMaskLogitsProcessor(glrmask_runtime.load("json.glrm"))
    model.generate(input_ids, logits_processor=LogitsProcessorList([processor]), ...)

Rows are told apart by what they generated since the prompt, so greedy search, sampling and beam
search (where beams are reordered between steps) all work: each distinct generated sequence has
its own matcher, made from its parent's by committing the newest token. A row that has committed
EOS may only produce EOS again (transformers pads finished rows; an all -inf row would make the
sampler's probabilities NaN). Use one processor per `generate` call. torch is imported on first use.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from glrmask_runtime.artifact import Artifact
from glrmask_runtime.bitmask import allocate_bitmask
from glrmask_runtime.matcher import Matcher, fill_bitmasks
from glrmask_runtime.torch import apply_token_bitmask_inplace


class GLRMaskLogitsProcessor:
    """`__call__(input_ids, scores) -> scores`, masking in place (transformers' LogitsProcessor API)."""

    def __init__(self, artifact: Artifact) -> None:
        self.artifact = artifact
        self._prompt_length: int | None = None
        self._matchers: dict[tuple[int, ...], Matcher] = {}

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        if self._prompt_length is None:
            self._prompt_length = int(input_ids.shape[1])
            self._matchers = {(): self.artifact.matcher()}
        generated = input_ids[:, self._prompt_length:].tolist()
        current: dict[tuple[int, ...], Matcher] = {}
        rows = []
        for sequence in generated:
            key = tuple(sequence)
            matcher = current.get(key) or self._matchers.get(key) or self._extend(key)
            current[key] = matcher
            rows.append(matcher)
        self._matchers = current
        bitmask = allocate_bitmask(len(rows), int(scores.shape[-1]))
        fill_bitmasks(rows, bitmask)
        finished = [i for i, m in enumerate(rows) if m.is_finished()]
        if finished:
            words = bitmask.view(np.uint32)
            for eos in self.artifact.eos_token_ids:
                words[finished, eos >> 5] |= np.uint32(1 << (eos & 31))
        apply_token_bitmask_inplace(scores, torch.from_numpy(bitmask).to(scores.device))
        return scores

    def _extend(self, key: tuple[int, ...]) -> Matcher:
        parent = self._matchers.get(key[:-1])
        if parent is None:
            raise RuntimeError("GLRMaskLogitsProcessor: a row's tokens do not continue any row of the previous "
                               "step; use a new processor for each generate() call")
        child = parent.copy()
        if not child.is_finished():        # after EOS transformers appends padding: nothing to commit
            child.commit(key[-1])
        return child
