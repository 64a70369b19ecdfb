"""Per-request decoding state: `mask()` / `fill_bitmask()` from the Parser DWA, `commit()` through the
lexer and GLR parser.

The mask is the row R[d][q] where d is the DWA state reached by walking the parser stack top-down
(DWA states are cumulative: the last one reached carries everything matched on the way) and q is the
open lexeme's lexer state. A walk starts at each root the top's LR state lists (one per group of the
DWA that can start there; one root for most grammars). With several walks (groups, or GLR stacks in
a graph-structured stack), the rows where they end are OR-ed. `commit` checks the token's bit in that
mask, then advances the recognizer; a rejected token raises `TokenRejected` and leaves the state
unchanged. States are immutable, so `copy()` and
`rollback()` only move references.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Sequence

import numpy as np

from glrmask_runtime.bitmask import NATIVE_INT32, bitmask_array
from glrmask_runtime.contextual import ContextualState
from glrmask_runtime.errors import InputRejected, TokenRejected
from glrmask_runtime.glr import GSSNode
from glrmask_runtime.lazy import Lookup
from glrmask_runtime.recognizer import ParseState
from glrmask_runtime.tables import START

if TYPE_CHECKING:
    from glrmask_runtime.artifact import AcceptIds, Artifact

_NO_STATE = -1
_RECENT_STACKS = 4       # sets of stacks whose walks a matcher keeps (`_walked`)
# Stacks of one root walked one by one as chains (`_walk_linear`, a merged cell below handing over to
# `_dag_accepts`); more share the walk that remembers every (cell, DWA state) it has been at. A chain
# step costs half of a remembering one (go x cl100k, forked stacks: 0.25 against 0.54 us a cell), and
# forked stacks seldom meet in the same DWA state, so walking a shared cell twice is the cheaper way.
_LINEAR_STARTS = 4
State = ParseState | ContextualState
MaskKey = int | tuple[tuple[int, ...], tuple[tuple[int, tuple[int, ...]], ...]]


class Matcher:
    """Grammar-constrained decoding state for one sequence.

    Example:
        >>> m = artifact.matcher()
        >>> allowed = m.mask()            # bool (vocab_size,)
        >>> m.commit(int(token_id))       # raises TokenRejected if not allowed

    Pickling: a matcher pickles as its artifact (by path and file sha256, see `Artifact`) plus what
    was committed (token ids and byte strings, in order); unpickling reloads the artifact (or reuses
    the one already loaded in that process), checks the fingerprint (`ArtifactError` if the file
    changed) and replays the commits, so the copy has the same masks, `steps` and `rollback()`
    history. It suits multiprocessing workers and moving a request to another process on the same
    machine (the artifact file must be at the same path there). The replay costs one commit per step.
    """

    __slots__ = ("_art", "_state", "_finished", "_history", "_replayable", "_walked_recent", "_last_mask")

    def __init__(self, artifact: Artifact, state: State | None = None) -> None:
        self._art = artifact
        self._state: State = state if state is not None else artifact.recognizer.initial()
        self._finished = False
        # One entry per commit: (state before, finished before, what was committed).
        self._history: list[tuple[State, bool, int | bytes]] = []
        self._replayable = state is None   # starts at the grammar's start: pickles as its commits
        # the last few sets of stacks met: their `_Walked` and this matcher's masks on them by lexer
        # state (arrays, where the shared `_Walked` keeps only keys)
        self._walked_recent: tuple[tuple[tuple[GSSNode, ...], _Walked, dict[int, int | np.ndarray]], ...] = ()
        self._last_mask: tuple[State, int | np.ndarray] | None = None   # (state, its mask): fill, then commit

    def __reduce__(self) -> tuple[object, ...]:
        if not self._replayable:
            raise TypeError("a Matcher made from a raw ParseState cannot be pickled; "
                            "make it with artifact.matcher() and commit")
        return _restore_matcher, (self._art, tuple(entry[2] for entry in self._history))

    # ----- masks -------------------------------------------------------------------------------

    def _accepts(self, walked: _Walked, lexer_state: int, allowed: frozenset[int] | None = None) -> list[int]:
        """The accept ids where the walks down `walked.stacks` end, from the roots each top lists
        that can matter at `lexer_state` (and are in `allowed`, when given); each root's walk is
        done once per set of stacks."""
        art = self._art
        by_root = walked.by_root
        stacks = walked.stacks
        found: list[int] = []
        if len(stacks) == 1:
            top = stacks[0]
            roots = art.roots_at(lexer_state, top.state)
            for d in roots:
                if allowed is not None and d not in allowed:
                    continue
                accepts = by_root.get(d)
                if accepts is None:
                    accepts = by_root[d] = self._walk_linear(top, d)
                found += accepts
            return found
        wanted = art.q_roots[lexer_state]
        every = sorted({d for node in stacks for d in art.dwa_roots[node.state]
                        if d in wanted and (allowed is None or d in allowed)})
        for d in every:
            accepts = by_root.get(d)
            if accepts is None:
                starts = [node for node in stacks if d in art.dwa_roots[node.state]]
                if len(starts) <= _LINEAR_STARTS:    # a few forked stacks: a chain walk each
                    accepts = self._walk_linear(starts[0], d)
                    if len(starts) > 1:
                        accepts = sorted({a for node in starts[1:] for a in self._walk_linear(node, d)}.union(accepts))
                else:
                    accepts = _dag_accepts(art.accept_of, art.dwa_edges, art.dwa_default, art.emits,
                                           [(node, d) for node in starts])
                by_root[d] = accepts
            found += accepts
        return found

    def _walk_linear(self, top: GSSNode, d: int) -> list[int]:
        """The accept ids the walk from root `d` down the stack under `top` takes: where it stops, and
        the emitting states it passes (one id where the DWA has none, unless the walk meets a merged
        GSS node below)."""
        art = self._art
        edges, default, emits = art.dwa_edges, art.dwa_default, art.emits
        passed: list[int] = []
        node = top
        while True:
            nxt = edges[d].get(node.state)
            if nxt is None:
                nxt = default[d]
            if nxt == _NO_STATE:
                break
            if emits[d]:
                passed.append(art.accept_of[d])
            d = nxt
            parents = node.parents
            if len(parents) != 1:
                if parents:   # a merged GSS node: finish with the general walk
                    return passed + _dag_accepts(art.accept_of, edges, default, emits, [(p, d) for p in parents])
                break
            node = parents[0]
        passed.append(art.accept_of[d])
        return passed

    def _walked(self, stacks: tuple[GSSNode, ...]) -> tuple[_Walked, dict[int, int | np.ndarray]]:
        """The walks' results and masks on `stacks`, and this matcher's masks on them: the last few
        sets of stacks by object (a token that closes no lexeme changes only the lexer state: most
        steps on code grammars; with the contextual lexer a state may have several), else the
        artifact's by the stacks' cells (`StackMemo`: interned cells, so the same stacks met in any
        request are found)."""
        for recent in self._walked_recent:
            if recent[0] is stacks:
                return recent[1], recent[2]
        art = self._art
        walked = _shared_walked(art, stacks) if art.several_walks else _Walked(stacks)
        masks: dict[int, int | np.ndarray] = {}
        self._walked_recent = ((stacks, walked, masks),) + self._walked_recent[:_RECENT_STACKS - 1]
        return walked, masks

    def _mask(self) -> int | np.ndarray:
        """The current mask: a pool row id, or the packed words of a mask computed for this step
        (the OR over the threads of a contextual-lexer state)."""
        last = self._last_mask
        if last is not None and last[0] is self._state:     # states are immutable: same object, same mask
            return last[1]
        return self._new_mask()

    def _new_mask(self) -> int | np.ndarray:
        """`_mask` for a state whose mask is not the last one kept: computed, and kept."""
        if self._finished:
            return 0
        state = self._state
        if isinstance(state, ParseState):      # the basic lexer: one thread, the state itself
            mask = self._thread_mask(state)
        elif len(state.threads) == 1:
            mask = self._thread_mask(state.threads[0])
        else:
            mask = _or(self._art.rows, [self._thread_mask(thread) for thread in state.threads])
        self._last_mask = (state, mask)
        return mask

    def _thread_mask(self, state: ParseState) -> int | np.ndarray:
        """The mask of one (lexer state, stacks) pair: this matcher's while the stacks stay the same
        object, else from its key kept with the stacks' walks (`_walked`: the same stacks met in any
        request), else computed (`_mask_key`) and its key kept there."""
        walked, masks = self._walked(state.stacks)
        q = state.lexer_state
        known = masks.get(q)
        if known is not None:        # mask() then commit(), or the same stacks and lexer state again
            return known
        art = self._art
        key = walked.masks.get(q)
        if key is None:
            stacks = walked.stacks
            roots = art.roots_at(q, stacks[0].state) if len(stacks) == 1 and not art.closes[q] else None
            if roots is not None and len(roots) <= 1:    # at most one walk down one stack, no runtime
                key = 0                                   # close (every mask of a deterministic grammar
                if roots:                                 # in the "one" layout): that walk's row
                    accepts = walked.by_root.get(roots[0])
                    if accepts is None:
                        accepts = walked.by_root[roots[0]] = self._walk_linear(stacks[0], roots[0])
                    key = _walks_key(art.row_maps[q], accepts)
            else:
                key = self._mask_key(walked, q)
            walked.masks[q] = key
        mask = masks[q] = key if isinstance(key, int) else _combined(art, *key)
        return mask

    def _mask_key(self, walked: _Walked, q: int) -> MaskKey:
        """The mask at lexer state `q` on `walked.stacks`: a pool row id, or the rows to combine
        (`_combined`).

        Tokens whose first byte closes the open lexeme (artifacts with the runtime-close layout) are
        decided here: close the lexeme on the stacks, walk the DWA from START on the result and
        keep the tokens that close it that way."""
        art = self._art
        row_map = art.row_maps[q]
        accepts = self._accepts(walked, q)
        closes = art.closes[q]
        if not closes:
            return _walks_key(row_map, accepts)
        row_ids = _rows_of(row_map, accepts)
        parts = []
        after_close = walked.after_close
        if after_close is None:
            after_close = walked.after_close = {}
        for set_id, closing_tokens, allowed in closes:
            key = (set_id, allowed)
            after = after_close.get(key)
            if after is None:
                after = after_close[key] = self._after_close(walked, set_id, allowed)
            if after:
                parts.append((closing_tokens, after))
        return row_ids, tuple(parts)

    def _after_close(self, walked: _Walked, set_id: int, allowed: frozenset[int]) -> tuple[int, ...]:
        """The rows of the DWA's walks from START, over the roots in `allowed`, on the stacks after
        closing a lexeme as `set_id` (their OR is the mask of the tokens that close it so)."""
        art = self._art
        if walked.closed is None:
            walked.closed = {}
        closed = walked.closed.get(set_id)
        if closed is None:
            stacks = art.recognizer.close_lexeme(walked.stacks, set_id)
            closed = walked.closed[set_id] = _shared_walked(art, stacks) if stacks else _NO_STACKS
        if closed is _NO_STACKS:
            return ()
        if art.lexer_start is None:
            return _rows_of(art.row_maps[START], self._accepts(closed, START, allowed))
        rows: list[int] = []
        for start, part in closed.by_start(art):   # each stack lexes on in its top's context
            rows += _rows_of(art.row_maps[start], self._accepts(part, start, allowed))
        return tuple(dict.fromkeys(rows))

    def fill_bitmask(self, bitmask: np.ndarray, index: int = 0) -> None:
        """Write the allowed tokens into row `index` of an int32 (batch, W) bitmask.

        Bit `v % 32` of word `v // 32` is set iff token v is allowed (the vLLM/xgrammar layout). W may
        be wider than the vocabulary's ceil(vocab_size / 32) words (a padded LM head); the bits of
        ids >= vocab_size are written 0 (forbidden). A CPU torch int32 tensor works too (written in
        place through its array interface). Raises TypeError for a bitmask that is not such an array
        or an index that is not an int (a numpy integer is fine; bool, slices, lists are not),
        ValueError for an index outside [0, batch). Nothing is written when it raises.
        """
        art = self._art
        if type(bitmask) is np.ndarray and bitmask.dtype is NATIVE_INT32 and type(index) is int:
            shape = bitmask.shape     # the common case, checked in the fewest steps: an exact int32 array
            if len(shape) == 2 and shape[1] == art.rows.shape[1] and 0 <= index < shape[0]:
                last = self._last_mask
                mask = last[1] if last is not None and last[0] is self._state else self._new_mask()
                bitmask[index] = art.rows_int32[mask] if isinstance(mask, int) else mask.view(np.int32)
                return
        array = bitmask_array(bitmask, art.rows.shape[1])
        row = index if type(index) is int else _as_index("index", index)
        if not 0 <= row < array.shape[0]:
            raise ValueError(f"index {row} out of range [0, {array.shape[0]}) for a batch of {array.shape[0]}")
        self._write(array, row)

    def _write(self, array: np.ndarray, row: int) -> None:
        """Row `row` of a checked bitmask; words past the vocabulary (a padded head) become 0."""
        mask = self._mask()
        words = self._art.rows.shape[1]
        array[row, :words] = self._art.rows_int32[mask] if isinstance(mask, int) else mask.view(np.int32)
        if array.shape[1] != words:
            array[row, words:] = 0

    def mask(self) -> np.ndarray:
        """The allowed tokens as a bool array of shape (vocab_size,). May be a read-only view."""
        mask = self._mask()
        if isinstance(mask, int):
            return self._art.bool_row(mask)
        bits: np.ndarray = np.unpackbits(mask.view(np.uint8), bitorder="little")
        return bits[:self._art.vocab_size].view(np.bool_)

    def mask_with_prefix(self, prefix: bytes) -> np.ndarray:
        """The mask restricted to tokens whose bytes start with `prefix` (token healing: drop the
        prompt's last token, whose bytes are `prefix`, and let the model pick a token that covers
        them and may go on). A new bool array of shape (vocab_size,)."""
        if not isinstance(prefix, (bytes, bytearray, memoryview)):
            raise TypeError(f"prefix must be bytes, bytearray or memoryview, got {type(prefix).__name__}")
        healed: np.ndarray = self.mask() & self._art.tokens_starting_with(bytes(prefix))
        return healed

    def forced_bytes(self, limit: int = 4096) -> bytes:
        """The bytes every completion of the output begins with (empty if the output may end now or
        several bytes may come next), at most `limit` of them: text to commit without sampling."""
        if self._finished:
            return b""
        art = self._art
        recognizer, lexer = art.recognizer, art.lexer
        state, forced = self._state, bytearray()
        while len(forced) < limit and not recognizer.can_finish(state):
            possible = np.zeros(256, dtype=bool)
            for q, _ in art.threads(state):     # bytes that extend the lexeme, or close it and start one
                possible |= lexer.transitions[q] != 0
                if q != START:
                    possible |= lexer.close_sets[q, :256] != 0
            found = []
            for byte in np.flatnonzero(possible).tolist():
                try:
                    found.append((byte, recognizer.feed(state, bytes([byte]))))
                except InputRejected:
                    continue
                if len(found) > 1:
                    break
            if len(found) != 1:
                break
            forced.append(found[0][0])
            state = found[0][1]
        return bytes(forced)

    def is_allowed(self, token_id: int) -> bool:
        """True iff `commit(token_id)` would succeed now (EOS included).

        Raises TypeError unless token_id is an int or a numpy integer (not bool), ValueError outside
        [0, vocab_size)."""
        return self._allowed(self._check_token(token_id))

    def _allowed(self, token_id: int) -> bool:
        mask = self._mask()
        word: int = self._art.rows.item(mask, token_id >> 5) if isinstance(mask, int) else mask.item(token_id >> 5)
        return (word >> (token_id & 31)) & 1 == 1

    def is_accepting(self) -> bool:
        """True iff EOS is allowed now: the output so far is a complete sentence."""
        if self._finished:
            return False
        return self._art.recognizer.can_finish(self._state)

    def is_finished(self) -> bool:
        """True once EOS has been committed."""
        return self._finished

    # ----- state changes -----------------------------------------------------------------------

    def commit(self, token_id: int) -> None:
        """Advance by one token. Raises TokenRejected (state unchanged) if it is not allowed.

        Raises TypeError unless token_id is an int or a numpy integer (not bool), ValueError outside
        [0, vocab_size); the state is unchanged then too."""
        art = self._art
        if type(token_id) is not int or not 0 <= token_id < art.vocab_size:
            token_id = self._check_token(token_id)
        if self._finished:
            raise TokenRejected(token_id, art.token_bytes(token_id), len(self._history),
                                "the output is finished (EOS committed)")
        last = self._last_mask
        mask = last[1] if last is not None and last[0] is self._state else self._new_mask()
        word: int = art.rows.item(mask, token_id >> 5) if isinstance(mask, int) else mask.item(token_id >> 5)
        if not (word >> (token_id & 31)) & 1:
            raise TokenRejected(token_id, art.token_bytes(token_id), len(self._history))
        if token_id in art.eos_token_ids:
            self._history.append((self._state, self._finished, token_id))
            self._finished = True
            self._last_mask = None      # the same state, finished: its mask is empty now
            return
        known: Mapping[int, tuple[GSSNode, ...]] | None = None   # the mask's closes on these stacks, if any
        if isinstance(self._state, ParseState):
            walked = next((w for stacks, w, _ in self._walked_recent if stacks is self._state.stacks), None)
            if walked is not None and walked.closed:
                known = {set_id: after.stacks for set_id, after in walked.closed.items()}
        try:
            state = art.recognizer.feed_admitted(self._state, art.token_bytes(token_id), known)
        except InputRejected as err:   # the DWA allowed it but the parser did not: a bug
            raise RuntimeError(f"internal inconsistency: token {token_id} is in the mask but {err}") from err
        self._history.append((self._state, self._finished, token_id))
        self._state = state

    def commit_bytes(self, data: bytes | bytearray | memoryview) -> None:
        """Advance by raw bytes (forced text): one step, undone by one `rollback()`.

        Raises InputRejected (state unchanged) if no sentence continues with them, TypeError for
        anything but bytes, bytearray or memoryview (an int is not read as that many NUL bytes).
        Empty input changes nothing and is not a step.
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data must be bytes, bytearray or memoryview, got {type(data).__name__}")
        data = bytes(data)
        if not data:
            return
        if self._finished:
            raise InputRejected(0, "the output is finished (EOS committed)")
        state = self._art.recognizer.feed(self._state, data)
        self._history.append((self._state, self._finished, data))
        self._state = state

    def rollback(self, n: int = 1) -> None:
        """Undo the last n commits (tokens or byte strings)."""
        if not 0 <= n <= len(self._history):
            raise ValueError(f"cannot roll back {n} steps; {len(self._history)} committed")
        if n:
            self._state, self._finished, _ = self._history[-n]
            del self._history[-n:]

    def copy(self) -> "Matcher":
        """An independent matcher in the same state (with the same history)."""
        other = Matcher(self._art, self._state)
        other._finished = self._finished
        other._history = list(self._history)
        other._replayable = self._replayable
        return other

    def reset(self) -> None:
        """Back to the start of the grammar."""
        self._state = self._art.recognizer.initial()
        self._finished = False
        self._history.clear()
        self._replayable = True

    def _check_token(self, token_id: object) -> int:
        value = token_id if type(token_id) is int else _as_index("token id", token_id)
        if not 0 <= value < self._art.vocab_size:
            raise ValueError(f"token id {value} out of range [0, {self._art.vocab_size})")
        return value

    @property
    def parse_state(self) -> State:
        """The recognizer state the next mask is computed from: (lexer state, GLR stacks), or with
        the contextual lexer a `ContextualState` of such pairs."""
        return self._state

    @property
    def steps(self) -> int:
        """Number of commits so far."""
        return len(self._history)


