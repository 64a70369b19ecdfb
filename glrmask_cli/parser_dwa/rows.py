"""Stage 7: runtime rows. R[d][q] = the tokens allowed when the DWA walk ends in state d and the
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
from glrmask_cli.terminal_dwa import TerminalDWA


@dataclass(frozen=True, eq=False)
class RowPool:
    rows: np.ndarray       # uint32 (n_rows, ceil(vocab_size / 32)); row 0 is all zeros
    accept_of: np.ndarray  # int32 (n_dwa_states,): id of the state's cumulative outcome set
    q_offsets: np.ndarray  # int32 (n_lexer_states + 1,): lexer state q's entries are [q_offsets[q], q_offsets[q+1])
    q_accepts: np.ndarray  # int32: accept ids with a non-empty row at q, sorted
    q_rows: np.ndarray     # int32: their rows
    close_offsets: np.ndarray  # int32 (n_lexer_states + 1,): q's runtime closes are [close_offsets[q], ...[q+1])
    close_sets: np.ndarray     # int32: term set the open lexeme closes as (terminal_dwa class_close)
    close_rows: np.ndarray     # int32: the tokens that close it so (their first byte cannot extend it)


def words_per_row(vocab_size: int) -> int:
    return (vocab_size + 31) // 32


def _outcome_members(bitset: int, n_outcomes: int) -> np.ndarray:
    """Bitset int -> bool membership of length n_outcomes + 1 (the last entry, for NO_OUTCOME, False)."""
    raw = np.frombuffer(bitset.to_bytes((n_outcomes + 7) // 8 or 1, "little"), dtype=np.uint8)
    members = np.zeros(n_outcomes + 1, dtype=bool)
    members[:n_outcomes] = np.unpackbits(raw, bitorder="little")[:n_outcomes].astype(bool)
    return members


def _bitset(outcome_ids: np.ndarray) -> int:
    """Outcome ids (NO_OUTCOME ignored) -> bitset int."""
    ids = outcome_ids[outcome_ids >= 0]
    if not len(ids):
        return 0
    bits = np.zeros(int(ids.max()) + 1, dtype=bool)
    bits[ids] = True
    return int.from_bytes(np.packbits(bits, bitorder="little").tobytes(), "little")


def _pack_tokens(allowed: np.ndarray) -> np.ndarray:
    """Bool per token -> uint32 words, bit v % 32 of word v // 32."""
    n_words = words_per_row(len(allowed))
    packed = np.zeros(n_words * 4, dtype=np.uint8)
    bits = np.packbits(allowed, bitorder="little")
    packed[:len(bits)] = bits
    return packed.view("<u4")


def build_rows(dwa: ParserDWA, tdwa: TerminalDWA, progress: Progress = NO_PROGRESS) -> RowPool:
    """Compute R[d][q] for every DWA state and lexer state, deduplicated; `progress` counts lexer
    states."""
    n_outcomes = len(tdwa.outcomes)
    class_outcome = tdwa.class_outcome          # (n_lexer_states, n_classes + 2), -1 = none
    n_lexer_states = class_outcome.shape[0]
    row_index: dict[bytes, int] = {}
    token_rows: list[np.ndarray] = []
    vocab_size = len(tdwa.class_of_token)

    def token_row_id(class_row: np.ndarray) -> int:
        allowed = class_row[tdwa.class_of_token]
        packed = _pack_tokens(allowed)
        key = packed.tobytes()
        row = row_index.get(key)
        if row is None:
            row = row_index[key] = len(token_rows)
            token_rows.append(packed)
        return row

    token_row_id(np.zeros(class_outcome.shape[1], dtype=bool))   # row 0: nothing allowed
    accept_ids: dict[int, int] = {}
    accept_of = np.fromiter((accept_ids.setdefault(o, len(accept_ids)) for o in dwa.outcomes), dtype=np.int32,
                            count=dwa.n_states)
    # The row of (set, q) depends only on which of the outcomes present at q are in the set.
    by_key: dict[tuple[int, int], int] = {}
    q_offsets, q_accepts, q_rows = [0], [], []
    ticker = Ticker(progress, n_lexer_states, "lexer states")
    for q in range(n_lexer_states):
        present = _bitset(np.unique(class_outcome[q]))
        for bitset, accept in accept_ids.items():
            key = (q, bitset & present)
            if not key[1]:
                continue
            row = by_key.get(key)
            if row is None:
                row = by_key[key] = token_row_id(_outcome_members(key[1], n_outcomes)[class_outcome[q]])
            q_accepts.append(accept)
            q_rows.append(row)
        q_offsets.append(len(q_rows))
        ticker.advance()
    ticker.close()
    ticker.note(f"{len(token_rows):,} rows")
    close_offsets, close_sets, close_rows = [0], [], []
    for q in range(n_lexer_states):
        closes = tdwa.class_close[q]
        for term_set in np.unique(closes[closes != 0]).tolist():
            close_sets.append(term_set)
            close_rows.append(token_row_id(closes == term_set))
        close_offsets.append(len(close_rows))
    rows = np.stack(token_rows) if token_rows else np.zeros((1, words_per_row(vocab_size)), dtype="<u4")
    i32 = lambda values: np.asarray(values, dtype=np.int32)  # noqa: E731
    return RowPool(rows=np.ascontiguousarray(rows, dtype="<u4"), accept_of=accept_of,
                   q_offsets=i32(q_offsets), q_accepts=i32(q_accepts), q_rows=i32(q_rows),
                   close_offsets=i32(close_offsets), close_sets=i32(close_sets), close_rows=i32(close_rows))
