"""Stage 8: runtime rows. R[d][q] = the tokens allowed when the DWA walk ends in state d and the
open lexeme is in lexer state q, as packed bits in the vLLM bitmask layout (bit v % 32 of 32-bit word
v // 32). Rows are deduplicated into a pool; row 0 is the empty row.

R[d][q] depends on d only through d's cumulative outcome set, so states map to *accept ids* (one per
distinct set) and the table is kept per lexer state, sparse: q -> (accept id -> row) for the
non-empty rows only (big DWAs have far fewer distinct sets than states, and most (set, q) rows are
empty). Everything is vectorized over token classes, then expanded to tokens once per distinct row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from glrmask_cli.parser_dwa.determinize import ParserDWA
from glrmask_cli.progress import NO_PROGRESS, Progress, Ticker
from glrmask_cli.terminal_dwa import NO_OUTCOME, TerminalDWA


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


def build_rows(dwa: ParserDWA, tdwa: TerminalDWA, progress: Progress = NO_PROGRESS) -> RowPool:
    """Compute R[d][q] for every DWA state and lexer state, deduplicated; `progress` counts lexer
    states."""
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
    ticker = Ticker(progress, n_lexer_states, "lexer states")
    for q in range(n_lexer_states):
        shifted = tdwa.outcome_row(q)[tdwa.class_of_token].astype(np.int64) - NO_OUTCOME   # 0: no outcome
        present = np.bincount(shifted, minlength=n_outcomes + 1)[1:] > 0
        present_ids = np.flatnonzero(present)
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
    for q in range(n_lexer_states):
        closes = tdwa.close_row(q)
        for term_set in np.unique(closes[closes != 0]).tolist():
            close_sets.append(term_set)
            close_rows.append(token_row_id((closes == term_set)[tdwa.class_of_token]))
        close_offsets.append(len(close_rows))
    rows = np.stack(token_rows) if token_rows else np.zeros((1, words_per_row(vocab_size)), dtype="<u4")
    i32 = lambda values: np.asarray(values, dtype=np.int32)  # noqa: E731
    return RowPool(rows=np.ascontiguousarray(rows, dtype="<u4"), accept_of=accept_of,
                   q_offsets=i32(q_offsets), q_accepts=i32(q_accepts), q_rows=i32(q_rows),
                   close_offsets=i32(close_offsets), close_sets=i32(close_sets), close_rows=i32(close_rows))
