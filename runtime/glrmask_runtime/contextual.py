"""Scanner + GLR parser with lark's contextual lexer: each stack top lexes with the basic lexer of
the terminals its LR state accepts (docs/semantics.md, "Contextual lexing").

Input: the contexts' lexers as one DFA (`LexerTables`) with one START per context, the START of
each LR state's context (`start_of`), per lexer state the START an ignored lexeme closing there
hands over to (`restart`), and the `LRTables`. A state is a tuple of threads (lexer state, stacks):
stack tops whose states have different contexts lex the same bytes apart, and threads that reach
the same lexer state merge their stacks (equal states lex alike: the DFA is minimized with the
contexts' STARTs and restarts as labels). After a lexeme the stacks it leaves are split by their
tops' contexts; an ignored lexeme keeps the stacks and the context. The interface is the
`Recognizer`'s, over `ContextualState`s; a lexeme's effect on the stacks is the basic one's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from glrmask_runtime.errors import InputRejected
from glrmask_runtime.glr import GSSNode
from glrmask_runtime.recognizer import ParseState, Recognizer, excerpt, quote
from glrmask_runtime.tables import DEAD, END_OF_INPUT, LexerTables, LRTables

_new = tuple.__new__   # makes a NamedTuple without its Python-level __new__ (half the time)


class ContextualState(NamedTuple):
    threads: tuple[ParseState, ...]   # (lexer state, stacks): what a mask is computed from


class ContextualRecognizer:
    def __init__(self, lexer: LexerTables, start_of: np.ndarray, restart: np.ndarray, is_start: np.ndarray,
                 lr: LRTables, terminal_names: Sequence[str] | None = None) -> None:
        # what does not depend on the context (a lexeme's shift, viability, names) is the basic one's
        self.basic = Recognizer(lexer, lr, terminal_names)
        self.lexer, self.parser, self.close_lexeme = lexer, self.basic.parser, self.basic.close_lexeme
        self.trans, self.close = self.basic.scanner.trans_rows, self.basic.scanner.close_rows
        self.start_of: list[int] = start_of.tolist()
        self.restart: list[int] = restart.tolist()
        self.is_start: list[bool] = is_start.tolist()
        self.starts: list[int] = np.flatnonzero(is_start).tolist()

    def initial(self) -> ContextualState:
        return ContextualState(self._start(self.parser.initial(), None))

    def feed(self, state: ContextualState, data: bytes) -> ContextualState:
        """The state after `data`; InputRejected (position = offset in `data`) if no completion exists."""
        threads = self._run(state.threads, data)
        viable = tuple(t for t in threads if self._thread_viable(t))
        if not viable:
            raise InputRejected(max(0, len(data) - 1), "the open lexeme cannot become a terminal that may come next",
                                self._expected_of(threads))
        return ContextualState(viable)

    def feed_admitted(self, state: ContextualState, data: bytes,
                      first_closes: Mapping[int, tuple[GSSNode, ...]] | None = None) -> ContextualState:
        """`feed` for bytes the mask already admitted (one token's): a single thread left is viable,
        since the mask allowed the token, so only several are checked (`first_closes` is the basic
        recognizer's shortcut, not used here)."""
        threads = self._run(state.threads, data)
        if len(threads) > 1:
            threads = tuple(t for t in threads if self._thread_viable(t))
        return _new(ContextualState, (threads,))

    def _run(self, threads: tuple[ParseState, ...], data: bytes) -> tuple[ParseState, ...]:
        """The threads after `data`, before the open lexeme's viability; InputRejected if none is left."""
        extend = self.basic.scanner.extend
        pos, end = 0, len(data)
        while pos < end:
            if len(threads) == 1:     # one thread: run its DFA up to the next lexeme boundary
                q, stacks = threads[0]
                start = pos
                q, pos = extend(q, data, pos)
                if pos == end:
                    return (_new(ParseState, (q, stacks)),) if pos > start else threads
                stepped = self._close(q, stacks, data[pos])
                if not stepped:
                    threads = (_new(ParseState, (q, stacks)),)
            else:
                byte = data[pos]
                stepped = []
                for thread in threads:
                    stepped += self._step(thread, byte)
            if not stepped:
                raise InputRejected(pos, self._unexpected(threads, data, pos), self._expected_after(threads, data[pos]))
            threads = (stepped[0],) if len(stepped) == 1 else _merge(stepped)
            pos += 1
        return threads

    def is_viable(self, state: ContextualState) -> bool:
        return any(thread.stacks and self._thread_viable(thread) for thread in state.threads)

    def can_finish(self, state: ContextualState) -> bool:
        for thread in state.threads:
            stacks = thread.stacks
            if not self.is_start[thread.lexer_state]:
                set_id = self.close[thread.lexer_state][END_OF_INPUT]
                if set_id == 0:
                    continue
                stacks = self.close_lexeme(stacks, set_id)
            if stacks and self.parser.accepts_end(stacks):
                return True
        return False

    def open_lexeme_complete(self, state: ContextualState) -> bool:
        """True iff some thread has no open lexeme or one that is a complete terminal."""
        return any(self.is_start[t.lexer_state] or self.close[t.lexer_state][END_OF_INPUT] for t in state.threads)

    def expected(self, state: ContextualState) -> tuple[str, ...]:
        """What may come next: after each thread's open lexeme where it can end here (as `Recognizer`'s)."""
        return self._expected_after(state.threads, END_OF_INPUT)

    def expected_on(self, stacks: tuple[GSSNode, ...]) -> tuple[str, ...]:
        """Names of the terminals (END included) some stack can take next."""
        return self.basic.expected_on(stacks)

    # -- internals -------------------------------------------------------------------------------

    def _start(self, stacks: tuple[GSSNode, ...], byte: int | None) -> tuple[ParseState, ...]:
        """Threads at the start of a lexeme on `stacks` (split by context), after `byte` if given."""
        if len(stacks) == 1:        # one stack: one context
            start = self.start_of[stacks[0].state]
            q = start if byte is None else self.trans[start][byte]
            return (_new(ParseState, (q, stacks)),) if q != DEAD else ()
        by_start: dict[int, list[GSSNode]] = {}
        for node in stacks:
            by_start.setdefault(self.start_of[node.state], []).append(node)
        out = []
        for start, nodes in by_start.items():
            q = start if byte is None else self.trans[start][byte]
            if q != DEAD:
                out.append(ParseState(q, tuple(nodes)))
        return tuple(out)

    def _step(self, thread: ParseState, byte: int) -> list[ParseState]:
        q = thread.lexer_state
        nxt = self.trans[q][byte]
        if nxt != DEAD:
            return [_new(ParseState, (nxt, thread.stacks))]
        return self._close(q, thread.stacks, byte)

    def _close(self, q: int, stacks: tuple[GSSNode, ...], byte: int) -> list[ParseState]:
        """The threads after `byte`, which cannot extend the lexeme open in `q`: it closes and the
        byte starts the next lexeme (none if nothing is open or it is not a complete terminal)."""
        if self.is_start[q]:
            return []
        set_id = self.close[q][byte]
        if set_id == 0:
            return []
        terms, keep = self.basic.lexeme_action[set_id]
        out: list[ParseState] = []
        if keep:                      # an ignored lexeme: same stacks, same context
            q2 = self.trans[self.restart[q]][byte]
            if q2 != DEAD:
                out.append(ParseState(q2, stacks))
        if terms:
            shifted = self.parser.shift(stacks, terms)
            if shifted:
                out += self._start(shifted, byte)
        return out

    def _unexpected(self, threads: Sequence[ParseState], data: bytes, pos: int) -> str:
        """What failed at `pos`. Where a lexeme would start there, the terminal another context reads
        (as lark's contextual lexer names the token its basic lexer of all terminals finds)."""
        byte = data[pos]
        if not all(self.is_start[q] or self.close[q][byte] for q, _ in threads):
            return (f"an open lexeme cannot continue with {quote(data[pos:pos + 1])} and is not a complete "
                    "terminal")
        longest, names = 0, ""
        for start in self.starts:
            q, end = start, pos
            while end < len(data) and self.trans[q][data[end]]:
                q = self.trans[q][data[end]]
                end += 1
            set_id = self.close[q][data[end] if end < len(data) else END_OF_INPUT] if end > pos else 0
            terms = self.basic.lexeme_action[set_id][0] if set_id else ()
            if terms and end - pos > longest:
                longest, names = end - pos, self.basic.names(terms)
        return f"unexpected {names} {excerpt(data, pos)}" if names else f"no terminal starts {excerpt(data, pos)}"

    def _thread_viable(self, thread: ParseState) -> bool:
        return self.is_start[thread.lexer_state] or self.basic.open_viable(thread.stacks, thread.lexer_state)

    def _expected_after(self, threads: Sequence[ParseState], column: int) -> tuple[str, ...]:
        """What may come next after each thread's open lexeme, where it closes on `column` (a byte or
        END_OF_INPUT) and can be shifted; else before it."""
        after = []
        for q, stacks in threads:
            set_id = 0 if self.is_start[q] else self.close[q][column]
            after.append(ParseState(q, (self.close_lexeme(stacks, set_id) if set_id else ()) or stacks))
        return self._expected_of(after)

    def _expected_of(self, threads: Sequence[ParseState]) -> tuple[str, ...]:
        return self.basic.expected_on(tuple(dict.fromkeys(node for t in threads for node in t.stacks)))


def _merge(threads: list[ParseState]) -> tuple[ParseState, ...]:
    """Threads at the same lexer state as one; a thread alone keeps its stacks object (a matcher
    keeps the walks on stacks that stay the same object)."""
    by_state: dict[int, list[ParseState]] = {}
    for thread in threads:
        by_state.setdefault(thread.lexer_state, []).append(thread)
    return tuple(group[0] if len(group) == 1 else
                 ParseState(q, tuple(dict.fromkeys(node for t in group for node in t.stacks)))
                 for q, group in by_state.items())
