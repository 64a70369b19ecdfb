"""What was computed from parser stacks, remembered by the stacks themselves.

A thread's mask is a function of its lexer state and its stacks (a graph-structured stack), and the
GLR parser interns stack cells (`GLRParser.cell`: one object per state over the same parent cells),
so equal stacks are the same cells in every request that reaches them. `StackMemo` maps stacks to
what the matcher computed on them (its `_Walked`: the DWA walks from each root, the stacks after
each runtime close and the walks on them, the mask's key per lexer state), so stacks met again, in
any step or request, cost a dict probe that hashes the cells by identity, and a new lexer state on
known stacks only what its mask adds. Stack contexts recur whole far more than one request would
suggest: on a pass over 40 of the bench's documents, 43% of go.lark's new (lexer state, stacks)
pairs (x cl100k) and 75% of sql.lark's had been seen before, in an earlier step or document, and 53%
and 80% of their stacks.

One memo per artifact (`Artifact.mask_memo`), shared by its matchers; at most `limit` sets of stacks
(default `MEMO_STACKS`), the oldest evicted past it (a `bounded.BoundedCache`); `limit = 0` turns it
off. `clear` empties it (the benchmark does before each pass, so that every pass does the same work).
"""

from __future__ import annotations

from typing import Any

from glrmask_runtime.bounded import BoundedCache
from glrmask_runtime.glr import GSSNode

MEMO_STACKS = 16_384      # about 1 KB each (walks, closes, keys); the cells are shared


class StackMemo(BoundedCache[tuple[GSSNode, ...], Any]):
    """stacks -> what was computed on them (opaque here: the matcher's `_Walked`); `get(stacks)`:
    what was kept for these stacks (the same cells), or None."""

    __slots__ = ()

    def __init__(self, limit: int = MEMO_STACKS) -> None:
        super().__init__(limit)

    def keep(self, stacks: tuple[GSSNode, ...], value: Any) -> None:
        """Remember `value` for these stacks (nothing when `limit` is 0)."""
        if self.limit:
            self.put(stacks, value)
