"""All terminals -> one minimized combined byte DFA (`LexerTables`) plus its warnings.

Each terminal is compiled alone (syntax -> nfa -> dfa, trimmed and minimized), then the union is
determinized over global byte classes (a state = the tuple of live per-terminal states) and
Moore-minimized, by lark's basic-lexer rules (`lark_rules.py`): a terminal that matches the lexeme
so far cuts the terminals after it in lark's order, a lexeme closes as the first terminal in that
order that matches it, retyped by the unless lists. Terminal id = index in `terminals`.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Collection, Iterable, Sequence

import numpy as np

from glrmask_cli.errors import LimitExceeded, UnsupportedFeature
from glrmask_cli.grammar import TerminalSpec
from glrmask_cli.lexer.dfa import (
    DEAD,
    START,
    ByteDFA,
    determinize,
    hash_weights,
    literal_dfa,
    minimize,
    moore_partition,
    renumber,
    row_classes,
)
from glrmask_cli.lexer.lark_rules import LarkRules, lark_rules
from glrmask_cli.lexer.lookahead import excluding_dfa
from glrmask_cli.lexer.nfa import build_nfa
from glrmask_cli.lexer.syntax import SyntaxUnsupported, parse_pattern
from glrmask_cli.limits import DEFAULTS, BuildLimits
from glrmask_runtime.tables import LexerTables

PATTERN_DFAS = 512     # regexp DFAs (and refusals) kept per process (`_pattern_dfa`)
CONTEXT_LEXER_BYTES = 64 << 20   # contexts' basic lexers kept per process, their tables' bytes (`_context_lexer`)
_LABEL_ROWS = 1 << 16  # (state, member) rows `close_labels` takes at once (x byte classes)


@dataclass(frozen=True)
class LexerBuild:
    tables: LexerTables
    warnings: tuple[str, ...]   # terminals never produced; boundary warnings need the parser (`boundary_warnings`)


def build_terminal_dfa(spec: TerminalSpec, grammar_path: str = "<grammar>",
                       limits: BuildLimits = DEFAULTS) -> ByteDFA:
    """One terminal's trimmed, minimized DFA; UnsupportedFeature and LimitExceeded name the terminal."""
    if spec.is_literal and not spec.flags and spec.value:
        return literal_dfa(spec.value.encode("utf-8"))
    text = None if spec.flags else _regexp_literal(spec.value)
    if text:            # a regexp of one fixed string (a JSON Schema's keys and values: /"name"/)
        return literal_dfa(text.encode("utf-8"))
    try:
        dfa = _pattern_dfa(spec.pattern, spec.flags, limits.max_pattern_nfa_states, limits.max_pattern_dfa_states)
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


def compile_terminals(terminals: Sequence[TerminalSpec], grammar_path: str = "<grammar>",
                      limits: BuildLimits = DEFAULTS) -> None:
    """Compile every terminal alone (`build_terminal_dfa`): its errors, without combining them."""
    for spec in terminals:
        build_terminal_dfa(spec, grammar_path, limits)


# a regexp that matches one fixed string: characters that are not special, or escaped punctuation
_FIXED_STRING = re.compile(r"(?:[^\\.^$*+?{}\[\]|()]|\\[^A-Za-z0-9])+", re.DOTALL)


def _regexp_literal(pattern: str) -> str | None:
    """The one string regexp `pattern` (without flags) matches, if it is written as one: plain
    characters and backslash-escaped punctuation, as `re.escape` writes it; else None."""
    if not _FIXED_STRING.fullmatch(pattern):
        return None
    return re.sub(r"\\(.)", r"\1", pattern, flags=re.DOTALL)


def _pattern_dfa(pattern: str, flags: frozenset[str], max_nfa_states: int, max_dfa_states: int) -> ByteDFA:
    """A regexp's minimized DFA, read-only, kept across builds in this process: schemas and the
    contexts of one grammar repeat terminals (a bounded JSON string takes a second to determinize).
    A pattern a limit refused is refused again at once: a server's client may send a refused schema
    again (a string of at most 4,096 characters passes max_pattern_dfa_states after 4-10 s)."""
    found = _pattern_dfa_or_refusal(pattern, flags, max_nfa_states, max_dfa_states)
    if isinstance(found, LimitExceeded):
        raise LimitExceeded(found.limit, found.value, found.stage, found.hint)
    return found


