"""Masks remembered by the stacks they were computed on.

A thread's mask is a function of its lexer state and its stacks (a graph-structured stack), and the
GLR parser interns stack cells (`GLRParser.cell`: one object per state over the same parent cells),
so equal stacks are the same cells in every request that reaches them. `StackMemo` keeps, per
(lexer state, stacks), the mask's key and the stacks after each close its computation made (so that
`commit` gets them without a GLR step). Stack contexts recur whole far more than one request would
suggest: on a pass over 40 of the bench's documents, 43% of go.lark's new stacks (x cl100k) and 75%
of sql.lark's had been seen before, with the same lexer state, in an earlier step or document.

Filing costs a dict entry and a lookup a dict probe (the key hashes the cells by identity), so a
result is kept the first time it is computed. One memo per artifact (`Artifact.mask_memo`), shared
by its matchers; at most `limit` results (default `MEMO_RESULTS`), emptied when full; `limit = 0`
turns it off. `clear` empties it (the benchmark does before each pass, so that every pass does the
same work).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from glrmask_runtime.glr import GSSNode

MEMO_RESULTS = 20_000     # a key, a tuple of stacks and a small dict each; the cells are shared
# (the mask's key, closing term set -> the stacks after closing the lexeme so)
Result = tuple[Any, Mapping[int, tuple[GSSNode, ...]]]


class StackMemo:
    """(lexer state, stacks) -> the mask's key and the stacks after its closes."""

    def __init__(self, limit: int = MEMO_RESULTS) -> None:
        self.limit = limit
        self._results: dict[tuple[int, tuple[GSSNode, ...]], Result] = {}

    def clear(self) -> None:
        self._results = {}

    def __len__(self) -> int:
        return len(self._results)

    def get(self, lexer_state: int, stacks: tuple[GSSNode, ...]) -> Result | None:
        """The result kept for these stacks (the same cells) at `lexer_state`, or None."""
        return self._results.get((lexer_state, stacks))

    def keep(self, lexer_state: int, stacks: tuple[GSSNode, ...], key: Any,
             closes: Mapping[int, tuple[GSSNode, ...]]) -> None:
        """Remember a mask's key and the stacks after its closes (nothing when `limit` is 0)."""
        if not self.limit:
            return
        if len(self._results) >= self.limit:
            self._results = {}           # a rebinding: matchers reading the old dict are unaffected
        self._results[(lexer_state, stacks)] = (key, closes)
