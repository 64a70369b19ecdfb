"""All terminals -> one minimized combined byte DFA (`LexerTables`) plus its warnings.

Each terminal is compiled alone (syntax -> nfa -> dfa, trimmed and minimized), then the union is
determinized over global byte classes (a state = the tuple of live per-terminal states) and
Moore-minimized. Accept sets apply Lark's tie-break: highest priority, then literals over regexps;
remaining ties stay as a set. Terminal id = index in `terminals`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from glrmask_cli.errors import LimitExceeded, UnsupportedFeature
from glrmask_cli.grammar import TerminalSpec
from glrmask_cli.lexer.dfa import DEAD, START, ByteDFA, determinize, minimize, moore_partition, renumber
from glrmask_cli.lexer.nfa import build_nfa
from glrmask_cli.lexer.syntax import SyntaxUnsupported, has_lazy, parse_pattern
from glrmask_cli.limits import DEFAULTS, BuildLimits
from glrmask_runtime.tables import LexerTables


@dataclass(frozen=True)
class LexerBuild:
    tables: LexerTables
    warnings: tuple[str, ...]   # tied terminals; boundary warnings need the parser (`boundary_warnings`)


def build_terminal_dfa(spec: TerminalSpec, grammar_path: str = "<grammar>",
                       limits: BuildLimits = DEFAULTS) -> ByteDFA:
    """One terminal's trimmed, minimized DFA; UnsupportedFeature and LimitExceeded name the terminal."""
    try:
        ir = parse_pattern(spec.pattern, spec.flags)
        nfa = build_nfa(ir, limits.max_pattern_nfa_states)
        dfa = minimize(determinize(nfa, ordered=has_lazy(ir), max_states=limits.max_pattern_dfa_states))
    except SyntaxUnsupported as e:
        raise UnsupportedFeature(grammar_path, str(e), terminal=spec.display,
                                 hint="rewrite the terminal without this construct") from e
    except LimitExceeded as e:
        raise LimitExceeded(e.limit, e.value, f"{grammar_path}: terminal {spec.display}: {e.stage}",
                            e.hint) from e
    if dfa.close[START].any():
        raise UnsupportedFeature(grammar_path, "terminal matches the empty string", terminal=spec.display,
                                 hint="every lexeme must consume at least one byte")
    if not dfa.close.any():
        raise UnsupportedFeature(grammar_path, "terminal matches no text", terminal=spec.display)
    return dfa


def build_lexer(terminals: Sequence[TerminalSpec], ignore: Sequence[str],
                grammar_path: str = "<grammar>", limits: BuildLimits = DEFAULTS) -> LexerBuild:
    """Compile every terminal and combine them into `LexerTables` (docs/semantics.md, "Lexing").
    Uses limits max_pattern_nfa_states, max_pattern_dfa_states and max_lexer_states."""
    dfas = [build_terminal_dfa(t, grammar_path, limits) for t in terminals]
    union_trans, union_close, owner, starts = _union(dfas)
    combo = _Combined(terminals, union_trans, union_close, owner, limits.max_lexer_states)
    trans, states = combo.determinize(starts)
    close_ids, viable_ids = combo.accept_tables(states)
    labels = np.concatenate([close_ids, viable_ids[:, None]], axis=1)
    block = moore_partition(trans, np.unique(labels, axis=0, return_inverse=True)[1].ravel())
    new_trans, ids = renumber(trans, block, START)
    n = new_trans.shape[0]
    keep = ids >= 0
    close_sets = np.zeros((n, 257), np.int32)
    viable = np.zeros(n, np.int32)
    close_sets[ids[keep]] = close_ids[keep]
    viable[ids[keep]] = viable_ids[keep]
    close_sets, viable, offsets, items = combo.renumber_sets(close_sets, viable)
    names = {t.name: i for i, t in enumerate(terminals)}
    ignored = np.array(sorted(names[n_] for n_ in ignore if n_ in names), np.int32)
    tables = LexerTables(new_trans, close_sets, viable, offsets, items, ignored)
    return LexerBuild(tables, tuple(tie_warnings(tables, terminals)))