@functools.lru_cache(maxsize=PATTERN_DFAS)
def _pattern_dfa_or_refusal(pattern: str, flags: frozenset[str], max_nfa_states: int,
                            max_dfa_states: int) -> ByteDFA | LimitExceeded:
    """`_pattern_dfa`'s DFA, or the LimitExceeded that refused it (a copy without the traceback,
    which would keep the construction's frames alive)."""
    tree = parse_pattern(pattern, flags)
    try:
        built = excluding_dfa(tree, max_nfa_states, max_dfa_states)      # (?!fixed strings): a product
        dfa = minimize(built if built is not None else determinize(build_nfa(tree, max_nfa_states),
                                                                   max_states=max_dfa_states))
    except LimitExceeded as e:
        return LimitExceeded(e.limit, e.value, e.stage, e.hint)
    dfa.trans.flags.writeable = False
    dfa.close.flags.writeable = False
    return dfa


def build_lexer(terminals: Sequence[TerminalSpec], ignore: Sequence[str],
                grammar_path: str = "<grammar>", limits: BuildLimits = DEFAULTS, *,
                only: Collection[int] | None = None) -> LexerBuild:
    """Compile every terminal and combine them into `LexerTables` by lark's basic-lexer rules
    (docs/semantics.md, "Scanning"). Uses limits max_pattern_nfa_states, max_pattern_dfa_states and
    max_lexer_states. `only`: the basic lexer of these terminal ids and the ignored ones alone (lark's
    contextual lexer builds one per parser state), with the same ids."""
    if only is not None:
        return _subset_lexer(terminals, ignore, grammar_path, limits, only)
    rules = lark_rules(terminals, ignore)
    real = [i for i in range(len(terminals)) if i not in rules.embedded]
    retyped = sorted({s for literals in rules.unless.values() for s in literals})
    built = {i: build_terminal_dfa(terminals[i], grammar_path, limits) for i in sorted(set(real) | set(retyped))}
    dfas = [built[i] for i in real + retyped]
    components = _Components(real, retyped, rules)
    combo = _Combined(components, dfas, limits.max_lexer_states)
    trans, states = combo.determinize()
    close_ids = combo.close_labels(states)
    # START (nothing open) stays apart from a state with the same future but a lexeme open (a
    # whitespace prefix every terminal allows): the output may end at START, not there
    at_start = (np.arange(len(close_ids)) == START)[:, None]
    block = moore_partition(trans, row_classes(np.concatenate([close_ids, at_start], axis=1)))
    new_trans, ids = renumber(trans, block, [START])
    keep = ids >= 0
    close_sets = np.zeros((new_trans.shape[0], 257), np.int32)
    close_sets[ids[keep]] = close_ids[keep]
    viable = combo.viable_labels(new_trans, close_sets)
    close_sets, viable, offsets, items = combo.renumber_sets(close_sets, viable)
    names = {t.name: i for i, t in enumerate(terminals)}
    ignored = np.array(sorted(names[n_] for n_ in ignore if n_ in names), np.int32)
    tables = LexerTables(new_trans, close_sets, viable, offsets, items, ignored)
    return LexerBuild(tables, tuple(unproduced_warnings(tables, terminals, rules, built)))


def _subset_lexer(terminals: Sequence[TerminalSpec], ignore: Sequence[str], grammar_path: str,
                  limits: BuildLimits, only: Collection[int]) -> LexerBuild:
    ignored_ids = {i for i, t in enumerate(terminals) if t.name in set(ignore)}
    keep = sorted(set(only) | ignored_ids)
    if not keep:                                    # a state that takes no terminal: nothing lexes
        empty = np.zeros(1, np.int32)
        return LexerBuild(LexerTables(np.zeros((2, 256), np.int32), np.zeros((2, 257), np.int32),
                                      np.zeros(2, np.int32), np.zeros(2, np.int32), empty[:0], empty[:0]), ())
    t = _context_lexer(tuple(terminals[i] for i in keep), tuple(ignore), grammar_path, limits)
    to_global = np.array(keep, np.int32)
    offsets, items = t.term_set_offsets, to_global[t.term_set_items]
    for k in range(len(offsets) - 1):               # keep each set's ids sorted
        items[offsets[k]:offsets[k + 1]] = np.sort(items[offsets[k]:offsets[k + 1]])
    tables = LexerTables(t.transitions, t.close_sets, t.viable_sets, offsets, items.astype(np.int32),
                         to_global[t.ignored].astype(np.int32) if t.ignored.size else t.ignored)
    return LexerBuild(tables, ())      # "never produced" means nothing for one context