def fill_bitmasks(matchers: Sequence[Matcher], bitmask: np.ndarray, indices: Sequence[int] | None = None) -> None:
    """`matchers[i].fill_bitmask(bitmask, indices[i])` for every i (rows 0, 1, ... without
    `indices`), with the bitmask and the indices checked once. All matchers must share one artifact's
    vocabulary width. Nothing is written when it raises."""
    if not matchers:
        return
    words = matchers[0]._art.rows.shape[1]
    if any(m._art.rows.shape[1] != words for m in matchers):
        raise ValueError("fill_bitmasks: the matchers' artifacts have different vocabulary sizes")
    array = bitmask_array(bitmask, words)
    rows = list(range(len(matchers))) if indices is None else [_as_index("index", i) for i in indices]
    if len(rows) != len(matchers):
        raise ValueError(f"fill_bitmasks: {len(matchers)} matchers but {len(rows)} indices")
    bad = [r for r in rows if not 0 <= r < array.shape[0]]
    if bad:
        raise ValueError(f"index {bad[0]} out of range [0, {array.shape[0]}) for a batch of {array.shape[0]}")
    for matcher, row in zip(matchers, rows):
        matcher._write(array, row)


def _restore_matcher(artifact: Artifact, inputs: tuple[int | bytes, ...]) -> Matcher:
    """Unpickle: a fresh matcher that commits `inputs` again (the artifact is verified already)."""
    matcher = Matcher(artifact)
    for item in inputs:
        if isinstance(item, bytes):
            matcher.commit_bytes(item)
        else:
            matcher.commit(item)
    return matcher


