"""Stage 8: runtime rows. R[d][q] = the tokens allowed when the DWA walk ends in state d and the
open lexeme is in lexer state q, as packed bits in the vLLM bitmask layout (bit v % 32 of 32-bit word
v // 32). Rows are deduplicated into a pool; row 0 is the empty row.

R[d][q] depends on d only through d's cumulative outcome set, so states map to *accept ids* (one per
distinct set) and the table is kept per lexer state, sparse: q -> (accept id -> row) for the
non-empty rows only (big DWAs have far fewer distinct sets than states, and most (set, q) rows are
empty). Everything is vectorized over token classes, then expanded to tokens once per distinct row.

Which walks can matter: a walk from root r ends in a state whose outcomes are among those of the
states r reaches, so at lexer state q it can give a non-empty row only if one of those outcomes is
present at q; likewise a walk from START after a runtime close matters only if it can accept an
outcome of one of the closing tokens. The pool lists those roots per lexer state and per close
(inside an identifier only the groups whose first lexeme the identifier can become; java.lark x
cl100k: 7 walks per new stack at the median, 42 at most, of which 2-3 can give a row).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from glrmask_cli.forks import fork_map
from glrmask_cli.parser_dwa.determinize import ParserDWA
from glrmask_cli.progress import NO_PROGRESS, Progress, Ticker
from glrmask_cli.ragged import row_positions
from glrmask_cli.terminal_dwa import NO_OUTCOME, LexerContexts, TerminalDWA
from glrmask_runtime.tables import START


@dataclass(frozen=True, eq=False)
class RowPool:
    rows: np.ndarray       # uint32 (n_rows, ceil(vocab_size / 32)); row 0 is all zeros
    accept_of: np.ndarray  # int32 (n_dwa_states,): id of the state's cumulative outcome set
    q_offsets: np.ndarray  # int32 (n_lexer_states + 1,): lexer state q's entries are [q_offsets[q], q_offsets[q+1])
    q_accepts: np.ndarray  # int32: accept ids with a non-empty row at q, sorted
    q_rows: np.ndarray     # int32: their rows
    close_offsets: np.ndarray  # int32 (n_lexer_states + 1,): q's runtime closes are [close_offsets[q], ...[q+1])
    close_sets: np.ndarray     # int32: term set the open lexeme closes as (TerminalDWA.close_row)
    close_rows: np.ndarray     # int32: the tokens that close it so (their first byte cannot extend it)
    q_root_offsets: np.ndarray     # int32 (n_lexer_states + 1,): CSR, lexer state -> the DWA roots whose
    q_roots: np.ndarray            # walks can give a non-empty row there (sorted)
    close_root_offsets: np.ndarray  # int32 (n_closes + 1,): CSR, runtime close -> the roots whose walks
    close_roots: np.ndarray         # from START can accept one of its closing tokens (sorted)


def _future_outcomes(dwa: ParserDWA) -> list[int]:
    """Per DWA state, the outcomes of the states a walk from it can reach (its own included)."""
    future = list(dwa.outcomes)
    shared: dict[int, int] = {}       # one object per distinct set
    for state, successors in dwa.successors_backward():   # numbered topologically: targets first
        found = future[state]
        for target in successors:
            found |= future[target]
        future[state] = shared.setdefault(found, found)
    return future


_SHARES_PER_JOB = 2     # lexer-state shares per process in `build_rows` (in one process: one per picks)
_FORK_WORK = 1 << 24    # (distinct lexer-state rows x token classes) below which `build_rows` uses one process


def _bitset(members: np.ndarray) -> int:
    """Bool per outcome -> bitset int."""
    return int.from_bytes(np.packbits(members, bitorder="little").tobytes(), "little")


def _csr(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(lists) + 1, dtype=np.int32)
    offsets[1:] = np.cumsum([len(items) for items in lists])
    flat = np.asarray([item for items in lists for item in items], dtype=np.int32)
    return offsets, flat


def words_per_row(vocab_size: int) -> int:
    return (vocab_size + 31) // 32


def _outcome_members(bitset: int, n_outcomes: int) -> np.ndarray:
    """Bitset int -> bool membership of length n_outcomes + 1 (the last entry, for NO_OUTCOME, False)."""
    raw = np.frombuffer(bitset.to_bytes((n_outcomes + 7) // 8 or 1, "little"), dtype=np.uint8)
    members = np.zeros(n_outcomes + 1, dtype=bool)
    members[:n_outcomes] = np.unpackbits(raw, bitorder="little")[:n_outcomes].astype(bool)
    return members


def _pack_tokens(allowed: np.ndarray) -> np.ndarray:
    """Bool per token -> uint32 words, bit v % 32 of word v // 32."""
    n_words = words_per_row(len(allowed))
    packed = np.zeros(n_words * 4, dtype=np.uint8)
    bits = np.packbits(allowed, bitorder="little")
    packed[:len(bits)] = bits
    return packed.view("<u4")


