"""Scanner + GLR parser together: the exact semantics the masks reproduce (docs/semantics.md: scanning,
parsing, which tokens are allowed; docs/ARCHITECTURE.md, "Parser").

Input: `LexerTables` and `LRTables`. `feed` scans bytes, shifts every closed lexeme's terminals (an
%ignore'd terminal in the set keeps the current stacks as an alternative), then requires that the
open lexeme can still become a terminal some stack can shift. A token is allowed iff `feed` of its
bytes succeeds; EOS iff `can_finish`. States are immutable; a failed call changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, Protocol

from glrmask_runtime.errors import InputRejected
from glrmask_runtime.glr import GLRParser, GSSNode
from glrmask_runtime.lazy import OnFirstUse
from glrmask_runtime.lexer import Scanner
from glrmask_runtime.tables import DEAD, START, LexerTables, LRTables


class ParseState(NamedTuple):
    """The open lexeme's lexer state and the GLR stacks (immutable; a tuple, the cheapest to make)."""

    lexer_state: int
    stacks: tuple[GSSNode, ...]


class AnyRecognizer(Protocol):
    """What matchers use of a recognizer: `Recognizer` (states are `ParseState`s) or, for lark's
    contextual lexer, `ContextualRecognizer` (`ContextualState`s); states are opaque here."""

    parser: GLRParser

    def initial(self) -> Any: ...
    def feed(self, state: Any, data: bytes) -> Any: ...
    def feed_admitted(self, state: Any, data: bytes,
                      first_closes: Mapping[int, tuple[GSSNode, ...]] | None = None) -> Any: ...
    def can_finish(self, state: Any) -> bool: ...
    def expected(self, state: Any) -> tuple[str, ...]: ...
    def expected_on(self, stacks: tuple[GSSNode, ...]) -> tuple[str, ...]: ...
    def close_lexeme(self, stacks: tuple[GSSNode, ...], set_id: int) -> tuple[GSSNode, ...]: ...