def _as_index(what: str, value: object) -> int:
    """`value` as an int if it is an int (bool excluded) or a numpy integer scalar, else TypeError."""
    if isinstance(value, np.integer) or (isinstance(value, int) and not isinstance(value, bool)):
        return int(value)
    raise TypeError(f"{what} must be an int or a numpy integer, got {type(value).__name__} {value!r}")


class _Walked:
    """What masks need from one set of stacks, shared by every matcher that meets them: per lexer
    state, the mask's key; per root, the accept ids where its walks end; per (closing term set,
    roots), the rows from START after closing the lexeme so; per closing term set, the stacks after
    it and their walks (each filled as asked; `commit` reuses the stacks after a close the mask
    made)."""

    __slots__ = ("stacks", "by_root", "after_close", "closed", "masks", "_by_start")

    def __init__(self, stacks: tuple[GSSNode, ...]) -> None:
        self.stacks = stacks
        self.masks: dict[int, MaskKey] = {}     # lexer state -> the mask's key there
        self.by_root: dict[int, list[int]] = {}
        # made by the first runtime close (most stacks of most grammars have none)
        self.after_close: dict[tuple[int, frozenset[int]], tuple[int, ...]] | None = None
        self.closed: dict[int, _Walked] | None = None   # _NO_STACKS (stacks ()) where no stack takes it
        self._by_start: tuple[tuple[int, _Walked | None], ...] | None = None   # None: self (no cycle)

    def by_start(self, art: Artifact) -> tuple[tuple[int, _Walked], ...]:
        """The stacks split by the START of their top's lexer context (`Artifact.split_by_start`),
        each part with its walks."""
        if self._by_start is None:
            parts = art.split_by_start(self.stacks)
            self._by_start = tuple((start, None if len(parts) == 1 else _Walked(nodes)) for start, nodes in parts)
        return tuple((start, self if part is None else part) for start, part in self._by_start)