_ContextKey = tuple[tuple[TerminalSpec, ...], tuple[str, ...], BuildLimits]


class _KeptLexers:
    """Contexts' lexers by key, at most `limit` bytes of tables (counted as they come and go, not
    summed again per insertion), the oldest dropped first; the newest is always kept."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._tables: OrderedDict[_ContextKey, LexerTables] = OrderedDict()
        self._bytes = 0

    def get(self, key: _ContextKey) -> LexerTables | None:
        return self._tables.get(key)

    def put(self, key: _ContextKey, tables: LexerTables) -> None:
        self._tables[key] = tables
        self._bytes += _nbytes(tables)
        while self._bytes > self.limit and len(self._tables) > 1:
            self._bytes -= _nbytes(self._tables.popitem(last=False)[1])

    def values(self) -> Iterable[LexerTables]:
        return self._tables.values()

    def clear(self) -> None:
        self._tables.clear()
        self._bytes = 0


_context_lexers = _KeptLexers(CONTEXT_LEXER_BYTES)


def _context_lexer(terminals: tuple[TerminalSpec, ...], ignore: tuple[str, ...], grammar_path: str,
                   limits: BuildLimits) -> LexerTables:
    """The basic lexer of these terminals (their own ids: 0, 1, ...), read-only, kept across builds in
    this process by the terminals, the ignored names and the limits, up to `CONTEXT_LEXER_BYTES` of
    tables (the oldest dropped first): the JSON Schemas a server compiles share many contexts
    (every 8th MaskBench schema: 492 contexts, 254 distinct). `grammar_path` only names the grammar
    in errors."""
    key = (terminals, ignore, limits)
    found = _context_lexers.get(key)
    if found is None:
        found = build_lexer(list(terminals), ignore, grammar_path, limits).tables
        for array in _arrays(found):
            array.flags.writeable = False
        _context_lexers.put(key, found)
    return found


def _nbytes(tables: LexerTables) -> int:
    return sum(array.nbytes for array in _arrays(tables))


def _arrays(tables: LexerTables) -> tuple[np.ndarray, ...]:
    return (tables.transitions, tables.close_sets, tables.viable_sets, tables.term_set_offsets,
            tables.term_set_items, tables.ignored)


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


@dataclass(frozen=True)
class _Components:
    """The combined DFA's parts: the terminals lark tries (`real`, each with its rank) and, for
    the literals in some regexp's unless list, a second DFA that only decides the retyping."""
    real: list[int]
    retyped: list[int]
    rules: LarkRules

    @property
    def owners(self) -> list[int]:
        return self.real + self.retyped