class _Pool:
    """Packed token rows, deduplicated, numbered in the order `number` is asked for them (row 0: the
    empty row). Rows are first interned by their class-level form (one bool per token class, the
    last two for the EOS and never classes), so a row is expanded to tokens once."""

    def __init__(self, class_of_token: np.ndarray, n_classes: int) -> None:
        self._class_of_token = class_of_token.astype(np.intp)    # np.take converts other indices every call
        self._n_classes = n_classes
        self._by_classes: dict[bytes, bytes] = {}      # packed class row -> packed token row
        self._by_listed: dict[bytes, bytes] = {}       # sorted class ids (int32) -> packed token row
        self._tokens_by_class: tuple[np.ndarray, np.ndarray] | None = None    # `_class_tokens`
        self._number: dict[bytes, int] = {}
        self.rows: list[np.ndarray] = []

    def token_row(self, allowed_classes: np.ndarray) -> bytes:
        """The packed token row of the tokens whose class is allowed, as bytes (interned)."""
        return self.token_row_of_packed(np.packbits(allowed_classes))

    def token_row_of_packed(self, packed_classes: np.ndarray) -> bytes:
        """`token_row` of the classes given as packed bits (numpy's big-endian bit order)."""
        key = packed_classes.tobytes()
        found = self._by_classes.get(key)
        if found is None:
            allowed = np.unpackbits(packed_classes, count=self._n_classes + 2).view(bool)
            # np.take: 40% faster than indexing for a 128k-token gather
            found = self._by_classes[key] = _pack_tokens(np.take(allowed, self._class_of_token)).tobytes()
        return found

    def token_row_of_listed(self, classes: np.ndarray) -> bytes:
        """`token_row` of the classes given as a sorted int32 array of class ids (a row of few classes
        is expanded through their token lists instead of a gather over every token)."""
        key = classes.tobytes()
        found = self._by_listed.get(key)
        if found is None:
            tokens, offsets = self._class_tokens()
            allowed = np.zeros(len(self._class_of_token), dtype=bool)
            starts = offsets[classes]
            allowed[tokens[row_positions(starts, offsets[classes + 1] - starts)]] = True
            found = self._by_listed[key] = _pack_tokens(allowed).tobytes()
        return found

    def _class_tokens(self) -> tuple[np.ndarray, np.ndarray]:
        """Token ids ordered by class, and each class's offsets into them (CSR; made once)."""
        if self._tokens_by_class is None:
            offsets = np.zeros(self._n_classes + 3, dtype=np.intp)
            np.cumsum(np.bincount(self._class_of_token, minlength=self._n_classes + 2), out=offsets[1:])
            # the order within a class does not matter (its tokens are set together): no stable sort
            self._tokens_by_class = (np.argsort(self._class_of_token), offsets)
        return self._tokens_by_class

    def number(self, packed: bytes) -> int:
        row = self._number.get(packed)
        if row is None:
            row = self._number[packed] = len(self.rows)
            self.rows.append(np.frombuffer(packed, dtype="<u4"))
        return row