def _union(dfas: list[ByteDFA]):
    """Stack per-terminal DFAs into one id space; DEAD -> -1, so each row is one terminal's step."""
    sizes = [d.trans.shape[0] for d in dfas]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    trans = np.concatenate([np.where(d.trans == DEAD, -1, d.trans + off)
                            for d, off in zip(dfas, offsets[:-1])]).astype(np.int64)
    close = np.concatenate([d.close for d in dfas])
    owner = np.repeat(np.arange(len(dfas)), sizes)
    starts = tuple(int(off) + START for off in offsets[:-1])
    return trans, close, owner, starts


class _Combined:
    def __init__(self, terminals, union_trans, union_close, owner, max_states: int):
        self.terminals = terminals
        self.max_states = max_states
        self.owner = owner
        self.union_close = union_close
        cols, self.class_of = np.unique(np.concatenate([union_trans, union_close[:, :256]]), axis=1,
                                        return_inverse=True)
        self.class_of = self.class_of.ravel()
        self.n_classes = cols.shape[1]
        reps = np.zeros(self.n_classes, np.int64)
        reps[self.class_of[::-1]] = np.arange(256)[::-1]
        self.class_trans = union_trans[:, reps]
        self.sets: dict[tuple[int, ...], int] = {(): 0}

    def determinize(self, starts: tuple[int, ...]):
        """Subset construction over the union (deterministic parts: a state = tuple of ids)."""
        keys = {(): DEAD, starts: START}
        states: list[tuple[int, ...]] = [(), starts]
        rows = [np.zeros(self.n_classes, np.int64)]
        i = START
        while i < len(states):
            step = self.class_trans[list(states[i])]
            row = np.zeros(self.n_classes, np.int64)
            for k in range(self.n_classes):
                col = step[:, k]
                key = tuple(col[col >= 0].tolist())
                sid = keys.get(key)
                if sid is None:
                    sid = keys[key] = len(states)
                    states.append(key)
                    if len(states) > self.max_states:
                        raise LimitExceeded("max_lexer_states", self.max_states, "lexer (combined DFA)",
                                            "simplify or split the terminals")
                row[k] = sid
            rows.append(row)
            i += 1
        return np.array(rows)[:, self.class_of], states

    def set_id(self, terms) -> int:
        key = tuple(sorted(terms))
        if key not in self.sets:
            self.sets[key] = len(self.sets)
        return self.sets[key]

    def tie_break(self, terms: list[int]) -> list[int]:
        if not terms:
            return terms
        best = max(self.terminals[t].priority for t in terms)
        top = [t for t in terms if self.terminals[t].priority == best]
        literals = [t for t in top if self.terminals[t].is_literal]
        return literals or top

    def accept_tables(self, states):
        close_ids = np.zeros((len(states), 257), np.int32)
        viable_ids = np.zeros(len(states), np.int32)
        for sid, ids in enumerate(states):
            if not ids:
                continue
            ids_arr = np.array(ids)
            viable_ids[sid] = self.set_id(self.owner[ids_arr].tolist())
            sub = self.union_close[ids_arr]
            patterns, inverse = np.unique(sub, axis=1, return_inverse=True)
            pattern_ids = [self.set_id(self.tie_break(self.owner[ids_arr[patterns[:, j]]].tolist()))
                           for j in range(patterns.shape[1])]
            close_ids[sid] = np.array(pattern_ids, np.int32)[inverse.ravel()]
        return close_ids, viable_ids

    def renumber_sets(self, close_sets, viable):
        """Renumber term sets in sorted order of their contents (only those used), set 0 = empty."""
        used = sorted(set(np.unique(close_sets).tolist()) | set(np.unique(viable).tolist()) | {0})
        by_id = {v: k for k, v in self.sets.items()}
        ordered = sorted(used, key=lambda i: (len(by_id[i]), by_id[i]))
        remap = np.zeros(len(self.sets), np.int32)
        remap[ordered] = np.arange(len(ordered))
        offsets = np.zeros(len(ordered) + 1, np.int32)
        offsets[1:] = np.cumsum([len(by_id[i]) for i in ordered])
        items = np.array([t for i in ordered for t in by_id[i]], np.int32)
        return remap[close_sets], remap[viable], offsets, items