_NO_STACKS = _Walked(())


def _shared_walked(art: Artifact, stacks: tuple[GSSNode, ...]) -> _Walked:
    """The artifact's `_Walked` for these stacks (by their interned cells), made and kept if new;
    a fresh one, kept by no one, when the memo is off or a mask is one walk (json: a probe and an
    entry per new stacks cost more than that walk)."""
    memo = art.mask_memo
    if not memo.limit or not art.several_walks:
        return _Walked(stacks)
    walked: _Walked | None = memo.get(stacks)
    if walked is None:
        walked = _Walked(stacks)
        memo.keep(stacks, walked)
    return walked


def _walks_key(row_map: Lookup, accepts: list[int]) -> MaskKey:
    """The mask of walks that ended at `accepts`, with no runtime close: one pool row id (0: none),
    or the rows to OR (`_combined`)."""
    if len(accepts) == 1:                 # one walk's last state: its row
        return row_map.get(accepts[0], 0)
    rows = _rows_of(row_map, accepts)
    return (rows, ()) if len(rows) > 1 else rows[0] if rows else 0


def _rows_of(row_map: Lookup, accepts: list[int]) -> tuple[int, ...]:
    """The distinct non-empty rows of walks that ended at `accepts`, in the order first met (walks
    of different roots or stacks often end in states with the same row: one OR each is enough)."""
    rows = dict.fromkeys([row_map.get(accept, 0) for accept in accepts])
    rows.pop(0, None)
    return tuple(rows)


