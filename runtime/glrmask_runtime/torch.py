"""Bitmasks as torch tensors: allocate one, apply it to logits in place (CPU or CUDA).

torch is imported when these functions are called, never by `import glrmask_runtime`. A bitmask is
int32 (batch, W), token v allowed iff bit v % 32 of word v // 32 is set (`glrmask_runtime.bitmask`);
`Matcher.fill_bitmask` writes into a CPU int32 tensor directly. On a GPU the usual loop fills a
CPU bitmask (pinned memory helps) and copies it to the logits' device before applying it.
"""

from __future__ import annotations

from typing import Any

from glrmask_runtime.bitmask import WORD_BITS, bitmask_shape


def allocate_token_bitmask(batch_size: int, vocab_size: int, *, pin_memory: bool = False) -> Any:
    """A CPU int32 tensor of `bitmask_shape(batch_size, vocab_size)`, every bit set (all allowed)."""
    import torch

    return torch.full(bitmask_shape(batch_size, vocab_size), -1, dtype=torch.int32, pin_memory=pin_memory)


def apply_token_bitmask_inplace(logits: Any, bitmask: Any, indices: Any = None) -> None:
    """Set logits[i, v] = -inf wherever bit v of bitmask row i is 0 (rows `indices` only, if given).

    logits: a floating tensor (N,) or (batch, N) on any device; bitmask: an int32 tensor on the
    same device (a numpy array is copied there) with at least ceil(N / 32) words per row, so a
    bitmask allocated for a padded head (N > the tokenizer's size) fits. TypeError/ValueError say
    what did not match; nothing is written then.
    """
    import torch

    if not isinstance(logits, torch.Tensor) or not logits.is_floating_point():
        raise TypeError(f"logits: expected a floating-point torch tensor, got {_describe(logits)}")
    if not isinstance(bitmask, torch.Tensor):
        bitmask = torch.as_tensor(bitmask, device=logits.device)
    if bitmask.dtype != torch.int32:
        raise TypeError(f"bitmask: expected int32, got {bitmask.dtype}")
    if bitmask.device != logits.device:
        raise ValueError(f"bitmask is on {bitmask.device} and logits on {logits.device}; "
                         "move it first: bitmask.to(logits.device, non_blocking=True)")
    rows_logits = logits if logits.dim() == 2 else logits.unsqueeze(0)
    rows_mask = bitmask if bitmask.dim() == 2 else bitmask.unsqueeze(0)
    n = rows_logits.shape[-1]
    words = -(-n // WORD_BITS)
    if rows_logits.dim() != 2 or rows_mask.dim() != 2 or rows_mask.shape[-1] < words:
        raise ValueError(f"bitmask: expected (batch, W >= {words}) for logits {tuple(logits.shape)}, "
                         f"got {tuple(bitmask.shape)}")
    if indices is None:
        if rows_mask.shape[0] != rows_logits.shape[0]:
            raise ValueError(f"bitmask has {rows_mask.shape[0]} rows, logits {rows_logits.shape[0]}")
        target, source = rows_logits, rows_mask
    else:
        index = torch.as_tensor(indices, device=logits.device, dtype=torch.long)
        target, source = rows_logits[index], rows_mask[index]
    shifts = torch.arange(WORD_BITS, device=logits.device, dtype=torch.int32)
    allowed = ((source[:, :words].unsqueeze(-1) >> shifts) & 1).bool().flatten(1)[:, :n]
    if indices is None:
        target.masked_fill_(~allowed, float("-inf"))
    else:
        rows_logits[index] = target.masked_fill(~allowed, float("-inf"))


def _describe(value: object) -> str:
    shape = getattr(value, "shape", None)
    return f"{type(value).__name__} of shape {tuple(shape)}" if shape is not None else type(value).__name__