def tie_warnings(tables: LexerTables, terminals: Sequence[TerminalSpec]) -> list[str]:
    """Tied terminals: texts that several terminals match equally (the parser must choose)."""
    names = [t.display for t in terminals]
    ties = sorted({tables.term_set(int(s)) for s in np.unique(tables.close_sets) if len(tables.term_set(int(s))) > 1})
    return ["terminals " + ", ".join(names[t] for t in tie) + " match the same text "
            "(kept as alternatives; Lark's contextual lexer would pick by parser state)" for tie in ties]


def boundary_warnings(tables: LexerTables, terminals: Sequence[TerminalSpec],
                      followers: Callable[[int], set[int]]) -> list[str]:
    """Lexeme boundaries one byte of lookahead cannot decide, where the grammar lets them occur.

    After a complete lexeme of terminal A, a byte that continues some longer lexeme is always read
    as that continuation (longest match, no backtracking). If the continuation can die before it is
    complete, and the byte can also start a terminal B that may follow A (`followers(A)`, or an
    ignored terminal), input with B right after A is rejected there: one warning per (A, B), with
    the shortest example text of A.
    """
    names = [t.display for t in terminals]
    trans, close = tables.transitions, tables.close_sets
    ignored = set(tables.ignored.tolist())
    # Only character boundaries matter: enter by an ASCII byte, fail on a byte that starts a char.
    starts_char = np.zeros(256, bool)
    starts_char[:0x80] = starts_char[0xC2:0xF5] = True
    dead_unaccepted = ((trans == DEAD) & (close[:, :256] == 0))[:, starts_char].any(axis=1)
    dead_unaccepted[DEAD] = False
    example = _shortest_texts(trans)
    found: dict[tuple[int, int], tuple[bytes, int]] = {}
    for s in np.nonzero((close != 0).any(axis=1))[0].tolist():
        ascii_next = trans[s][:0x80]
        for c in np.nonzero(dead_unaccepted[ascii_next] & (trans[START][:0x80] != DEAD))[0].tolist():
            starting = set(tables.term_set(int(tables.viable_sets[trans[START][c]])))
            done = {t for byte in range(257) for t in tables.term_set(int(close[s, byte]))}
            for a in sorted(done):
                for b in sorted(starting & (followers(a) | ignored)):
                    candidate = (example.get(s, b""), c)
                    if (a, b) not in found or len(candidate[0]) < len(found[a, b][0]):
                        found[a, b] = candidate
    return [f"terminal {names[a]} followed by {names[b]}: one byte of lookahead cannot decide the lexeme "
            f"boundary (after {names[a]} {_show(text)}, {_show(bytes([c]))} is read as the continuation of a "
            f"longer lexeme, never as the start of {names[b]})"
            for (a, b), (text, c) in sorted(found.items())]


def _shortest_texts(trans: np.ndarray) -> dict[int, bytes]:
    """A shortest byte string from START to each state, preferring printable ASCII (breadth first)."""
    order = list(range(0x20, 0x7F)) + [b for b in range(256) if not 0x20 <= b < 0x7F]
    texts = {START: b""}
    frontier = [START]
    while frontier:
        following = []
        for s in frontier:
            for byte in order:
                t = int(trans[s, byte])
                if t != DEAD and t not in texts:
                    texts[t] = texts[s] + bytes([byte])
                    following.append(t)
        frontier = following
    return texts


def _show(text: bytes) -> str:
    return repr(text.decode("utf-8", "backslashreplace"))