def build_rows(dwa: ParserDWA, tdwa: TerminalDWA, progress: Progress = NO_PROGRESS,
               contexts: LexerContexts | None = None, jobs: int = 1) -> RowPool:
    """Compute R[d][q] for every DWA state and lexer state, deduplicated; `progress` counts lexer
    states. `contexts`: lark's contextual lexer (a runtime close walks from the START of each
    context the closed lexeme hands over to). `jobs`: processes that compute the lexer states' rows
    (workers.py; the pool is the same for any number).

    Per lexer state q, in class space: the outcomes present at q, and for every accept id the subset
    of them in its set, as an exact bit mask over the present ones (accept ids with equal masks have
    equal rows, so each distinct mask is OR-ed and expanded once); each row is expanded to tokens once
    per distinct class-level row. Lexer states with equal outcome rows share all of it, and those with
    equal sets of present outcomes share the masks (keywords3000 x cl100k: 12,963 lexer states, 5,071
    outcome rows, 399 present sets). Runtime closes depend on q only through what its lexeme closes as
    before each first byte (and, with contexts, where an ignored lexeme hands over), and are computed
    once per such row."""
    n_outcomes = len(tdwa.outcomes)
    n_lexer_states = tdwa.n_lexer_states
    pool = _Pool(tdwa.class_of_token, tdwa.n_classes)
    empty = pool.number(pool.token_row(np.zeros(tdwa.n_classes + 2, dtype=bool)))    # row 0: nothing allowed
    accept_ids: dict[int, int] = {}
    accept_of = np.fromiter((accept_ids.setdefault(o, len(accept_ids)) for o in dwa.outcomes), dtype=np.int32,
                            count=dwa.n_states)
    members = [np.flatnonzero(_outcome_members(bitset, n_outcomes)[:n_outcomes]) for bitset in accept_ids]
    holders = _Holders(members, n_outcomes)
    future = _future_outcomes(dwa)
    roots = sorted(set(dwa.roots))
    # a block's rows are distinct (TerminalDWA), so lexer states with equal rows have equal picks
    picks = np.concatenate([tdwa.block_pick, tdwa.eos_outcome[:, None]], axis=1)
    pick_of: dict[bytes, int] = {}
    pick_ids: list[int] = []          # per q, the id of its picks
    first_q: list[int] = []           # per id, the first q with those picks
    for q in range(n_lexer_states):
        pick = pick_of.setdefault(picks[q].tobytes(), len(first_q))
        if pick == len(first_q):
            first_q.append(q)
        pick_ids.append(pick)
    per_present: dict[bytes, _Masks] = {}      # present outcomes -> their masks (each process its own)

    def share(chosen: list[int]) -> list[tuple[list[int], np.ndarray, list[bytes]]]:
        """Roots, accept ids and rows of the lexer states with these pick ids (one q each); the rows
        are interned, so a process's answer carries each distinct row once."""
        return [_rows_at(_live_outcomes(tdwa, first_q[pick]), n_outcomes, holders, per_present, pool, roots, future)
                for pick in chosen]

    jobs = jobs if len(first_q) * (tdwa.n_classes + 2) >= _FORK_WORK else 1      # forking costs 10s of ms
    n_shares = len(first_q) if jobs <= 1 else min(len(first_q), _SHARES_PER_JOB * jobs)
    shares = [list(range(i, len(first_q), n_shares)) for i in range(n_shares)]   # interleaved: even costs
    states_of = np.bincount(np.asarray(pick_ids, dtype=np.int64), minlength=len(first_q))
    at_pick: dict[int, tuple[list[int], np.ndarray, list[bytes]]] = {}
    ticker = Ticker(progress, n_lexer_states, "lexer states")
    for chosen, done in zip(shares, fork_map(share, shares, jobs, "rows")):
        at_pick.update(zip(chosen, done))
        ticker.advance(int(states_of[chosen].sum()))
    ticker.close()
    # rows numbered in (lexer state, accept id) order: a q whose picks came before brings no new row
    numbered = [np.asarray([pool.number(row) for row in at_pick[pick][2]], dtype=np.int32)
                for pick in range(len(first_q))]
    q_roots = [at_pick[pick][0] for pick in pick_ids]
    q_accepts = np.concatenate([at_pick[pick][1] for pick in pick_ids])
    q_rows = np.concatenate([numbered[pick] for pick in pick_ids])
    q_offsets = np.zeros(n_lexer_states + 1, dtype=np.int64)
    q_offsets[1:] = np.cumsum([len(numbered[pick]) for pick in pick_ids])
    ticker.note(f"{len(pool.rows):,} rows")
    close_offsets, close_sets, close_rows = [0], [], []
    close_roots: list[list[int]] = []
    from_start: dict[int, np.ndarray] = {}
    closes_of: dict[tuple[bytes, int], list[tuple[int, int, list[int]]]] = {}
    for q in range(n_lexer_states):
        restart = -1 if contexts is None else int(contexts.restart[q])
        key = (tdwa.state_close[q].tobytes(), restart)
        found = closes_of.get(key)
        if found is None:
            found = closes_of[key] = []
            closes = tdwa.close_row(q)
            for term_set in np.unique(closes[closes != 0]).tolist():
                closing = closes == term_set
                after = np.zeros(n_outcomes + 1, dtype=bool)
                hand_over = (START,) if contexts is None else contexts.hand_over(q, term_set)
                for start in hand_over:
                    if start not in from_start:
                        from_start[start] = tdwa.outcome_row(start)
                    after[from_start[start][closing]] = True     # NO_OUTCOME lands in the last entry
                accepted = _bitset(after[:n_outcomes])
                found.append((term_set, pool.number(pool.token_row(closing)),
                              [root for root in roots if future[root] & accepted]))
        for term_set, row, roots_here in found:
            close_sets.append(term_set)
            close_rows.append(row)
            close_roots.append(roots_here)
        close_offsets.append(len(close_rows))
    assert empty == 0
    i32 = lambda values: np.asarray(values, dtype=np.int32)  # noqa: E731
    q_root_offsets, q_root_items = _csr(q_roots)
    close_root_offsets, close_root_items = _csr(close_roots)
    return RowPool(rows=np.ascontiguousarray(np.stack(pool.rows), dtype="<u4"), accept_of=accept_of,
                   q_offsets=i32(q_offsets), q_accepts=i32(q_accepts), q_rows=i32(q_rows),
                   close_offsets=i32(close_offsets), close_sets=i32(close_sets), close_rows=i32(close_rows),
                   q_root_offsets=q_root_offsets, q_roots=q_root_items,
                   close_root_offsets=close_root_offsets, close_roots=close_root_items)