def _group_keys(flat: list[int], offsets: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Keys flat[offsets[i]:offsets[i + 1]] grouped by content: (each group's first key, each key's
    group), groups numbered by their first key."""
    index: dict[tuple[int, ...], int] = {}
    group = [index.setdefault(tuple(flat[offsets[i]:offsets[i + 1]]), len(index)) for i in range(len(offsets) - 1)]
    numbered = np.asarray(group, np.int64)
    return np.unique(numbered, return_index=True)[1], numbered


_STEP_CELLS = 1 << 20     # _Combined.determinize: members x classes stepped at once (a few MB per array)


class _Combined:
    def __init__(self, components: _Components, dfas: list[ByteDFA], max_states: int):
        self.components = components
        self.max_states = max_states
        union_trans, self.union_close, owner, self.starts = _union(dfas)
        self.owner = np.array(components.owners, np.int64)[owner]         # union id -> terminal id
        n_real = len(components.real)
        self.is_real = owner < n_real
        rank = np.array(components.rules.rank, np.int64)
        self.rank = np.where(self.is_real, rank[self.owner], -1)          # retype DFAs are never cut
        # serves[k, r]: retype DFA k (component n_real + k) stands for a literal in regexp r's unless list
        self.serves = np.zeros((len(components.retyped), len(rank)), np.int32)
        position = {lit: k for k, lit in enumerate(components.retyped)}
        for r, literals in components.rules.unless.items():
            self.serves[[position[lit] for lit in literals], r] = 1
        self.retype_index = owner - n_real
        # bytes that every component treats alike (equal columns) form one class
        self.class_of = row_classes(np.concatenate([union_trans, self.union_close[:, :256]]).T)
        self.n_classes = int(self.class_of.max()) + 1
        reps = np.zeros(self.n_classes, np.int64)
        reps[self.class_of[::-1]] = np.arange(256)[::-1]
        self.class_trans = union_trans[:, reps]
        self.class_close = self.union_close[:, reps]
        self.sets: dict[tuple[int, ...], int] = {(): 0}

    def _successors(self, ids: np.ndarray, bounds: np.ndarray) -> np.ndarray:
        """Next union ids per byte class (-1: gone) of the members `ids` of several states, state k's
        being ids[bounds[k]:bounds[k + 1]]. A terminal that matches the lexeme so far cuts every
        terminal after it in lark's order; a retype DFA goes when no regexp it serves is left."""
        state_of = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))
        step = self.class_trans[ids]
        rank = self.rank[ids]
        accepting = self.class_close[ids] & self.is_real[ids][:, None]
        first = np.minimum.reduceat(np.where(accepting, rank[:, None], np.iinfo(np.int64).max), bounds[:-1], axis=0)
        step = np.where(rank[:, None] <= first[state_of], step, -1)
        retype = np.flatnonzero(~self.is_real[ids])
        if len(retype):
            # each retype member against the real members of its state (pairs by block)
            width = np.diff(bounds)[state_of[retype]]
            pair_retype = np.repeat(np.arange(len(retype)), width)
            pair_real = np.repeat(bounds[state_of[retype]], width) + (np.arange(int(width.sum())) -
                                                                      np.repeat(np.cumsum(width) - width, width))
            linked = self.is_real[ids[pair_real]]
            linked[linked] = self.serves[self.retype_index[ids[retype[pair_retype[linked]]]],
                                         self.owner[ids[pair_real[linked]]]] > 0
            served = np.zeros((len(retype), step.shape[1]), bool)
            np.logical_or.at(served, pair_retype[linked], step[pair_real[linked]] >= 0)
            step[retype] = np.where(served, step[retype], -1)
        return step

    def determinize(self):
        """Subset construction over the union (deterministic parts: a state = tuple of ids), stepping
        a batch of the states not yet stepped at a time (`_STEP_CELLS` members x classes): each
        (state, class) successor is the subsequence of the members' next ids that live, found by a
        hash of it (checked member by member) and numbered in (state, class) order, as a
        state-by-state construction numbers it."""
        # START is not a key: bytes that lead back to the same members (an optional prefix every
        # terminal loops on) reach a state of their own, with a lexeme open
        keys: dict[tuple[int, ...], int] = {(): DEAD}
        states: list[tuple[int, ...]] = [(), self.starts]
        rows = [np.zeros((1, self.n_classes), np.int64)]
        weights = hash_weights(len(self.starts) + 1)
        lo = START
        while lo < len(states):
            ahead = states[lo:lo + _STEP_CELLS // self.n_classes + 1]   # a state has a member at least
            lengths = np.fromiter(map(len, ahead), np.int64, count=len(ahead))
            fit = int(np.searchsorted(np.cumsum(lengths) * self.n_classes, _STEP_CELLS, side="right"))
            batch = ahead[:max(fit, 1)]
            lengths = lengths[:len(batch)]
            bounds = np.concatenate([[0], np.cumsum(lengths)])
            ids = np.fromiter(itertools.chain.from_iterable(batch), np.int64, count=int(bounds[-1]))
            step = self._successors(ids, bounds)                    # (members, classes)
            alive = step >= 0
            # position of each live next id in its successor's key: live ones before it in its state
            before: np.ndarray = np.cumsum(alive, axis=0) - alive
            position: np.ndarray = before - np.repeat(before[bounds[:-1]], lengths, axis=0)
            contribution = np.where(alive, (step.astype(np.uint64) + np.uint64(1)) * weights[position], np.uint64(0))
            hashes = np.add.reduceat(contribution, bounds[:-1], axis=0).ravel()    # (state, class) row-major
            sizes = np.add.reduceat(alive.astype(np.int64), bounds[:-1], axis=0).ravel()
            hashes = hashes * weights[-1] + sizes.astype(np.uint64)
            _, first, group = np.unique(hashes, return_index=True, return_inverse=True)
            group = group.ravel()
            # each successor's key, flat in (state, class) order, and checked against its group's first
            n_classes = step.shape[1]
            member, column = np.nonzero(alive)
            pair = np.repeat(np.arange(len(batch)), lengths)[member] * n_classes + column
            order = np.argsort(pair, kind="stable")         # by pair, then member: key order
            values = step[member, column][order]
            offsets = np.concatenate([[0], np.cumsum(sizes)])
            rep = first[group]
            flat, key_at = values.tolist(), offsets.tolist()
            if not ((sizes[rep] == sizes).all() and
                    (values[offsets[rep[pair[order]]] + position[member, column][order]] == values).all()):
                first, group = _group_keys(flat, key_at)      # a hash collision (never seen)
            sid_of_group = np.empty(len(first), np.int64)
            for g in np.argsort(first, kind="stable").tolist():
                at = int(first[g])
                key = tuple(flat[key_at[at]:key_at[at + 1]])
                sid = keys.get(key)
                if sid is None:
                    sid = keys[key] = len(states)
                    states.append(key)
                    if len(states) > self.max_states:
                        raise LimitExceeded("max_lexer_states", self.max_states, "lexer (combined DFA)",
                                            "simplify or split the terminals")
                sid_of_group[g] = sid
            rows.append(sid_of_group[group].reshape(len(batch), n_classes))
            lo += len(batch)
        return np.concatenate(rows)[:, self.class_of], states

    def set_id(self, terms) -> int:
        key = tuple(sorted(terms))
        if key not in self.sets:
            self.sets[key] = len(self.sets)
        return self.sets[key]

    def close_labels(self, states: list[tuple[int, ...]]) -> np.ndarray:
        """Per state and next byte (column 256: the end of input), the set id of the terminal a
        lexeme ending there closes as, 0 for none: the first accepting terminal in lark's order,
        retyped to the first literal of its unless list whose retype DFA accepts too. Vectorized
        over the states' members and the byte classes, a chunk of states at a time."""
        accepts = np.concatenate([self.class_close, self.union_close[:, 256:]], axis=1)   # per union id
        labels = np.full((len(states), accepts.shape[1]), -1, np.int64)      # terminal id, -1: none
        lengths = np.fromiter(map(len, states), np.int64, count=len(states))
        members_before = np.concatenate([[0], np.cumsum(lengths)])
        lo = 0
        while lo < len(states):     # chunks of about _LABEL_ROWS members (one state at least)
            hi = max(lo + 1, int(np.searchsorted(members_before, members_before[lo] + _LABEL_ROWS, side="right")) - 1)
            labels[lo:hi] = self._labels(states[lo:hi], lengths[lo:hi], accepts)
            lo = hi
        used = np.unique(labels[labels >= 0])
        set_of = np.zeros(int(used.max()) + 2 if len(used) else 1, np.int32)   # terminal id + 1 -> set id
        set_of[used + 1] = [self.set_id([t]) for t in used.tolist()]
        columns = np.append(self.class_of, accepts.shape[1] - 1)              # byte -> its class, 256 -> END
        return set_of[labels + 1][:, columns]

    def _labels(self, states: list[tuple[int, ...]], lengths: np.ndarray, accepts: np.ndarray) -> np.ndarray:
        """`close_labels` of some states, per class column: a terminal id or -1."""
        ids = np.fromiter(itertools.chain.from_iterable(states), np.int64, count=int(lengths.sum()))
        state_of = np.repeat(np.arange(len(states)), lengths)
        accepting = accepts[ids]
        real = self.is_real[ids]
        never = np.iinfo(np.int64).max
        first = np.full((len(states), accepts.shape[1]), never, np.int64)
        np.minimum.at(first, state_of[real], np.where(accepting[real], self.rank[ids[real]][:, None], never))
        of_rank = self._terminal_of_rank
        winner = np.where(first == never, -1, of_rank[np.minimum(first, len(of_rank) - 1)])
        retype = np.flatnonzero(~real)
        if len(retype):
            row_of, position, literal_at = self._unless_tables
            rows = state_of[retype]
            literal = self.owner[ids[retype]]
            wins = winner[rows]
            found = np.where(accepting[retype] & (wins >= 0), position[row_of[np.maximum(wins, 0)], literal[:, None]],
                             never)
            best = np.full(first.shape, never, np.int64)
            np.minimum.at(best, rows, found)
            retyped = best != never
            winner[retyped] = literal_at[row_of[winner[retyped]], best[retyped]]
        return winner

    @functools.cached_property
    def _terminal_of_rank(self) -> np.ndarray:
        rank = self.components.rules.rank
        terminal = np.full(len(rank), -1, np.int64)
        terminal[list(rank)] = np.arange(len(rank))
        return terminal

    @functools.cached_property
    def _unless_tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row_of[t]: terminal t's row below, 0 for a terminal without an unless list;
        position[row, l]: where literal l is in that list, else a large number; literal_at[row, k]:
        its k-th literal)."""
        unless = self.components.rules.unless
        n = len(self.components.rules.rank)
        row_of = np.zeros(n, np.int64)
        position = np.full((len(unless) + 1, n), np.iinfo(np.int64).max, np.int64)
        literal_at = np.zeros((len(unless) + 1, max((len(v) for v in unless.values()), default=0) + 1), np.int64)
        for row, (regexp, literals) in enumerate(sorted(unless.items()), start=1):
            row_of[regexp] = row
            position[row, list(literals)] = np.arange(len(literals))
            literal_at[row, :len(literals)] = literals
        return row_of, position, literal_at

    def viable_labels(self, trans: np.ndarray, close_sets: np.ndarray) -> np.ndarray:
        """Per state, the terminals an open lexeme there can still close as (set ids): its own closes
        (on a byte that cannot extend it, or at the end) and those of every state it can reach. The
        (state, set) and (state, successor) pairs are found with numpy; the reachability closure
        runs over them as Python int bitsets."""
        n = trans.shape[0]
        ends = np.concatenate([trans == DEAD, np.ones((n, 1), bool)], axis=1)
        ends[DEAD] = False
        state, column = np.nonzero(ends)
        closed = close_sets[state, column].astype(np.int64)
        n_sets = len(self.sets)
        pairs = np.unique(state[closed != 0].astype(np.int64) * n_sets + closed[closed != 0])
        set_bits = [sum(1 << t for t in terms) for terms, _ in sorted(self.sets.items(), key=lambda kv: kv[1])]
        bits = [0] * n
        for s, set_id in zip((pairs // n_sets).tolist(), (pairs % n_sets).tolist()):
            bits[s] |= set_bits[set_id]
        columns = trans[:, np.unique(row_classes(trans.T), return_index=True)[1]]   # bytes stepping alike once
        source = np.repeat(np.arange(n, dtype=np.int64), columns.shape[1])
        target = columns.astype(np.int64).ravel()
        step = (target != DEAD) & (target != source) & (source != DEAD)
        edges = np.unique(target[step] * n + source[step])             # (successor, predecessor)
        offsets = np.searchsorted(edges // n, np.arange(n + 1)).tolist()
        predecessors = (edges % n).tolist()
        todo = list(range(n))
        while todo:
            t = todo.pop()
            for s in predecessors[offsets[t]:offsets[t + 1]]:
                merged = bits[s] | bits[t]
                if merged != bits[s]:
                    bits[s] = merged
                    todo.append(s)
        bits[DEAD] = 0
        ids: dict[int, int] = {}
        for b in set(bits):
            ids[b] = self.set_id([t for t, bit in enumerate(reversed(bin(b)[2:])) if bit == "1"])
        return np.array([ids[b] for b in bits], np.int32)

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


def unproduced_warnings(tables: LexerTables, terminals: Sequence[TerminalSpec], rules: LarkRules,
                        dfas: dict[int, ByteDFA]) -> list[str]:
    """Terminals no lexeme ever closes as under lark's rules: rules that use them never apply.
    Each warning says what a shortest text of the terminal is read as instead."""
    produced = {t for s in np.unique(tables.close_sets).tolist() for t in tables.term_set(int(s))}
    ignored = set(tables.ignored.tolist())
    out = []
    for t in range(len(terminals)):
        if t in produced or t in ignored:
            continue
        text = terminals[t].value.encode() if terminals[t].is_literal else _shortest_match(dfas[t])
        state = START
        for byte in text:
            state = int(tables.transitions[state, byte]) if state != DEAD else DEAD
        winners = tables.term_set(int(tables.close_sets[state, 256])) if state != DEAD else ()
        instead = (", ".join(terminals[w].display for w in winners)
                   + (", which is %ignore'd" if set(winners) <= ignored else "") if winners
                   else "part of a longer lexeme")
        out.append(f"terminal {terminals[t].display} is never produced: lark's basic lexer reads {_show(text)} "
                   f"as {instead} (it tries terminals by priority, then longest possible match, pattern "
                   "length and name)")
    return out


def _shortest_match(dfa: ByteDFA) -> bytes:
    texts = _shortest_texts(dfa.trans)
    return min((text for s, text in texts.items() if dfa.close[s, 256]), key=lambda x: (len(x), x))


def boundary_warnings(tables: LexerTables, terminals: Sequence[TerminalSpec],
                      followers: Callable[[int], set[int]],
                      hand_over: Callable[[int, int], Sequence[int]] = lambda state, term_set: (START,),
                      starts: Sequence[int] = (START,)) -> list[str]:
    """Lexeme boundaries one byte of lookahead cannot decide, where the grammar lets them occur.

    After a complete lexeme of terminal A, a byte that continues some longer lexeme is always read
    as that continuation (longest match, no backtracking). If the continuation can die before it is
    complete, and the byte can also start a terminal B that may follow A (`followers(A)`, or an
    ignored terminal) in a lexer the lexeme hands over to (`hand_over(state, close set)`: the
    STARTs of the next contexts; the basic lexer's is START), input with B right after A is rejected
    there: one warning per (A, B), with the shortest example text of A from one of `starts`.
    """
    names = [t.display for t in terminals]
    trans, close = tables.transitions, tables.close_sets
    ignored = set(tables.ignored.tolist())
    # Only character boundaries matter: enter by an ASCII byte, fail on a byte that starts a char.
    starts_char = np.zeros(256, bool)
    starts_char[:0x80] = starts_char[0xC2:0xF5] = True
    dead_unaccepted = ((trans == DEAD) & (close[:, :256] == 0))[:, starts_char].any(axis=1)
    dead_unaccepted[DEAD] = False
    example = _shortest_texts(trans, starts)
    found: dict[tuple[int, int], tuple[bytes, int, int]] = {}
    for s in np.nonzero((close != 0).any(axis=1))[0].tolist():
        if s not in example:
            continue   # no context reaches it
        dying = dead_unaccepted[trans[s][:0x80]]
        for term_set in np.unique(close[s][close[s] != 0]).tolist():
            for start in hand_over(s, term_set):
                for c in np.nonzero(dying & (trans[start][:0x80] != DEAD))[0].tolist():
                    starting = set(tables.term_set(int(tables.viable_sets[trans[start][c]])))
                    for a in tables.term_set(term_set):
                        for b in sorted(starting & (followers(a) | ignored)):
                            candidate = (example[s], c, int(trans[s][c]))
                            if (a, b) not in found or len(candidate[0]) < len(found[a, b][0]):
                                found[a, b] = candidate
    return [f"terminal {names[a]} followed by {names[b]}: one byte of lookahead cannot decide the lexeme "
            f"boundary (after {names[a]} {_show(text)}, {_show(bytes([c]))} is read as the continuation of a "
            f"longer {' or '.join(names[t] for t in tables.term_set(int(tables.viable_sets[longer])))}, never as "
            f"the start of {names[b]}; lark's lexer would back up)"
            for (a, b), (text, c, longer) in sorted(found.items())]


def _shortest_texts(trans: np.ndarray, starts: Sequence[int] = (START,)) -> dict[int, bytes]:
    """A shortest byte string from one of `starts` to each state it reaches, preferring printable
    ASCII (breadth first: a level's states in the order they were found, each one's bytes printable
    first; a state takes the first way found). A level at a time with numpy (a 54k-state lexer)."""
    order = np.array(list(range(0x20, 0x7F)) + [b for b in range(256) if not 0x20 <= b < 0x7F], np.int64)
    texts = {int(start): b"" for start in starts}
    seen = np.zeros(trans.shape[0], bool)
    frontier = np.array(list(texts), np.int64)
    seen[frontier] = True
    while len(frontier):
        targets = trans[frontier][:, order].ravel()        # per state of the level, per byte in order
        fresh = np.flatnonzero((targets != DEAD) & ~seen[targets])
        _, first = np.unique(targets[fresh], return_index=True)
        found = fresh[np.sort(first)]                      # each new state's first way, in that order
        new_states = targets[found]
        parents, bytes_ = frontier[found // len(order)].tolist(), order[found % len(order)].tolist()
        for state, parent, byte in zip(new_states.tolist(), parents, bytes_):
            texts[state] = texts[parent] + bytes((byte,))
        seen[new_states] = True
        frontier = new_states
    return texts


def _show(text: bytes) -> str:
    return repr(text.decode("utf-8", "backslashreplace"))