class Recognizer:
    """Accepts or rejects byte input incrementally.

    Example:
        r = Recognizer(lexer_tables, lr_tables)
        state = r.feed(r.initial(), b'{"a": [1, 2')   # raises InputRejected if no completion exists
        r.can_finish(state)                            # False: the document is not complete yet
    """

    def __init__(self, lexer: LexerTables, lr: LRTables, terminal_names: Sequence[str] | None = None) -> None:
        self.lexer = lexer
        self.scanner = Scanner(lexer)
        self.parser = GLRParser(lr)
        self.end = lr.end_terminal
        self.terminal_names = tuple(terminal_names) if terminal_names is not None else None
        ignored = frozenset(int(t) for t in lexer.ignored)

        def action(set_id: int) -> tuple[tuple[int, ...], bool]:
            terms = lexer.term_set(set_id)
            return tuple(t for t in terms if t not in ignored), any(t in ignored for t in terms)
        # term-set id -> (terminals the parser shifts, whether an ignored terminal keeps the stacks)
        self.lexeme_action = OnFirstUse(action)
        self._viable = lexer.viable_sets.tolist()

    def initial(self) -> ParseState:
        return ParseState(START, self.parser.initial())

    def feed(self, state: ParseState, data: bytes) -> ParseState:
        """The state after `data`. Raises InputRejected (position = offset in `data`) if no completion exists."""
        try:
            closed, open_state = self.scanner.scan(state.lexer_state, data)
        except InputRejected as e:
            raise self._scan_error(state, data, e) from None
        stacks = state.stacks
        for k, set_id in enumerate(closed):
            stacks = self.close_lexeme(stacks, set_id)
            if not stacks:
                start, _ = _lexeme_span(self.lexer, state.lexer_state, data, k)
                terms = self.lexeme_action[set_id][0]
                raise InputRejected(start, f"unexpected {self.names(terms)} {excerpt(data, start)}",
                                    self.expected_on(_previous(self, state, data, k)))
        if open_state != START and not self.open_viable(stacks, open_state):
            start, _ = _lexeme_span(self.lexer, state.lexer_state, data, len(closed))
            viable = self.lexeme_action[self._viable[open_state]][0]
            what = f"unexpected {self.names(viable)}" if len(viable) <= 3 else "unexpected text"
            raise InputRejected(start, f"{what} {excerpt(data, start)}", self.expected_on(stacks))
        return ParseState(open_state, stacks)

    def feed_admitted(self, state: ParseState, data: bytes,
                      first_closes: Mapping[int, tuple[GSSNode, ...]] | None = None) -> ParseState:
        """`feed` for bytes the mask already admitted (one token's): the same state, without the
        checks the mask has made (the open lexeme's viability). A closed lexeme no stack can shift
        still raises InputRejected: the mask and the parser disagree, which is a bug.
        `first_closes`: `close_lexeme(state.stacks, set_id)` by set_id where already known (the
        mask computed them), used for the first closed lexeme."""
        closed, open_state = self.scanner.scan(state.lexer_state, data)
        stacks = state.stacks
        for k, set_id in enumerate(closed):
            known = first_closes.get(set_id) if k == 0 and first_closes else None
            stacks = known if known is not None else self.close_lexeme(stacks, set_id)
            if not stacks:
                return self.feed(state, data)   # raises the error `feed` gives for these bytes
        return ParseState(open_state, stacks)

    def is_viable(self, state: ParseState) -> bool:
        """True iff some stack survives and the open lexeme can still become a shiftable terminal."""
        if not state.stacks:
            return False
        return state.lexer_state == START or self.open_viable(state.stacks, state.lexer_state)

    def can_finish(self, state: ParseState) -> bool:
        """True iff the input may end here: the open lexeme closes, is shifted, and END is accepted."""
        stacks = state.stacks
        if state.lexer_state != START:
            set_id = self.scanner.close(state.lexer_state)
            if set_id == 0:
                return False
            stacks = self.close_lexeme(stacks, set_id)
        return bool(stacks) and self.parser.accepts_end(stacks)

    def open_lexeme_complete(self, state: ParseState) -> bool:
        """True iff nothing is open or the open lexeme is a complete terminal."""
        return state.lexer_state == START or self.scanner.close(state.lexer_state) != 0

    def expected(self, state: ParseState) -> tuple[str, ...]:
        """Names of what may come next (after the open lexeme, if it can end here); for error messages."""
        stacks = state.stacks
        if state.lexer_state != START:
            set_id = self.scanner.close(state.lexer_state)
            closed = self.close_lexeme(stacks, set_id) if set_id else ()
            stacks = closed or stacks
        return self.expected_on(stacks)

    # ---- internals ------------------------------------------------------------------------------

    def _scan_error(self, state: ParseState, data: bytes, error: InputRejected) -> InputRejected:
        """The scanner's error, unless the parser fails earlier; with what was expected there."""
        pos = error.position
        before = self.feed(state, data[:pos])   # raises the parser's (earlier) error, if any
        expected = self.expected_on(before.stacks)
        if before.lexer_state != START and self.lexer.close_sets[before.lexer_state, data[pos]] == 0:
            start, _ = _lexeme_span(self.lexer, state.lexer_state, data[:pos], 1 << 62)
            what = (f"the lexeme {quote(data[start:pos])} cannot continue with {quote(data[pos:pos + 1])}"
                    " and is not a complete terminal")
            return InputRejected(pos, what, expected)
        return InputRejected(pos, f"no terminal starts {excerpt(data, pos)}", expected)

    def close_lexeme(self, stacks: tuple[GSSNode, ...], set_id: int) -> tuple[GSSNode, ...]:
        """The stacks after a lexeme of term set `set_id` (ignored terminals keep the stacks as they are)."""
        terms, keep = self.lexeme_action[set_id]
        shifted = self.parser.shift(stacks, terms) if terms else ()
        if not keep:
            return shifted
        if not shifted:
            return stacks
        return tuple(dict.fromkeys(stacks + shifted))

    def open_viable(self, stacks: tuple[GSSNode, ...], lexer_state: int) -> bool:
        """True iff the lexeme open in `lexer_state` can become a terminal some stack can shift."""
        terms, keep = self.lexeme_action[self._viable[lexer_state]]
        if keep:
            return True
        return any(self.parser.can_shift(stacks, t) for t in terms)

    def names(self, terms: Sequence[int]) -> str:
        names = [self._name(t) for t in terms]
        return names[0] if len(names) == 1 else "one of " + ", ".join(names)

    def _name(self, t: int) -> str:
        if t == self.end:
            return "end of input"
        return self.terminal_names[t] if self.terminal_names is not None else f"terminal {t}"

    def expected_on(self, stacks: tuple[GSSNode, ...]) -> tuple[str, ...]:
        """Names of the terminals (END included) some stack can take next."""
        if not stacks:
            return ()
        return tuple(self._name(t) for t in self.parser.expected_terminals(stacks))


def _previous(r: Recognizer, state: ParseState, data: bytes, k: int) -> tuple[GSSNode, ...]:
    """The stacks before the k-th closed lexeme of `data` (recomputed on the error path only)."""
    closed, _ = r.scanner.scan(state.lexer_state, data)
    stacks = state.stacks
    for set_id in closed[:k]:
        stacks = r.close_lexeme(stacks, set_id)
    return stacks


def _lexeme_span(lexer: LexerTables, lexer_state: int, data: bytes, k: int) -> tuple[int, int]:
    """Byte offsets in `data` of the k-th lexeme closed (or, k = count, the open one) when scanning."""
    trans = lexer.transitions
    start, state, index = 0, lexer_state, 0
    for pos, byte in enumerate(data):
        nxt = int(trans[state, byte])
        if nxt != DEAD:
            state = nxt
            continue
        if index == k:
            return start, pos
        index += 1
        start, state = pos, int(trans[START, byte])
    return start, len(data)


def excerpt(data: bytes, pos: int, width: int = 24) -> str:
    """`at "text..."`: a short quoted excerpt of `data` from byte `pos`."""
    if pos >= len(data):
        return "at end of input"
    more = "..." if pos + width < len(data) else ""
    return f"at {quote(data[pos:pos + width])}{more}"


def quote(chunk: bytes) -> str:
    """Bytes as a double-quoted string: printable text as is, the rest escaped (invalid UTF-8 as \\xNN)."""
    out = []
    for c in chunk.decode("utf-8", errors="surrogateescape"):
        if 0xDC80 <= ord(c) <= 0xDCFF:
            out.append(f"\\x{ord(c) - 0xDC00:02x}")
        elif c in '"\\':
            out.append("\\" + c)
        elif c.isprintable():
            out.append(c)
        else:
            out.append(repr(c)[1:-1])
    return '"' + "".join(out) + '"'