_SPARSE_SHARE = 8     # a lexer state where under 1/8 of the classes have an outcome is worked on sparse


class _Listed(NamedTuple):
    """A lexer state's classes that have an outcome (ascending, the EOS class included) and those
    outcomes: its outcome row without the NO_OUTCOME entries."""

    classes: np.ndarray
    outcomes: np.ndarray


def _live_outcomes(tdwa: TerminalDWA, q: int) -> np.ndarray | _Listed:
    """Lexer state q's outcome per class (`TerminalDWA.outcome_row`), or, where few classes have one
    (most lexer states of a JSON Schema: a few first bytes continue their lexeme), only those, read
    from the blocks where q picks a row with outcomes."""
    picks = tdwa.block_pick[q]
    live = np.flatnonzero(picks)
    outcome = np.concatenate([tdwa.block_rows[block][pick] for block, pick in zip(live.tolist(), picks[live].tolist())]
                             + [tdwa.eos_outcome[q:q + 1].astype(np.int32)])
    kept = np.flatnonzero(outcome != NO_OUTCOME)
    if len(kept) * _SPARSE_SHARE >= tdwa.n_classes:
        return tdwa.outcome_row(q)
    # where each live block's part (and last, the EOS entry) begins in `outcome`, and its first class
    sizes = tdwa.block_starts[live + 1] - tdwa.block_starts[live]
    begins = np.concatenate([[0], np.cumsum(sizes)])
    firsts = np.append(tdwa.block_starts[live], tdwa.n_classes)
    part = np.searchsorted(begins, kept, side="right") - 1
    return _Listed((firsts[part] + kept - begins[part]).astype(np.int32), outcome[kept])


def _rows_at(outcome: np.ndarray | _Listed, n_outcomes: int, holders: "_Holders",
             per_present: dict[bytes, _Masks], pool: _Pool, roots: list[int],
             future: list[int]) -> tuple[list[int], np.ndarray, list[bytes]]:
    """For a lexer state whose outcome per class is `outcome` (or only its classes with one): the
    roots whose walks can give a non-empty row there, the accept ids with a non-empty row (sorted)
    and their packed rows. `per_present` keeps each set of present outcomes' distinct masks (lexer
    states share them)."""
    if isinstance(outcome, _Listed):
        present = np.zeros(n_outcomes, dtype=bool)
        present[outcome.outcomes] = True
    else:
        shifted = (outcome - NO_OUTCOME).astype(np.intp)     # NO_OUTCOME (-1) -> 0; numpy's own index type
        seen = np.zeros(n_outcomes + 1, dtype=bool)          # a scatter: 2-3x faster than np.bincount
        seen[shifted] = True
        present = seen[1:]
    present_ids = np.flatnonzero(present)
    here = _bitset(present)
    roots_here = [root for root in roots if future[root] & here]
    key = present_ids.tobytes()
    masks = per_present.get(key)
    if masks is None:
        masks = per_present[key] = _Masks.of(*holders.masks(present_ids))
    if not len(masks.hit):
        return roots_here, masks.hit, []
    bits, bounds = masks.bits, masks.starts.tolist()
    rows = []
    if isinstance(outcome, _Listed):
        # a mask's row: the listed classes whose outcome is one of the mask's
        chosen = np.zeros(n_outcomes, dtype=bool)
        for begin, end in zip(bounds, bounds[1:]):
            mine = present_ids[bits[begin:end]]
            chosen[mine] = True
            rows.append(pool.token_row_of_listed(outcome.classes[chosen[outcome.outcomes]]))
            chosen[mine] = False
    elif len(bounds) - 1 <= len(present_ids):
        # fewer masks than present outcomes (JSON Schemas: 3 against 5-15 on average): a mask's row
        # is one lookup per class, of whether the class's outcome is one of the mask's
        chosen = np.zeros(n_outcomes + 1, dtype=bool)      # entry 0 (NO_OUTCOME) never chosen
        for begin, end in zip(bounds, bounds[1:]):
            mine = present_ids[bits[begin:end]] - NO_OUTCOME
            chosen[mine] = True
            rows.append(pool.token_row_of_packed(np.packbits(np.take(chosen, shifted))))
            chosen[mine] = False
    else:
        rows = _rows_by_or(outcome, present_ids, masks, pool)
    return roots_here, masks.hit, [rows[i] for i in masks.which.tolist()]