def _combined(art: Artifact, rows: tuple[int, ...],
              closes: tuple[tuple[int, tuple[int, ...]], ...]) -> np.ndarray:
    """OR of the pool rows `rows` and, per close, (closing tokens' row) AND (OR of its walks' rows):
    a read-only array, kept per artifact by its row ids (the same combination recurs across steps
    and requests: go x cl100k replays 219 distinct ones in 2,498 steps)."""
    key = (rows, closes)
    cache = art.combined_masks
    mask = cache.get(key)
    if mask is None:
        pool = art.rows
        mask = _union(pool, rows)
        for closing_tokens, after in closes:
            mask |= pool[closing_tokens] & _union(pool, after)
        mask.flags.writeable = False
        cache.put(key, mask)
    return mask


def _or(pool: np.ndarray, masks: list[int | np.ndarray]) -> np.ndarray:
    """The OR of masks given as pool row ids or packed words, as a new array."""
    out: np.ndarray = (pool[masks[0]] if isinstance(masks[0], int) else masks[0]).copy()
    for mask in masks[1:]:
        np.bitwise_or(out, pool[mask] if isinstance(mask, int) else mask, out=out)
    return out


def _union(pool: np.ndarray, rows: tuple[int, ...]) -> np.ndarray:
    """The OR of pool rows, as a new array (the empty row for none)."""
    mask: np.ndarray = pool[rows[0] if rows else 0].copy()
    for row in rows[1:]:
        np.bitwise_or(mask, pool[row], out=mask)
    return mask


def _dag_accepts(accept_of: AcceptIds, edges: Mapping[int, Lookup], default: Sequence[int],
                 emits: bytes, start: list[tuple[GSSNode, int]]) -> list[int]:
    """Walk every path of a graph-structured stack; the accept ids of the states where walks stop
    and of the emitting states they pass. Each (GSS node, DWA state) pair is walked from once (paths
    that meet again share the rest)."""
    found: set[int] = set()
    seen: set[tuple[int, int]] = set()
    todo = list(start)
    while todo:
        node, d = todo.pop()
        while True:
            key = (id(node), d)
            if key in seen:
                break
            seen.add(key)
            nxt = edges[d].get(node.state, default[d])
            if nxt == _NO_STATE:
                found.add(accept_of[d])
                break
            if emits[d]:
                found.add(accept_of[d])
            parents = node.parents
            if len(parents) == 1:       # follow a chain without the work list
                node, d = parents[0], nxt
                continue
            if not parents:
                found.add(accept_of[nxt])
            else:
                todo += [(parent, nxt) for parent in parents]
            break
    return sorted(found)
