"""Scanner + GLR parser with lark's contextual lexer: each stack top lexes with the basic lexer of
the terminals its LR state accepts (docs/semantics.md, "Contextual lexing").

Input: one `LexerTables` per context, the context of each LR state, the `LRTables`. A state is a
tuple of threads (context, lexer state, stacks): stack tops whose states have different contexts
lex the same bytes apart, and threads that reach the same (context, lexer state) merge their stacks.
After a lexeme the stacks it leaves are split by their tops' contexts; an ignored lexeme keeps the
stacks and the context. The same interface as `Recognizer` for what `glrmask check` uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from glrmask_runtime.errors import InputRejected
from glrmask_runtime.glr import GLRParser, GSSNode
from glrmask_runtime.tables import DEAD, END_OF_INPUT, START, LexerTables, LRTables


@dataclass(frozen=True)
class Thread:
    context: int
    lexer_state: int
    stacks: tuple[GSSNode, ...]


@dataclass(frozen=True)
class ContextualState:
    threads: tuple[Thread, ...]


class _Context:
    def __init__(self, lexer: LexerTables) -> None:
        self.trans: list[list[int]] = lexer.transitions.tolist()
        self.close: list[list[int]] = lexer.close_sets.tolist()
        self.viable: list[int] = lexer.viable_sets.tolist()
        ignored = frozenset(int(t) for t in lexer.ignored)
        self.sets = [(tuple(t for t in lexer.term_set(k) if t not in ignored),
                      any(t in ignored for t in lexer.term_set(k))) for k in range(lexer.n_term_sets)]


class ContextualRecognizer:
    def __init__(self, lexers: Sequence[LexerTables], context_of: Sequence[int], lr: LRTables,
                 terminal_names: Sequence[str] | None = None) -> None:
        self.contexts = [_Context(lexer) for lexer in lexers]
        self.context_of = list(context_of)
        self.parser = GLRParser(lr)
        self.end = lr.end_terminal
        self.terminal_names = tuple(terminal_names) if terminal_names is not None else None

    def initial(self) -> ContextualState:
        return ContextualState(self._start(self.parser.initial(), None))

    def feed(self, state: ContextualState, data: bytes) -> ContextualState:
        """The state after `data`; InputRejected (position = offset in `data`) if no completion exists."""
        threads = state.threads
        for pos, byte in enumerate(data):
            stepped: list[Thread] = []
            for thread in threads:
                stepped += self._step(thread, byte)
            if not stepped:
                raise InputRejected(pos, f"unexpected {_show(data, pos)}", self._expected_of(threads))
            threads = _merge(stepped)
        viable = tuple(t for t in threads if self._open_viable(t))
        if not viable:
            raise InputRejected(max(0, len(data) - 1), "the open lexeme cannot become a terminal that may come next",
                                self._expected_of(threads))
        return ContextualState(viable)

    def can_finish(self, state: ContextualState) -> bool:
        for thread in state.threads:
            stacks = thread.stacks
            if thread.lexer_state != START:
                set_id = self.contexts[thread.context].close[thread.lexer_state][END_OF_INPUT]
                if set_id == 0:
                    continue
                terms, keep = self.contexts[thread.context].sets[set_id]
                shifted = self.parser.shift(stacks, terms) if terms else ()
                stacks = tuple(dict.fromkeys((stacks if keep else ()) + shifted))
            if stacks and self.parser.accepts_end(stacks):
                return True
        return False

    def open_lexeme_complete(self, state: ContextualState) -> bool:
        """True iff some thread has no open lexeme or one that is a complete terminal."""
        return any(t.lexer_state == START or self.contexts[t.context].close[t.lexer_state][END_OF_INPUT]
                   for t in state.threads)

    def expected(self, state: ContextualState) -> tuple[str, ...]:
        return self._expected_of(state.threads)

    # -- internals -------------------------------------------------------------------------------

    def _start(self, stacks: tuple[GSSNode, ...], byte: int | None) -> tuple[Thread, ...]:
        """Threads at the start of a lexeme on `stacks` (split by context), after `byte` if given."""
        by_context: dict[int, list[GSSNode]] = {}
        for node in stacks:
            by_context.setdefault(self.context_of[node.state], []).append(node)
        out = []
        for context, nodes in by_context.items():
            q = START if byte is None else self.contexts[context].trans[START][byte]
            if q != DEAD:
                out.append(Thread(context, q, tuple(nodes)))
        return tuple(out)

    def _step(self, thread: Thread, byte: int) -> list[Thread]:
        ctx = self.contexts[thread.context]
        q = thread.lexer_state
        nxt = ctx.trans[q][byte]
        if nxt != DEAD:
            return [Thread(thread.context, nxt, thread.stacks)]
        if q == START:
            return []
        set_id = ctx.close[q][byte]
        if set_id == 0:
            return []
        terms, keep = ctx.sets[set_id]
        out: list[Thread] = []
        if keep:                      # an ignored lexeme: same stacks, same context
            q2 = ctx.trans[START][byte]
            if q2 != DEAD:
                out.append(Thread(thread.context, q2, thread.stacks))
        if terms:
            shifted = self.parser.shift(thread.stacks, terms)
            if shifted:
                out += self._start(shifted, byte)
        return out

    def _open_viable(self, thread: Thread) -> bool:
        if thread.lexer_state == START:
            return True
        ctx = self.contexts[thread.context]
        terms, keep = ctx.sets[ctx.viable[thread.lexer_state]]
        return keep or any(self.parser.can_shift(thread.stacks, t) for t in terms)

    def _expected_of(self, threads: Sequence[Thread]) -> tuple[str, ...]:
        stacks = tuple(dict.fromkeys(node for t in threads for node in t.stacks))
        if not stacks:
            return ()
        return tuple(self.terminal_names[t] if self.terminal_names and t != self.end else
                     ("end of input" if t == self.end else f"terminal {t}")
                     for t in self.parser.expected_terminals(stacks))


def _merge(threads: list[Thread]) -> tuple[Thread, ...]:
    merged: dict[tuple[int, int], dict[GSSNode, None]] = {}
    for thread in threads:
        merged.setdefault((thread.context, thread.lexer_state), {}).update(dict.fromkeys(thread.stacks))
    return tuple(Thread(c, q, tuple(nodes)) for (c, q), nodes in merged.items())


def _show(data: bytes, pos: int) -> str:
    return repr(data[pos:pos + 12].decode("utf-8", "backslashreplace"))