def _rows_by_or(outcome: np.ndarray, present_ids: np.ndarray, masks: _Masks, pool: _Pool) -> list[bytes]:
    """Each mask's packed token row, for a lexer state with more masks than present outcomes (code
    grammars' many accept ids) whose outcome per class is `outcome`: each present outcome's classes
    packed once, a mask's row the OR of its outcomes' packed rows. (Setting each mask's classes
    from its outcomes' runs instead, scattered into a masks x classes grid, was 1.2-1.5x slower on
    python and sql x cl100k and 5x on 1,000 keywords: docs/NOTES.md.)"""
    live = np.flatnonzero(outcome != NO_OUTCOME)
    one_hot = np.zeros((len(present_ids), len(outcome)), dtype=bool)
    one_hot[np.searchsorted(present_ids, outcome[live]), live] = True
    packed = np.packbits(one_hot, axis=1)
    bits, bounds = masks.bits, masks.starts.tolist()
    return [pool.token_row_of_packed(packed[bits[begin]] if end - begin == 1 else
                                     np.bitwise_or.reduce(packed[bits[begin:end]], axis=0))
            for begin, end in zip(bounds, bounds[1:])]


@dataclass(frozen=True)
class _Masks:
    """The accept ids holding an outcome present at some lexer states (`hit`), which distinct mask
    each has (`which`), and the distinct masks as lists of present outcomes: mask j is
    bits[starts[j]:starts[j + 1]]."""

    hit: np.ndarray
    which: np.ndarray
    bits: np.ndarray
    starts: np.ndarray

    @classmethod
    def of(cls, hit: np.ndarray, by_accept: np.ndarray) -> _Masks:
        if by_accept.shape[1] == 1:        # at most 64 present outcomes (nearly always): 1-D is 5x faster
            column, which = np.unique(by_accept[:, 0], return_inverse=True)
            distinct = column[:, None]
        else:
            distinct, which = np.unique(by_accept, axis=0, return_inverse=True)
        flags = np.unpackbits(np.ascontiguousarray(distinct).astype("<u8").view(np.uint8), axis=1, bitorder="little")
        mask_of, bits = np.nonzero(flags)              # row-major: each mask's bits together, ascending
        return cls(hit, which.reshape(-1), bits, np.searchsorted(mask_of, np.arange(len(distinct) + 1)))


class _Holders:
    """Which accept ids hold each outcome (the inverse of their member lists), to compute, per lexer
    state, each accept id's subset of the outcomes present there without touching the accept ids that
    hold none of them."""

    def __init__(self, members: list[np.ndarray], n_outcomes: int) -> None:
        counts = np.asarray([len(m) for m in members], dtype=np.int64)
        flat = np.concatenate(members).astype(np.int64) if members else np.zeros(0, dtype=np.int64)
        order = np.argsort(flat, kind="stable")          # by outcome, accept ids ascending within
        self._accepts = np.repeat(np.arange(len(members), dtype=np.int64), counts)[order]
        self._offsets = np.zeros(n_outcomes + 1, dtype=np.int64)
        self._offsets[1:] = np.cumsum(np.bincount(flat, minlength=n_outcomes))

    def masks(self, present: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the accept ids holding one of the `present` outcomes (sorted), per such id the bit mask
        over `present` of those it holds: bit i of word i // 64 for present[i]). Exact: an (accept,
        outcome) pair occurs once, so adding the bits ORs them."""
        starts, ends = self._offsets[present], self._offsets[present + 1]
        counts = ends - starts
        total = int(counts.sum())
        if not total:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 1), dtype=np.uint64)
        local = np.repeat(np.arange(len(present), dtype=np.int64), counts)
        at = row_positions(starts, counts)
        hit, row = np.unique(self._accepts[at], return_inverse=True)
        out = np.zeros((len(hit), (len(present) + 63) // 64), dtype=np.uint64)
        np.add.at(out, (row, local // 64), np.left_shift(np.uint64(1), (local % 64).astype(np.uint64)))
        return hit, out
