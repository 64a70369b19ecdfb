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

import numpy as np

from glrmask_cli.parser_dwa.determinize import NO_STATE, ParserDWA
from glrmask_cli.progress import NO_PROGRESS, Progress, Ticker
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
    for state in reversed(range(dwa.n_states)):   # numbered topologically: targets have larger ids
        found = future[state]
        targets = set(dwa.edges[state].values())
        if dwa.default[state] != NO_STATE:
            targets.add(dwa.default[state])
        for target in targets:
            found |= future[target]
        future[state] = shared.setdefault(found, found)
    return future


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


def _rows_by_position(position: np.ndarray, n_positions: int, vocab_size: int, chunk: int = 256) -> np.ndarray:
    """Packed token rows, one per position: the tokens whose `position` is that one (-1: none);
    built `chunk` positions at a time (a bool matrix of chunk x vocabulary)."""
    rows = np.zeros((n_positions, words_per_row(vocab_size)), dtype="<u4")
    width = words_per_row(vocab_size) * 32
    for lo in range(0, n_positions, chunk):
        hi = min(lo + chunk, n_positions)
        tokens = np.flatnonzero((position >= lo) & (position < hi))
        one_hot = np.zeros((hi - lo, width), dtype=bool)
        one_hot[position[tokens] - lo, tokens] = True
        rows[lo:hi] = np.packbits(one_hot, axis=1, bitorder="little").view("<u4")
    return rows


def build_rows(dwa: ParserDWA, tdwa: TerminalDWA, progress: Progress = NO_PROGRESS,
               contexts: LexerContexts | None = None) -> RowPool:
    """Compute R[d][q] for every DWA state and lexer state, deduplicated; `progress` counts lexer
    states. `contexts`: lark's contextual lexer (a runtime close walks from the START of each
    context the closed lexeme hands over to)."""
    n_outcomes = len(tdwa.outcomes)
    n_lexer_states = tdwa.n_lexer_states
    row_index: dict[bytes, int] = {}
    token_rows: list[np.ndarray] = []
    vocab_size = len(tdwa.class_of_token)

    def token_row_id(allowed: np.ndarray) -> int:
        return packed_row_id(_pack_tokens(allowed))

    def packed_row_id(packed: np.ndarray) -> int:
        key = packed.tobytes()
        row = row_index.get(key)
        if row is None:
            row = row_index[key] = len(token_rows)
            token_rows.append(packed)
        return row

    token_row_id(np.zeros(vocab_size, dtype=bool))   # row 0: nothing allowed
    accept_ids: dict[int, int] = {}
    accept_of = np.fromiter((accept_ids.setdefault(o, len(accept_ids)) for o in dwa.outcomes), dtype=np.int32,
                            count=dwa.n_states)
    # each accept id's outcomes, concatenated: those of accept a are member_outcomes[starts[a]:ends[a]]
    members = [np.flatnonzero(_outcome_members(bitset, n_outcomes)[:n_outcomes]) for bitset in accept_ids]
    member_counts = np.asarray([len(m) for m in members], dtype=np.int64)
    member_ends = np.cumsum(member_counts)
    member_starts = member_ends - member_counts
    member_outcomes = np.concatenate(members) if members else np.zeros(0, dtype=np.int64)
    # The row of (set, q) depends only on which of the outcomes present at q are in the set: the OR
    # of those outcomes' token rows at q.
    by_key: dict[tuple[int, bytes], int] = {}
    q_offsets, q_accepts, q_rows = [0], [], []
    future = _future_outcomes(dwa)
    roots = sorted(set(dwa.roots))
    q_roots: list[list[int]] = []
    ticker = Ticker(progress, n_lexer_states, "lexer states")
    for q in range(n_lexer_states):
        shifted = tdwa.outcome_row(q)[tdwa.class_of_token].astype(np.int64) - NO_OUTCOME   # 0: no outcome
        present = np.bincount(shifted, minlength=n_outcomes + 1)[1:] > 0
        present_ids = np.flatnonzero(present)
        here = _bitset(present)
        q_roots.append([root for root in roots if future[root] & here])
        row_of_shifted = np.full(n_outcomes + 1, -1, dtype=np.int64)   # outcome + 1 -> its row below
        row_of_shifted[present_ids + 1] = np.arange(len(present_ids))
        by_outcome = _rows_by_position(row_of_shifted[shifted], len(present_ids), vocab_size)
        row_of_outcome = row_of_shifted[1:]
        inside = present[member_outcomes]
        seen = np.concatenate([[0], np.cumsum(inside)])
        for accept in np.flatnonzero(seen[member_ends] - seen[member_starts]).tolist():
            start, end = int(member_starts[accept]), int(member_ends[accept])
            outcomes_here = member_outcomes[start:end][inside[start:end]]
            key = (q, outcomes_here.tobytes())
            row = by_key.get(key)
            if row is None:
                words = np.bitwise_or.reduce(by_outcome[row_of_outcome[outcomes_here]], axis=0)
                row = by_key[key] = packed_row_id(words)
            q_accepts.append(accept)
            q_rows.append(row)
        q_offsets.append(len(q_rows))
        ticker.advance()
    ticker.close()
    ticker.note(f"{len(token_rows):,} rows")
    close_offsets, close_sets, close_rows = [0], [], []
    close_roots: list[list[int]] = []
    from_start: dict[int, np.ndarray] = {}
    for q in range(n_lexer_states):
        closes = tdwa.close_row(q)
        for term_set in np.unique(closes[closes != 0]).tolist():
            closing = closes == term_set
            close_sets.append(term_set)
            close_rows.append(token_row_id(closing[tdwa.class_of_token]))
            after = np.zeros(n_outcomes + 1, dtype=bool)
            hand_over = (START,) if contexts is None else contexts.hand_over(q, term_set)
            for start in hand_over:
                if start not in from_start:
                    from_start[start] = tdwa.outcome_row(start)
                after[from_start[start][closing]] = True     # NO_OUTCOME lands in the last entry
            accepted = _bitset(after[:n_outcomes])
            close_roots.append([root for root in roots if future[root] & accepted])
        close_offsets.append(len(close_rows))
    rows = np.stack(token_rows) if token_rows else np.zeros((1, words_per_row(vocab_size)), dtype="<u4")
    i32 = lambda values: np.asarray(values, dtype=np.int32)  # noqa: E731
    q_root_offsets, q_root_items = _csr(q_roots)
    close_root_offsets, close_root_items = _csr(close_roots)
    return RowPool(rows=np.ascontiguousarray(rows, dtype="<u4"), accept_of=accept_of,
                   q_offsets=i32(q_offsets), q_accepts=i32(q_accepts), q_rows=i32(q_rows),
                   close_offsets=i32(close_offsets), close_sets=i32(close_sets), close_rows=i32(close_rows),
                   q_root_offsets=q_root_offsets, q_roots=q_root_items,
                   close_root_offsets=close_root_offsets, close_roots=close_root_items)
