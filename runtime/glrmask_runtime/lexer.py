"""Scanning API over `LexerTables`: feed bytes, get closed lexemes and the open lexeme's state.

Longest match without backtracking (docs/semantics.md, "Scanning"; docs/ARCHITECTURE.md, "Lexer"): a
lexeme extends while the combined DFA can go on; when the next byte cannot extend it, the lexeme
closes with `close_sets[state, byte]` (which may depend on that byte: trailing lookahead) and the
byte starts the next lexeme from START.
Lexemes are never closed eagerly: a state without outgoing transitions still waits for the next
byte (or `close`), because its accept set may depend on that byte.
"""

from __future__ import annotations

from glrmask_runtime.bounded import BoundedCache
from glrmask_runtime.errors import InputRejected
from glrmask_runtime.lazy import table_rows
from glrmask_runtime.tables import DEAD, END_OF_INPUT, START, LexerTables

_MAX_RUNS = 1 << 14   # Scanner.extend's results kept (a few MB at most), the oldest evicted past it
_MAX_RUN_BYTES = 256  # inputs longer than a token (whole documents) are walked, not kept


class Scanner:
    """Steps the combined lexer DFA over bytes. Rows are Python lists for per-byte speed, each
    built when a state is first reached (`trans_rows[state][byte]`, `close_rows[state][column]`)."""

    def __init__(self, tables: LexerTables) -> None:
        self.tables = tables
        self.trans_rows = table_rows(tables.transitions)
        self.close_rows = table_rows(tables.close_sets)
        # extend()'s results
        self._runs: BoundedCache[tuple[int, bytes, int], tuple[int, int]] = BoundedCache(_MAX_RUNS)

    def extend(self, state: int, data: bytes, pos: int) -> tuple[int, int]:
        """(state, position) after feeding `data[pos:]` from `state` while the DFA can go on: the
        end of `data`, or the first byte with no transition (where the lexeme closes or fails).

        Kept per (state, data, pos) for token-sized `data`, at most `_MAX_RUNS` of them, since
        commits repeat a token's bytes from the same state (inside strings, identifiers, numbers)."""
        end = len(data)
        key = (state, data, pos) if end <= _MAX_RUN_BYTES else None
        found = self._runs.get(key) if key is not None else None
        if found is not None:
            return found
        trans = self.trans_rows
        row = trans[state]
        while pos < end and row[data[pos]]:
            state = row[data[pos]]
            row = trans[state]
            pos += 1
        if key is None:
            return state, pos
        found = (state, pos)
        self._runs.put(key, found)
        return found

    def scan(self, state: int, data: bytes) -> tuple[list[int], int]:
        """Feed `data` from lexer `state` (START = nothing open).

        Returns (term-set ids of the lexemes closed while feeding, in order; the open lexeme's
        state at the end, START if none). Raises InputRejected (position = offset in `data`) when
        a byte can neither extend the open lexeme nor close it and start a new one.
        """
        trans, close = self.trans_rows, self.close_rows
        closed: list[int] = []
        pos, end = 0, len(data)
        while True:
            state, pos = self.extend(state, data, pos)
            if pos == end:
                return closed, state
            byte = data[pos]
            if state == START:
                raise InputRejected(pos, f"no terminal starts with byte {byte:#04x}")
            set_id = close[state][byte]
            if set_id == 0:
                raise InputRejected(pos, f"byte {byte:#04x} neither extends the lexeme nor ends "
                                         "an accepted one")
            closed.append(set_id)
            state = trans[START][byte]
            if state == DEAD:
                raise InputRejected(pos, f"no terminal starts with byte {byte:#04x}")
            pos += 1

    def close(self, state: int) -> int:
        """Term-set id accepted if the output ends in `state` (0 = not accepted).

        For START (nothing open) this returns 0 as well: callers test `state == START` first.
        """
        return self.close_rows[state][END_OF_INPUT]

    def term_set(self, set_id: int) -> tuple[int, ...]:
        return self.tables.term_set(set_id)
