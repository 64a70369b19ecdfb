"""Stage 6: the Terminal DWA: what every token does to the lexer, from every lexer state.

Input: the combined lexer tables and the vocabulary. Output: for every (lexer state q, token v) an
*outcome*: the sequence of closed lexemes' terminal sets (a node of a shared trie) and the set of
terminals the open lexeme at the token's end can still become; or dead. EOS gets the outcome "close
the open lexeme at end of output, then END".

Policy: tokens are first grouped into classes whose bytes map to the same lexer byte classes (they
behave identically from every state); the scan then runs over classes, vectorized with numpy one byte
column at a time. Closed lexemes whose terminals are all %ignore'd are left out of the sequence.
`build_terminal_dwa` scans from every lexer state only the classes whose first byte extends the open
lexeme: a token whose first byte cannot extend it gets no outcome but `close_row(q)[c]`, the terminal
set it closes that lexeme as, after which it is a token from START (the runtime layouts decide it so,
by closing the lexeme on the real stack; most outcomes of deep grammars are of this kind: every
punctuation token after every complete lexeme). `spell_out_closes` gives those tokens their outcomes
from START's, with the closed lexeme prepended, for the layout that leaves nothing to the runtime: one
scan serves every layout.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from itertools import repeat
from typing import Callable, Sequence

import numpy as np

from glrmask_cli.errors import LimitExceeded
from glrmask_cli.lexer.contextual import ContextualLexer
from glrmask_cli.lexer.dfa import moore_rounds, row_classes
from glrmask_cli.limits import DEFAULTS
from glrmask_cli.progress import NO_PROGRESS, Progress, Ticker
from glrmask_cli.ragged import positions_within, row_positions
from glrmask_cli.vocab.vocabulary import Vocabulary
from glrmask_runtime.tables import DEAD, END_OF_INPUT, SHIFT, START, LexerTables, LRTables, unpack_actions

NO_OUTCOME = -1
FINAL_END = -1  # Outcome.final for EOS: the parser must accept END


NO_CHECK = -1   # trie_start of a lexeme after which the context is not checked (the output ends)
# trie_start below NO_CHECK: code -2 - k, the lexeme hands over to any of the STARTs start_sets[k]

Path = tuple[int, int]   # (trie node, final)


@dataclass(frozen=True)
class Outcome:
    node: int    # LexemeTrie node: the closed lexemes (terminal-set ids), ignored-only ones dropped
    final: int   # term-set id of the terminals the open lexeme can still become, or FINAL_END
    # With lark's contextual lexer a token can lex in several ways, one per context a closed
    # lexeme hands over to (trie_start): those other (node, final) paths, sorted. The token can be
    # consumed iff one of its paths can.
    more: tuple[Path, ...] = ()

    @property
    def paths(self) -> tuple[Path, ...]:
        return ((self.node, self.final),) + self.more


@dataclass(frozen=True)
class LexerContexts:
    """What the scan needs to know of the lexer's contexts (lark's contextual lexer; the basic lexer
    is one context). restart[q]: the START a lexeme that closes at q as an ignored terminal hands
    over to (its own context's); next_starts[T]: the STARTs of the contexts a lexeme of term set T
    can hand over to (those of the LR states its terminals are shifted into), sorted; is_start[q]:
    q is a context's START (nothing open); ignored_only[T]: T's terminals are all %ignore'd."""

    restart: np.ndarray
    next_starts: tuple[tuple[int, ...], ...]
    is_start: np.ndarray
    ignored_only: np.ndarray

    def hand_over(self, q: int, term_set: int) -> tuple[int, ...]:
        """The STARTs the rest of a token is lexed from after a lexeme of `term_set` closes at q."""
        return (int(self.restart[q]),) if self.ignored_only[term_set] else self.next_starts[term_set]

    @property
    def branching(self) -> bool:
        """Some lexeme hands over to more than one context (a token's scan then forks)."""
        return any(len(starts) > 1 for starts in self.next_starts)


def lexer_contexts(contextual: ContextualLexer, lr: LRTables) -> LexerContexts:
    """The contexts of lark's contextual lexer: a lexeme of terminal t hands over to the contexts of
    the LR states t is shifted into."""
    tables = contextual.tables
    kinds, targets = unpack_actions(np.asarray(lr.actions))
    cells = np.searchsorted(lr.action_offsets, np.arange(len(lr.actions)), side="right") - 1
    shifts = kinds == SHIFT
    starts_of_terminal: dict[int, set[int]] = {}
    for terminal, target in zip((cells[shifts] % lr.n_terminals).tolist(), targets[shifts].tolist()):
        starts_of_terminal.setdefault(terminal, set()).add(int(contextual.start_of[target]))
    next_starts = tuple(tuple(sorted(set().union(*(starts_of_terminal.get(t, set()) for t in tables.term_set(k)))))
                        for k in range(tables.n_term_sets))
    return LexerContexts(contextual.restart, next_starts, contextual.is_start, _ignored_only(tables))


def basic_contexts(lexer: LexerTables) -> LexerContexts:
    """The basic lexer: every lexeme hands over to START."""
    is_start = np.zeros(lexer.n_states, dtype=bool)
    is_start[START] = True
    return LexerContexts(np.full(lexer.n_states, START, dtype=np.int64), ((START,),) * lexer.n_term_sets, is_start,
                         _ignored_only(lexer))


@dataclass(frozen=True, eq=False)
class TerminalDWA:
    """Outcomes of every (lexer state, token class), plus the trie of closed-lexeme sequences.

    trie_parent[n], trie_set[n]: node n extends trie_parent[n] by one closed lexeme whose terminals
    are term set trie_set[n]; node 0 is the empty sequence. trie_start[n]: the START of the context
    the rest of the token is lexed in after that lexeme (lark's contextual lexer: the parser must
    leave a top of that context), NO_CHECK where nothing follows (EOS); START with the basic lexer;
    -2 - k where the rest lexes alike after any of the STARTs start_sets[k] (`node_contexts`).
    class_of_token[v]: the token's class; `n_classes` is the EOS class and `n_classes + 1` the class
    of tokens that are never allowed (special tokens other than EOS, empty tokens).
    Classes are numbered by the byte class (`byte_classes`) of their first byte, then longest
    first, so each such class's token classes are one block (its first bytes lead every lexer state
    alike): block k is classes block_starts[k]..block_starts[k+1]-1. `outcome_row(q)[c]`: outcome id
    (index into `outcomes`) of class c at lexer state q, or NO_OUTCOME; stored factored, since a
    token whose first byte extends q's lexeme depends on q only through the state that byte reaches:
    block_rows[k][block_pick[q, k]] is block k's part of q's row (block_rows[k][0]: no outcome; a
    block's rows are distinct, so lexer states with equal rows have equal picks), and
    eos_outcome[q] the EOS class's (lexer states x classes would be 2 GB at 3,000 keywords).
    class_first[c]: the first byte of class c's representative (its tokens' first bytes are of one
    byte class); 256 for the EOS and never classes.
    state_close[q, b]: term-set id the open lexeme of q closes as when byte b cannot extend it (a
    token starting with b is then decided from START at run time), else 0 (column 256: 0); all 0
    once the closes are spelled out. `close_row(q)` gives it per class.
    """

    trie_parent: np.ndarray
    trie_set: np.ndarray
    trie_start: np.ndarray
    outcomes: tuple[Outcome, ...]
    class_of_token: np.ndarray
    n_classes: int
    class_first: np.ndarray
    state_close: np.ndarray
    block_starts: np.ndarray
    block_rows: tuple[np.ndarray, ...]
    block_pick: np.ndarray
    eos_outcome: np.ndarray
    start_sets: tuple[tuple[int, ...], ...] = ()

    @property
    def n_lexer_states(self) -> int:
        return len(self.eos_outcome)

    def node_contexts(self) -> list[frozenset[int] | None]:
        """Per trie node, the STARTs of the contexts its lexeme may hand over to (the parser's top
        after it must be of one of them), None where nothing is checked."""
        sets = [frozenset(starts) for starts in self.start_sets]
        return [None if start == NO_CHECK else frozenset((start,)) if start >= 0 else sets[-2 - start]
                for start in self.trie_start.tolist()]

    def outcome_row(self, q: int) -> np.ndarray:
        """Every class's outcome id at lexer state q (EOS and never classes last), or NO_OUTCOME."""
        parts = [rows[pick] for rows, pick in zip(self.block_rows, self.block_pick[q].tolist())]
        return np.concatenate(parts + [np.array([self.eos_outcome[q], NO_OUTCOME], dtype=np.int32)])

    @property
    def eos_class(self) -> int:
        return self.n_classes

    def close_row(self, q: int) -> np.ndarray:
        """Per class: the term-set id q's open lexeme closes as before the token, else 0."""
        return self.state_close[q, self.class_first]

    def lexeme_sequence(self, node: int) -> tuple[int, ...]:
        """The term-set ids of a trie node's closed lexemes, first to last."""
        seq = []
        while node != 0:
            seq.append(int(self.trie_set[node]))
            node = int(self.trie_parent[node])
        return tuple(reversed(seq))


def byte_classes(lexer: LexerTables) -> np.ndarray:
    """Map each byte to a class; bytes of one class behave identically in every lexer state."""
    columns = np.concatenate([lexer.transitions, lexer.close_sets[:, :256]], axis=0).T
    classes = row_classes(np.ascontiguousarray(columns))
    return classes.astype(np.uint8 if classes.max() < 256 else np.int32)


def token_classes(classes: np.ndarray, vocab: Vocabulary, never: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Group tokens by their byte-class strings (`classes`: `byte_classes` of the lexer). Returns
    (class of each token, each class's representative: its lowest token id), classes numbered by
    their first byte's class, then longest first, then representative id."""
    if classes.dtype != np.uint8:
        raise ValueError("more than 256 byte classes cannot happen for a byte DFA")
    data, starts, lengths = vocab.token_data, vocab.token_offsets[:-1], vocab.token_lengths.astype(np.int64)
    eos_ids = list(vocab.eos_ids)
    excluded = never.copy()
    excluded[eos_ids] = True
    counted = np.flatnonzero(~excluded)
    class_of_counted, first = _equal_strings(classes[data], starts, lengths, counted, vocab.token_positions)
    representative_ids = counted[first]
    first_kinds = classes[data[starts[representative_ids]]]
    order = np.lexsort((representative_ids, -lengths[representative_ids], first_kinds))
    renumbered = np.empty(len(order), dtype=np.int32)
    renumbered[order] = np.arange(len(order), dtype=np.int32)
    class_of_token = np.full(len(lengths), -1, dtype=np.int32)
    class_of_token[counted] = renumbered[class_of_counted]
    n_classes = len(order)
    class_of_token[never] = n_classes + 1
    class_of_token[eos_ids] = n_classes
    return class_of_token, representative_ids[order]


_HASH_BASE = np.uint64(0x9E3779B97F4A7C15)


def _equal_strings(keys: np.ndarray, starts: np.ndarray, lengths: np.ndarray, chosen: np.ndarray,
                   positions: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Group the strings `keys[starts[i]:starts[i] + lengths[i]]` for i in `chosen` (none empty) by
    equal content: (each one's group, each group's first member as an index into `chosen`), groups
    numbered by their first member. Grouped by a polynomial hash of the content and length, then
    checked byte for byte against each group's first member; a collision (never seen) falls back to
    grouping the strings themselves. The strings are stored one after another; `positions`: each
    key's index inside its string, if known (a vocabulary keeps its own: `Vocabulary.token_positions`)."""
    if not len(chosen):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if positions is None:
        positions = positions_within(lengths)
    powers = np.cumprod(np.full(int(lengths.max()), _HASH_BASE, dtype=np.uint64))
    running = np.zeros(len(keys) + 1, dtype=np.uint64)      # running[i]: the hash of keys[:i]
    np.cumsum((keys.astype(np.uint64) + np.uint64(1)) * powers[positions], dtype=np.uint64, out=running[1:])
    hashes = running[starts[chosen] + lengths[chosen]] - running[starts[chosen]]
    hashes = hashes * _HASH_BASE + lengths[chosen].astype(np.uint64)
    order = np.argsort(hashes)
    ordered = hashes[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = ordered[1:] != ordered[:-1]
    first_by_hash = np.minimum.reduceat(order, np.flatnonzero(new))     # each group's first member
    is_first = np.zeros(len(order), dtype=bool)                         # groups numbered by it
    is_first[first_by_hash] = True
    rank = np.cumsum(is_first) - 1
    group = np.empty(len(order), dtype=np.int64)
    group[order] = rank[first_by_hash][np.cumsum(new) - 1]
    first = np.flatnonzero(is_first)
    others = np.flatnonzero(first[group] != np.arange(len(chosen)))     # only these need checking
    mine, theirs = chosen[others], chosen[first[group[others]]]
    if (lengths[mine] == lengths[theirs]).all():
        span = lengths[mine]
        if (keys[row_positions(starts[mine], span)] == keys[row_positions(starts[theirs], span)]).all():
            return group, first
    return _group_exactly(keys, starts, lengths, chosen)


def _group_exactly(keys: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
                   chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`_equal_strings` by a dict of the strings themselves."""
    index: dict[bytes, int] = {}
    first: list[int] = []
    group = np.empty(len(chosen), dtype=np.int64)
    for i, (start, length) in enumerate(zip(starts[chosen].tolist(), lengths[chosen].tolist())):
        key = keys[start:start + length].tobytes()
        found = index.get(key)
        if found is None:
            found = index[key] = len(first)
            first.append(i)
        group[i] = found
    return group, np.asarray(first, dtype=np.int64)


class _TrieBuilder:
    """Interns (parent node, term set, next START) triples into trie node ids, vectorized per batch;
    a next START may be the code of a set of STARTs (`hand_overs`)."""

    def __init__(self, n_term_sets: int, n_lexer_states: int, ignored_only: np.ndarray):
        # tag = START + 1 (0: NO_CHECK), or n_lexer_states + 1 + k for START set k
        self.n_term_sets, self.n_states, self.n_tags = n_term_sets, n_lexer_states, 2 * (n_lexer_states + 1)
        self.ignored_only = ignored_only
        self.index: dict[int, int] = {}
        self.parent = [0]
        self.term_set = [0]
        self.start = [NO_CHECK]
        self.start_sets: list[tuple[int, ...]] = []
        self._set_codes: dict[tuple[int, ...], int] = {}
        # `hand_overs` by cause: its copies' states and tags at _fork_first.., _fork_count of them (-1: not yet)
        self._fork_first = np.zeros(n_term_sets * 256, dtype=np.int64)
        self._fork_count = np.full(n_term_sets * 256, -1, dtype=np.int64)
        self._fork_states = self._fork_tags = np.zeros(0, dtype=np.int64)

    def extend(self, nodes: np.ndarray, term_sets: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """The children of `nodes` by one lexeme of `term_sets` handing over to `starts`
        (ignored-only lexemes are left out: the node stays)."""
        keep = self.ignored_only[term_sets]
        tags = np.where(starts >= NO_CHECK, starts + 1, self.n_states - 1 - starts)
        keys = (nodes.astype(np.int64) * self.n_term_sets + term_sets) * self.n_tags + tags
        unique, inverse = np.unique(keys, return_inverse=True)
        mapped = np.empty(len(unique), dtype=np.int32)
        for i, key in enumerate(unique.tolist()):
            node = self.index.get(key)
            if node is None:
                node = self.index[key] = len(self.parent)
                rest, tag = divmod(key, self.n_tags)
                self.parent.append(rest // self.n_term_sets)
                self.term_set.append(rest % self.n_term_sets)
                self.start.append(tag - 1 if tag <= self.n_states else self.n_states - 1 - tag)
            mapped[i] = node
        return np.where(keep, nodes, mapped[inverse.reshape(-1)])

    def hand_overs(self, causes: np.ndarray, contexts: LexerContexts,
                   transitions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The copies a branch forks into when its lexeme closes and hands over to several
        contexts, per fork (its cause: term set * 256 + the byte that closed the lexeme): one copy
        per state the byte leads those contexts' STARTs to, in the order of the first START leading
        there, handing over to that START, or to the set of them where several lead there (they lex
        the rest of the token alike). Returns (each fork's first copy and its number of copies, as
        positions into the next two: every copy's state and START or START-set code). Remembered
        per cause; new START sets are numbered in the order of (cause, state)."""
        new = np.unique(causes[self._fork_count[causes] < 0]).tolist()
        if new:
            groups_of: dict[int, dict[int, list[int]]] = {}
            for cause in new:
                set_id, byte = divmod(cause, 256)
                next_starts = contexts.next_starts[set_id]
                groups: dict[int, list[int]] = {}
                for start, state in zip(next_starts, transitions[list(next_starts), byte].tolist()):
                    if state != DEAD:
                        groups.setdefault(state, []).append(start)
                groups_of[cause] = groups
            for _, _, members in sorted((cause, state, members) for cause, groups in groups_of.items()
                                        for state, members in groups.items() if len(members) > 1):
                self._start_set(members)
            states, tags = [self._fork_states], [self._fork_tags]
            at = len(self._fork_states)
            for cause, groups in groups_of.items():
                self._fork_first[cause], self._fork_count[cause] = at, len(groups)
                at += len(groups)
                states.append(np.asarray(list(groups), dtype=np.int64))
                tags.append(np.asarray([members[0] if len(members) == 1 else self._start_set(members)
                                        for members in groups.values()], dtype=np.int64))
            self._fork_states, self._fork_tags = np.concatenate(states), np.concatenate(tags)
        return self._fork_first[causes], self._fork_count[causes], self._fork_states, self._fork_tags

    def _start_set(self, starts: list[int]) -> int:
        """The trie_start code (-2 - k) of a set of STARTs."""
        members = tuple(sorted(set(starts)))
        code = self._set_codes.get(members)
        if code is None:
            if len(self.start_sets) > self.n_states:
                raise RuntimeError("more START sets than the trie's tags can hold")
            code = self._set_codes[members] = -2 - len(self.start_sets)
            self.start_sets.append(members)
        return code


@dataclass(frozen=True)
class _Block:
    """Classes lo..hi-1 (longest first), whose representatives start with a byte of the byte class
    of `byte` (one of them: the rest do the same to every lexer state)."""

    byte: int
    lo: int
    hi: int


@dataclass(frozen=True)
class _Rests:
    """Every class representative's bytes after the first, by position: `columns[i, c]` is byte i + 1
    of class c, for i < lengths[c] (zero-padded; a row per position, so a scan step reads one row).
    For the scan's shortcut (`_Loops`): `kinds[:, c]`, the byte classes of that rest as bits (byte
    class k is bit k % 64 of word k // 64); None where nothing takes the shortcut."""

    columns: np.ndarray
    lengths: np.ndarray
    kinds: np.ndarray | None = None


@dataclass(frozen=True)
class _Loops:
    """Per lexer state, the byte classes that lead it back to itself, as `_Rests.kinds`' bits
    (`loops[:, q]`): a branch whose whole rest is of such bytes ends where it is without closing
    anything, so the scan leaves it there without stepping it (a string body's state and the tokens
    that stay inside the string: about half of the bytes a schema's scan steps)."""

    loops: np.ndarray

    def stay(self, states: np.ndarray, rows: np.ndarray, kinds: np.ndarray) -> np.ndarray:
        """Per branch (its state, its class): the class's rest (`kinds`: `_Rests.kinds`) leaves it in
        its state."""
        stays = np.ones(len(states), dtype=bool)
        for loops, rest in zip(self.loops, kinds):
            stays &= (rest.take(rows) & ~loops.take(states)) == 0
        return stays


def _self_loops(lexer: LexerTables, kind_of_byte: np.ndarray) -> _Loops:
    """`_Loops` of the lexer, its bytes in the classes `kind_of_byte` (`byte_classes`)."""
    n_kinds = int(kind_of_byte.max()) + 1
    byte_of_kind = np.zeros(n_kinds, dtype=np.int64)
    byte_of_kind[kind_of_byte] = np.arange(256)       # any byte of the class will do
    loops = lexer.transitions[:, byte_of_kind] == np.arange(lexer.n_states)[:, None]
    return _Loops(_kind_bits(loops.T))


def _kind_bits(members: np.ndarray) -> np.ndarray:
    """Bool (kinds, items) -> uint64 (words, items): kind k is bit k % 64 of word k // 64."""
    words = (len(members) + 63) // 64
    padded = np.zeros((words * 64, members.shape[1]), dtype=np.uint64)
    padded[:len(members)] = members
    shifts = np.arange(64, dtype=np.uint64)[None, :, None]
    return (padded.reshape(words, 64, -1) << shifts).sum(axis=1, dtype=np.uint64)


def _first_byte_blocks(vocab: Vocabulary, representatives: np.ndarray,
                       kind_of_byte: np.ndarray) -> tuple[list[_Block], _Rests]:
    """The classes, given by their representative token ids (numbered by their first byte's class
    `kind_of_byte`, then longest first), as blocks, and one padded matrix of every representative's
    bytes after the first, with their byte classes as bits."""
    starts = vocab.token_offsets[representatives]
    first = vocab.token_data[starts]
    first_kind = kind_of_byte[first]
    rest = vocab.token_lengths[representatives].astype(np.int64) - 1
    columns = np.zeros((int(rest.max(initial=0)), len(representatives)), dtype=np.uint8)
    rows = np.repeat(np.arange(len(representatives)), rest)
    cols = positions_within(rest)
    data = vocab.token_data[np.repeat(starts + 1, rest) + cols]
    columns.reshape(-1)[cols * len(representatives) + rows] = data      # flat: cheaper than a 2-D scatter
    same_block = np.diff(first_kind) == 0
    assert (np.diff(rest)[same_block] <= 0).all(), "token_classes numbers each block longest first"
    bounds = np.concatenate([[0], np.flatnonzero(~same_block) + 1, [len(representatives)]]).tolist()
    blocks = [_Block(int(first[lo]), lo, hi) for lo, hi in zip(bounds, bounds[1:])]
    return blocks, _Rests(columns, rest, _rest_kinds(data, rest, kind_of_byte))


def _rest_kinds(data: np.ndarray, lengths: np.ndarray, kind_of_byte: np.ndarray) -> np.ndarray:
    """`_Rests.kinds` of the rests' bytes `data`, concatenated (rest c: lengths[c] of them), their byte
    classes `kind_of_byte`."""
    words = (int(kind_of_byte.max()) + 64) // 64
    out = np.zeros((words, len(lengths)), dtype=np.uint64)
    some = np.flatnonzero(lengths > 0)
    if not len(some):
        return out
    segments = (np.cumsum(lengths) - lengths)[some]
    bit_of_byte = np.uint64(1) << (kind_of_byte % 64).astype(np.uint64)
    for w in range(words):
        out[w, some] = np.bitwise_or.reduceat(np.where(kind_of_byte // 64 == w, bit_of_byte, 0)[data], segments)
    return out


_SCAN_BRANCHES = 1 << 18     # (reached state, class) pairs one scan covers: a few MB per array


class _TooManyPaths(Exception):
    """A scanned (lexer state, class) pair forked into more than `max_token_paths` branches."""

    def __init__(self, state: int, token_class: int) -> None:
        super().__init__(state, token_class)
        self.state, self.token_class = state, token_class


def _scan(lexer: LexerTables, contexts: LexerContexts, states: np.ndarray, rows: np.ndarray, rests: _Rests,
          trie: _TrieBuilder, max_paths: int = DEFAULTS.max_token_paths,
          loops: _Loops | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scan branch i, the rest of class `rows[i]` (`_Rests`), from lexer state `states[i]`, all at once:
    per branch, its index i, the trie node of the lexemes it closed and its open state (DEAD if
    dead). A branch whose lexeme hands over to several contexts forks: one copy per context
    (appended, with the same index); `_TooManyPaths` once some branch i has more than `max_paths`
    copies (they multiply with every fork: a run of short lexemes). Only branches still alive with
    bytes left are stepped (from most states most classes die in a byte or two), and with `loops`
    (and `rests.kinds`) none whose whole rest leads its state back to itself."""
    keys = np.arange(len(states))
    copies_of = np.ones(len(states), dtype=np.int64)       # branches per index, forks' copies included
    lengths = rests.lengths[rows]
    states_in, states = states, states.astype(np.int32)
    nodes = np.zeros(len(keys), dtype=np.int32)
    columns, restart = rests.columns, contexts.restart
    transitions = lexer.transitions.ravel()         # flat takes: cheaper than 2-D fancy indexing
    close_sets = lexer.close_sets.ravel()
    width, close_width = lexer.transitions.shape[1], lexer.close_sets.shape[1]
    single = np.asarray([ids[0] if len(ids) == 1 else -1 for ids in contexts.next_starts] or [-1])
    ignored_only = trie.ignored_only
    live = np.flatnonzero((lengths > 0) & (states != DEAD))     # increasing: copies are appended
    if loops is not None and rests.kinds is not None:
        live = live[~loops.stay(states[live], rows[live], rests.kinds)]
    column = 0
    while len(live):
        cur = states[live]
        byte = columns[column].take(rows[live])
        nxt = transitions.take(cur * width + byte)
        closing = np.flatnonzero(nxt == DEAD)
        copies = np.zeros(0, dtype=np.int64)
        if len(closing):
            accepted = close_sets.take(cur[closing] * close_width + byte[closing])
            ignored = ignored_only[accepted] & (accepted != 0)
            hand_over = np.where(ignored, restart[cur[closing]], single[accepted])
            forks = np.flatnonzero((accepted != 0) & (hand_over < 0))
            restart_state = transitions.take(np.maximum(hand_over, 0) * width + byte[closing])
            ok = (accepted != 0) & (hand_over >= 0) & (restart_state != DEAD)
            good = closing[ok]
            nodes[live[good]] = trie.extend(nodes[live[good]], accepted[ok], hand_over[ok])
            nxt[good] = restart_state[ok]
            if len(forks):      # one copy per state the next contexts' STARTs reach on the byte
                first, counts, fork_states, fork_tags = trie.hand_overs(
                    accepted[forks].astype(np.int64) * 256 + byte[closing[forks]], contexts, lexer.transitions)
                which = np.repeat(forks, counts)
                at = row_positions(first, counts)
                after = fork_states[at]
                branch = live[closing[which]]
                new_nodes = trie.extend(nodes[branch], accepted[which], fork_tags[at])
                forked, added = np.unique(keys[branch], return_counts=True)
                copies_of[forked] += added
                if len(forked) and copies_of[forked].max() > max_paths:
                    worst = int(forked[copies_of[forked].argmax()])
                    raise _TooManyPaths(int(states_in[worst]), int(rows[worst]))
                keys = np.concatenate([keys, keys[branch]])
                rows = np.concatenate([rows, rows[branch]])
                nodes = np.concatenate([nodes, new_nodes.astype(np.int32)])
                states = np.concatenate([states, after.astype(np.int32)])
                copies = len(lengths) + np.arange(len(branch))
                lengths = np.concatenate([lengths, lengths[branch]])
        states[live] = nxt      # a forked branch ends here (DEAD); its copies go on
        column += 1
        live = np.concatenate([live[(nxt != DEAD) & (lengths[live] > column)], copies[lengths[copies] > column]])
    return keys, nodes, states


@dataclass
class _ClassScan:
    """The scan of classes lo..hi-1 (one length tier of a block, `_length_tiers`): the lexer states
    it is scanned from (one per group of alike states the block's first byte reaches, `_alike_for`),
    their outcomes (one row each), and whether it is its block's last tier."""

    lo: int
    hi: int
    scanned: np.ndarray
    found: np.ndarray
    last: bool


def _scan_classes(lexer: LexerTables, contexts: LexerContexts, scans: list[_ClassScan], rests: _Rests,
                  trie: _TrieBuilder, outcome_index: dict[OutcomeKey, int], ticker: Ticker,
                  max_paths: int = DEFAULTS.max_token_paths, loops: _Loops | None = None) -> None:
    """Fill every scan's rows: the (scanned state, class) branches of consecutive scans are scanned
    together, about `_SCAN_BRANCHES` at a time (a larger scan alone, in parts), and their outcomes
    interned once per batch. `ticker` counts blocks done; `_TooManyPaths` and `loops` as `_scan`."""
    batch: list[tuple[_ClassScan, int, int]] = []      # (scan, its first state, states)
    size = 0
    goes_on = _going_on(lexer, contexts)       # `_viable_pairs`
    going = goes_on.sum(axis=1)

    def run() -> None:
        nonlocal size
        # the (state, class) pairs a scan can keep alive, and their places in the batch's grid
        pairs = [_viable_pairs(goes_on, going, scan.scanned[lo:lo + n], scan.lo, scan.hi, rests)
                 for scan, lo, n in batch]
        bases = np.cumsum([0] + [n * (scan.hi - scan.lo) for scan, _, n in batch])
        states = np.concatenate([states for states, _, _ in pairs])
        rows = np.concatenate([rows for _, rows, _ in pairs])
        places = np.concatenate([base + place for (_, _, place), base in zip(pairs, bases.tolist())])
        keys, nodes, ends = _scan(lexer, contexts, states, rows, rests, trie, max_paths, loops)
        finals = lexer.viable_sets[ends]
        alive = (ends != DEAD) & (finals != 0)
        if len(keys) == len(states):      # one branch per (state, class)
            ids = np.full(int(bases[-1]), NO_OUTCOME, dtype=np.int32)
            ids[places[alive]] = _intern_outcomes(outcome_index, nodes[alive], finals[alive])
        else:
            ids = _intern_paths(outcome_index, int(bases[-1]), places[keys[alive]], nodes[alive], finals[alive])
        at = 0
        for scan, lo, n in batch:
            width = scan.hi - scan.lo
            scan.found[lo:lo + n] = ids[at:at + n * width].reshape(n, width)
            at += n * width
            if scan.last and lo + n == len(scan.scanned):
                ticker.advance()
        batch.clear()
        size = 0

    for scan in scans:
        width = scan.hi - scan.lo
        chunk = max(1, _SCAN_BRANCHES // max(width, 1))
        if scan.last and not len(scan.scanned):
            ticker.advance()
        for lo in range(0, len(scan.scanned), chunk):
            n = min(chunk, len(scan.scanned) - lo)
            if size and size + n * width > _SCAN_BRANCHES:
                run()
            batch.append((scan, lo, n))
            size += n * width
    if batch:
        run()


def _going_on(lexer: LexerTables, contexts: LexerContexts) -> np.ndarray:
    """Bool (lexer states, 256): byte b keeps a branch at state q alive one step: it extends q's
    lexeme, or closes it and starts the next lexeme in a context the closed one hands over to (one
    START of them goes on with b). After a JSON Schema's punctuation with its trailing whitespace
    every byte closes the lexeme, and from the next STARTs few bytes begin one."""
    transitions, closes = lexer.transitions[:, :256], lexer.close_sets[:, :256]
    starts_go = np.zeros((lexer.n_term_sets, 256), dtype=bool)     # per term set: its STARTs go on with b
    for set_id, starts in enumerate(contexts.next_starts):
        if starts:
            starts_go[set_id] = (transitions[list(starts)] != DEAD).any(axis=0)
    restart_go = transitions[contexts.restart] != DEAD            # an ignored lexeme: its own START
    after_close = np.where(contexts.ignored_only[closes], restart_go, starts_go[closes, np.arange(256)])
    return (transitions != DEAD) | ((closes != 0) & after_close)


def _viable_pairs(goes_on: np.ndarray, going: np.ndarray, states: np.ndarray, lo: int, hi: int,
                  rests: _Rests) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Of the (state, class) pairs of `states` x classes lo..hi-1, those whose class's rest is empty
    or starts with a byte b where `goes_on[state, b]` (b extends the state's lexeme or may close it;
    the others die on their first step without closing anything: inside a key literal, or the
    whitespace before a JSON punctuation mark, nearly all): (their states, their classes, their
    places in the states x classes grid, row by row). `going`: per state, its bytes that go on. A
    state from which most bytes go on (a string body, an identifier) keeps every pair: the test would
    cost more than the steps it saves."""
    width = hi - lo
    narrow = np.flatnonzero(2 * going[states] <= 256)
    if not len(narrow):
        return np.repeat(states, width), np.tile(np.arange(lo, hi), len(states)), np.arange(len(states) * width)
    second = rests.columns[0, lo:hi] if len(rests.columns) else np.zeros(width, dtype=np.uint8)
    keep = np.ones((len(states), width), dtype=bool)
    keep[narrow] = goes_on[states[narrow][:, None], second[None, :]] | (rests.lengths[lo:hi] == 0)
    state_at, class_at = np.nonzero(keep)
    return states[state_at], lo + class_at, state_at * width + class_at


@dataclass(frozen=True)
class _BlockPlan:
    """How a block's rows are made: per lexer state the state its first byte leads to (`after`,
    DEAD: none), the distinct states so reached, and per length tier its scan and the row each
    reached state takes in it."""

    after: np.ndarray
    reached: np.ndarray
    tiers: list[tuple[_ClassScan, np.ndarray]]

    def rows(self) -> tuple[np.ndarray, np.ndarray]:
        """Once scanned: the block's rows (row 0: dead; one per distinct combination of tier rows)
        and the row of each lexer state."""
        width = self.tiers[-1][0].hi - self.tiers[0][0].lo
        found = np.full((1, width), NO_OUTCOME, dtype=np.int32)
        if not len(self.reached):
            return found, np.zeros(len(self.after), dtype=np.int32)
        combos = np.stack([row_of for _, row_of in self.tiers], axis=1)
        combo_of, first = _by_first_occurrence(combos)
        row_of_reached = combo_of + 1       # rows in the order of their first states
        chosen = combos[first]
        found = np.concatenate([found, np.concatenate([scan.found[chosen[:, i]] for i, (scan, _) in
                                                       enumerate(self.tiers)], axis=1)])
        pick = np.where(self.after != DEAD, row_of_reached[np.searchsorted(self.reached, self.after)], 0)
        return found, pick.astype(np.int32)


def _plan_block(lexer: LexerTables, block: _Block, tiers: list[tuple[int, int]], rests: _Rests,
                alike: dict[int, np.ndarray]) -> _BlockPlan:
    """A block's scans, one per length tier, each from one lexer state per group of states its first
    byte reaches that do the same to every rest of the tier (`_alike_for` of its longest rest)."""
    after = lexer.transitions[:, block.byte].astype(np.int64)
    after[DEAD] = DEAD
    reached = np.unique(after[after != DEAD])
    parts = []
    for i, (lo, hi) in enumerate(tiers):
        row_of, first = _by_first_occurrence(alike[int(rests.lengths[block.lo + lo])][reached])
        scan = _ClassScan(block.lo + lo, block.lo + hi, reached[first],       # rows in the order of first states
                          np.full((len(first), hi - lo), NO_OUTCOME, dtype=np.int32), i == len(tiers) - 1)
        parts.append((scan, row_of))
    return _BlockPlan(after, reached, parts)


def _length_tiers(lengths: np.ndarray) -> list[tuple[int, int]]:
    """A block's classes (longest first) cut where the bit length of their rest's length changes:
    (start, end) offsets in the block. A tier's classes are at most about twice as long as its
    shortest, and lexer states alike for that length (`_alike_for`) share a scan: a bounded string
    (`{0,500}`) has a state per count, which short tokens cannot tell apart."""
    bits = np.frexp(np.maximum(lengths, 1).astype(np.float64))[1]
    cuts = np.flatnonzero(np.diff(bits)) + 1
    bounds = [0, *cuts.tolist(), len(lengths)]
    return list(zip(bounds, bounds[1:]))


def build_terminal_dwa(lexer: LexerTables, vocab: Vocabulary, progress: Progress = NO_PROGRESS,
                       contexts: LexerContexts | None = None,
                       max_token_paths: int = DEFAULTS.max_token_paths) -> TerminalDWA:
    """Compute every (lexer state, token) outcome of `vocab`'s tokens, closes deferred (see the module
    docstring).
    `contexts`: lark's contextual lexer (`lexer` holds every context's states); default the basic one.
    LimitExceeded (max_token_paths) for a token that forks into more paths than that, naming it.

    A token whose first byte b extends the open lexeme of state q does from then on what its other
    bytes do from the state q reaches on b (the same for every byte of b's byte class), so a block's
    classes are scanned once per distinct such state, not once per lexer state (1,000 keywords +
    NAME: 4,716 lexer states, 40k classes; 4.8k scans of 700 classes instead of 4.7k scans of 20k).
    `progress` counts blocks."""
    never = vocab.token_lengths == 0        # special ids (EOS aside) and empty ids: never allowed
    never[sorted(vocab.special_ids - set(vocab.eos_ids))] = True
    never[list(vocab.eos_ids)] = False
    kind_of_byte = byte_classes(lexer)
    class_of_token, representatives = token_classes(kind_of_byte, vocab, never)
    n_classes = len(representatives)

    contexts = contexts if contexts is not None else basic_contexts(lexer)
    trie = _TrieBuilder(lexer.n_term_sets, lexer.n_states, _ignored_only(lexer))
    outcome_index: dict[OutcomeKey, int] = {}
    blocks, rests = _first_byte_blocks(vocab, representatives, kind_of_byte)
    block_pick = np.zeros((lexer.n_states, len(blocks)), dtype=np.int32)
    tiers = [_length_tiers(rests.lengths[block.lo:block.hi]) for block in blocks]
    alike = _alike_for(lexer, contexts, {int(rests.lengths[block.lo + lo]) for block, cuts in zip(blocks, tiers)
                                         for lo, _ in cuts})
    plans = [_plan_block(lexer, block, cuts, rests, alike) for block, cuts in zip(blocks, tiers)]
    ticker = Ticker(progress, len(blocks), "blocks")
    try:
        _scan_classes(lexer, contexts, [scan for plan in plans for scan, _ in plan.tiers], rests, trie,
                      outcome_index, ticker, max_token_paths, _self_loops(lexer, kind_of_byte))
    except _TooManyPaths as e:
        token = vocab.token_label(int(representatives[e.token_class]))
        raise LimitExceeded("max_token_paths", max_token_paths, "terminal DWA",
                            f"the token {token} read from lexer state {e.state} splits into more sequences of "
                            "lexemes and hand-overs than that (the contextual lexer: each closed lexeme hands "
                            "over to every context its terminal is shifted into); if the grammar is written "
                            "for lark's standard lexer, build it with --lexer basic") from None
    block_rows = []
    for k, plan in enumerate(plans):
        found, block_pick[:, k] = _distinct_rows(*plan.rows())
        block_rows.append(found)
    eos_outcome = np.full(lexer.n_states, NO_OUTCOME, dtype=np.int32)
    for state in range(1, lexer.n_states):
        eos_outcome[state] = _eos_outcome(lexer, contexts, state, trie, outcome_index)
    ticker.close()
    ticker.note(f"{len(outcome_index):,} outcomes")

    return TerminalDWA(
        trie_parent=np.asarray(trie.parent, dtype=np.int32),
        trie_set=np.asarray(trie.term_set, dtype=np.int32),
        trie_start=np.asarray(trie.start, dtype=np.int64),
        outcomes=_outcomes(outcome_index),
        class_of_token=class_of_token,
        n_classes=n_classes,
        class_first=np.concatenate([vocab.token_data[vocab.token_offsets[representatives]],
                                    [256, 256]]).astype(np.int64),
        state_close=_state_close(lexer),
        block_starts=np.asarray([b.lo for b in blocks] + [n_classes], dtype=np.int64),
        block_rows=tuple(block_rows),
        block_pick=block_pick,
        eos_outcome=eos_outcome,
        start_sets=tuple(trie.start_sets),
    )


def _alike_for(lexer: LexerTables, contexts: LexerContexts, widths: set[int]) -> dict[int, np.ndarray]:
    """Per width w, a group per lexer state such that states of one group do the same to every byte
    string of at most w bytes (the same closes, hand-overs and open lexeme's viable set): Moore's
    refinement of those labels, stopped after w rounds. A bounded string (`{0,500}`) has a state per
    count, and every count a token cannot reach the end from is one group."""
    labels = np.concatenate([lexer.viable_sets[:, None], lexer.close_sets[:, :256], contexts.restart[:, None],
                             (np.arange(lexer.n_states) == DEAD)[:, None]], axis=1).astype(np.int64)
    widest = max(widths, default=0)
    alike: dict[int, np.ndarray] = {}
    for rounds, group in enumerate(moore_rounds(lexer.transitions[:, :256], row_classes(labels))):
        if rounds in widths:
            alike[rounds] = group.copy()
        if rounds == widest:
            return alike
    stable = group.copy()          # no longer string tells more apart
    return alike | {w: stable for w in widths if w not in alike}


def _distinct_rows(rows: np.ndarray, pick: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A block's rows without repeats, in the order they first occur (row 0, no outcome, stays
    first), and `pick` (row per lexer state) pointing into them."""
    group, first = _by_first_occurrence(rows)
    return rows[first], group.astype(np.int32)[pick]


_FEW = 64   # `_by_first_occurrence` groups at most this many items with a dict (numpy's sorts cost more)


def _by_first_occurrence(items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Equal items (the entries of a 1-D array, the rows of a 2-D one) grouped: per item its group,
    groups numbered in the order of their first item, and each group's first item's index. A block
    has a few rows and a few reached states (half of a schema's 500 calls have 2 rows), so few items
    go through a dict."""
    if len(items) <= _FEW:
        keys = items.tolist() if items.ndim == 1 else [row.tobytes() for row in items]
        number: dict[object, int] = {}
        group: list[int] = []
        firsts: list[int] = []
        for i, key in enumerate(keys):
            found = number.get(key)
            if found is None:
                found = number[key] = len(firsts)
                firsts.append(i)
            group.append(found)
        return np.asarray(group, dtype=np.int64), np.asarray(firsts, dtype=np.int64)
    _, first, inverse = np.unique(items if items.ndim == 1 else row_classes(items), return_index=True,
                                  return_inverse=True)
    order = np.argsort(first)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[inverse.reshape(-1)], first[order]


def _state_close(lexer: LexerTables) -> np.ndarray:
    """TerminalDWA.state_close: what each lexer state's open lexeme closes as before each byte that
    cannot extend it (nothing for DEAD and START, which have no open lexeme)."""
    closes = np.zeros((lexer.n_states, 257), dtype=np.int32)
    dead = lexer.transitions[:, :256] == DEAD
    closes[:, :256] = np.where(dead, lexer.close_sets[:, :256], 0)
    closes[[DEAD, START]] = 0
    return closes


def spell_out_closes(tdwa: TerminalDWA, lexer: LexerTables, max_outcomes: int | None = None,
                     contexts: LexerContexts | None = None) -> TerminalDWA:
    """The Terminal DWA with nothing left to the runtime: a token deferred at q (close_row(q)[c] = T)
    closes the open lexeme as T and then does from START what it does there, so its outcome is START's
    with the lexeme T prepended (left out if T's terminals are all %ignore'd). With contexts, from the
    START of each context the lexeme hands over to (`LexerContexts`; an ignored one: q's own), one
    path each. Existing trie nodes and outcomes keep their ids; new ones follow (a node still after
    its parent). LimitExceeded (limit max_outcomes_auto) before any work if that could give more than
    `max_outcomes` outcomes."""
    contexts = contexts if contexts is not None else basic_contexts(lexer)
    ignored_only = _ignored_only(lexer)
    parent, term_set, start = tdwa.trie_parent.tolist(), tdwa.trie_set.tolist(), tdwa.trie_start.tolist()
    child = {(p, t, s): node for node, (p, t, s) in enumerate(zip(parent, term_set, start)) if node}
    prepended: dict[tuple[int, int, int], int] = {}

    def extend(node: int, set_id: int, tag: int) -> int:
        found = child.get((node, set_id, tag))
        if found is None:
            found = child[(node, set_id, tag)] = len(parent)
            parent.append(node)
            term_set.append(set_id)
            start.append(tag)
        return found

    def prepend(first: int, tag: int, node: int) -> int:
        """The trie node of (first handing over to tag,) + the lexemes of `node`."""
        if ignored_only[first]:
            return node
        found = prepended.get((first, tag, node))
        if found is None:
            found = (extend(0, first, tag) if node == 0 else
                     extend(prepend(first, tag, parent[node]), term_set[node], start[node]))
            prepended[(first, tag, node)] = found
        return found

    outcomes = list(tdwa.outcomes)
    index: dict[OutcomeKey, int] = {(o.paths[0] if not o.more else o.paths): i for i, o in enumerate(outcomes)}
    from_start: dict[int, np.ndarray] = {}

    def row_from(start: int) -> np.ndarray:
        """What every class does from a hand-over START (outcome ids), made once per START."""
        if start not in from_start:
            from_start[start] = tdwa.outcome_row(start)[:tdwa.n_classes]
        return from_start[start]

    plans = []      # per (block, close set, hand-over STARTs): the deferred states, their columns' keys
    keys: set[tuple[int, tuple[int, ...], tuple[int, ...]]] = set()
    # per hand-over STARTs (the same for every lexeme handing over so), per block: the distinct
    # columns of what the tokens do from them, each class's column, the columns where one can go on
    columns_after: dict[tuple[int, ...], list[tuple[list[tuple[int, ...]], np.ndarray, list[tuple[int, ...]]]]] = {}
    for k, members, closed, hand_over in _deferred_groups(tdwa, contexts, row_from):
        per_block = columns_after.get(hand_over)
        if per_block is None:
            after = np.stack([row_from(s) for s in hand_over])
            per_block = columns_after[hand_over] = [
                (columns, which, [column for column in columns if any(o != NO_OUTCOME for o in column)])
                for columns, which in _distinct_columns_by_block(after, tdwa.block_starts)]
        columns, which, reached = per_block[k]
        keys.update(zip(repeat(closed), repeat(hand_over), reached))
        plans.append((k, members, closed, hand_over, columns, which))
    if max_outcomes is not None and len(outcomes) + len(keys) > max_outcomes:
        raise LimitExceeded("max_outcomes_auto", max_outcomes, "terminal DWA",
                            f"spelling out the closes gives up to {len(outcomes) + len(keys):,} token outcomes")
    spelled: dict[tuple[int, tuple[int, ...], tuple[int, ...]], int] = {}
    for closed, hand_over, after_ids in sorted(keys):
        paths = sorted({(prepend(closed, s, node), final) for s, o in zip(hand_over, after_ids) if o != NO_OUTCOME
                        for node, final in outcomes[o].paths})
        key: OutcomeKey = paths[0] if len(paths) == 1 else tuple(paths)
        found = index.get(key)
        if found is None:
            found = index[key] = len(outcomes)
            (node, final), *more = paths
            outcomes.append(Outcome(node, final, tuple(more)))
        spelled[(closed, hand_over, after_ids)] = found
    block_rows = list(tdwa.block_rows)
    block_pick = tdwa.block_pick.copy()
    added: dict[int, list[np.ndarray]] = {}      # per block, its new rows (appended once: a block has 100s)
    for k, members, closed, hand_over, columns, which in plans:
        row = np.asarray([spelled.get((closed, hand_over, column), NO_OUTCOME) for column in columns],
                         dtype=np.int32)[which]
        new_rows = added.setdefault(k, [])
        block_pick[np.asarray(members), k] = len(block_rows[k]) + len(new_rows)
        new_rows.append(row)
    for k in sorted(added):
        block_rows[k], block_pick[:, k] = _distinct_rows(np.concatenate([block_rows[k], np.stack(added[k])]),
                                                         block_pick[:, k])
    return dataclasses.replace(
        tdwa, trie_parent=np.asarray(parent, dtype=np.int32), trie_set=np.asarray(term_set, dtype=np.int32),
        trie_start=np.asarray(start, dtype=np.int64), outcomes=tuple(outcomes),
        state_close=np.zeros_like(tdwa.state_close), block_rows=tuple(block_rows), block_pick=block_pick)


def _deferred_groups(tdwa: TerminalDWA, contexts: LexerContexts,
                     row_from: Callable[[int], np.ndarray]) -> list[tuple[int, list[int], int, tuple[int, ...]]]:
    """The deferred (lexer state, block) pairs (the block's first byte closes the state's lexeme)
    after which some class of the block goes on from a START the lexeme hands over to, grouped by
    block, the term set the lexeme closes as and the STARTs it hands over to: (block, its states
    ascending, term set, hand-over STARTs), by block, then term set and hand-over. The other pairs
    (nearly all: after a complete lexeme most first bytes start nothing) keep no outcome, as before.
    `row_from(s)`: every class's outcome id from START s."""
    closes = tdwa.state_close[:, tdwa.class_first[tdwa.block_starts[:-1]]]        # lexer states x blocks
    block, state = np.nonzero(((tdwa.block_pick == 0) & (closes != 0)).T)
    closed = closes[state, block]
    # an ignored lexeme hands over to its own context's START, any other to its term set's STARTs
    restart = np.where(contexts.ignored_only[closed], contexts.restart[state], -1)
    codes, code_of = np.unique(np.where(restart >= 0, restart, -1 - closed), return_inverse=True)
    hand_overs = [(code,) if code >= 0 else contexts.next_starts[-1 - code] for code in codes.tolist()]
    going: dict[int, np.ndarray] = {}
    for starts in hand_overs:
        for s in starts:
            if s not in going:
                going[s] = np.logical_or.reduceat(row_from(s) != NO_OUTCOME, tdwa.block_starts[:-1])
    none = np.zeros(len(tdwa.block_starts) - 1, dtype=bool)
    goes_on = np.stack([np.logical_or.reduce([none] + [going[s] for s in starts]) for starts in hand_overs] or [none])
    kept = goes_on[code_of.reshape(-1), block]
    block, state, closed, restart = block[kept], state[kept], closed[kept], restart[kept]
    order = np.lexsort((state, restart, closed, block))
    block, state, closed, restart = block[order], state[order], closed[order], restart[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = (block[1:] != block[:-1]) | (closed[1:] != closed[:-1]) | (restart[1:] != restart[:-1])
    bounds = [*np.flatnonzero(new).tolist(), len(order)]
    groups = []
    for lo, hi in zip(bounds, bounds[1:]):
        set_id, back = int(closed[lo]), int(restart[lo])
        groups.append((int(block[lo]), state[lo:hi].tolist(), set_id,
                       (back,) if back >= 0 else contexts.next_starts[set_id]))
    return groups


def merge_terminals(tdwa: TerminalDWA, term_sets: Sequence[tuple[int, ...]],
                    terminal_class: np.ndarray) -> tuple[TerminalDWA, list[tuple[int, ...]]]:
    """The Terminal DWA over terminal classes (parser/quotient.py): each closed lexeme's and open
    lexeme's term set becomes the set of its terminals' classes, so tokens that differ only in
    interchangeable terminals (`==x` and `!=x`) share a trie path and an outcome. Returns it and the
    class sets its trie sets and finals index (set 0: the empty set). `state_close` keeps the real
    term sets: the runtime closes lexemes with the real parser. Nodes and outcomes keep their order
    of first appearance (a node still after its parent)."""
    index: dict[tuple[int, ...], int] = {(): 0}
    set_of = np.asarray([index.setdefault(tuple(sorted({int(terminal_class[t]) for t in terms})), len(index))
                         for terms in term_sets], dtype=np.int64)
    class_sets = [key for key, _ in sorted(index.items(), key=lambda kv: kv[1])]
    parent, trie_set, start = tdwa.trie_parent.tolist(), tdwa.trie_set.tolist(), tdwa.trie_start.tolist()
    nodes: dict[tuple[int, int, int], int] = {}
    node_of = [0] * len(parent)
    new_parent, new_set, new_start = [0], [0], [int(start[0])]
    for node in range(1, len(parent)):
        triple = (node_of[parent[node]], int(set_of[trie_set[node]]), start[node])
        found = nodes.get(triple)
        if found is None:
            found = nodes[triple] = len(new_parent)
            new_parent.append(triple[0])
            new_set.append(triple[1])
            new_start.append(triple[2])
        node_of[node] = found
    outcomes: dict[OutcomeKey, int] = {}
    remap = np.empty(len(tdwa.outcomes) + 1, dtype=np.int32)    # old id + 1 -> new id (NO_OUTCOME stays)
    remap[0] = NO_OUTCOME
    for old, outcome in enumerate(tdwa.outcomes):
        paths = sorted({(node_of[node], FINAL_END if final == FINAL_END else int(set_of[final]))
                        for node, final in outcome.paths})
        key: OutcomeKey = paths[0] if len(paths) == 1 else tuple(paths)
        remap[old + 1] = outcomes.setdefault(key, len(outcomes))
    block_pick = tdwa.block_pick.copy()
    block_rows = []
    for k, rows in enumerate(tdwa.block_rows):      # rows that differed only in merged outcomes are one now
        merged_rows, block_pick[:, k] = _distinct_rows(remap[rows + 1], block_pick[:, k])
        block_rows.append(merged_rows)
    merged = dataclasses.replace(
        tdwa, trie_parent=np.asarray(new_parent, dtype=np.int32), trie_set=np.asarray(new_set, dtype=np.int32),
        trie_start=np.asarray(new_start, dtype=np.int64), outcomes=_outcomes(outcomes),
        block_rows=tuple(block_rows), block_pick=block_pick, eos_outcome=remap[tdwa.eos_outcome + 1])
    return merged, class_sets


def _distinct_columns_by_block(after: np.ndarray,
                               block_starts: np.ndarray) -> list[tuple[list[tuple[int, ...]], np.ndarray]]:
    """Per block of classes (block k: classes block_starts[k] .. block_starts[k + 1] - 1), the
    distinct columns of `after` (outcome ids per hand-over START x class) in it, in ascending order,
    and each of its classes' column among them: one sort for every block, of the classes some START
    gives an outcome (from the STARTs after a lexeme most tokens have none; they share the column of
    NO_OUTCOMEs, the smallest, so first in its block)."""
    blocks = len(block_starts) - 1
    block = np.repeat(np.arange(blocks), np.diff(block_starts))
    live = np.flatnonzero((after != NO_OUTCOME).any(axis=0))
    live_block = block[live]
    has_dead = (np.bincount(block, minlength=blocks) - np.bincount(live_block, minlength=blocks)) > 0
    order = np.lexsort(tuple(after[::-1, live]) + (live_block,))          # by block, then column
    in_block, column = live_block[order], after[:, live[order]]
    new = np.ones(len(order), dtype=bool)
    new[1:] = (in_block[1:] != in_block[:-1]) | (column[:, 1:] != column[:, :-1]).any(axis=0)
    firsts = np.flatnonzero(new)
    bounds = np.searchsorted(in_block[firsts], np.arange(blocks + 1))
    distinct_id = np.zeros(len(block), dtype=np.int64)         # the dead column: 0 in its block
    distinct_id[live[order]] = np.cumsum(new) - 1 - bounds[in_block] + has_dead[in_block]
    columns = [tuple(c) for c in column[:, firsts].T.tolist()]
    dead = [(NO_OUTCOME,) * len(after)]
    return [((dead if has_dead[k] else []) + columns[bounds[k]:bounds[k + 1]],
             distinct_id[block_starts[k]:block_starts[k + 1]]) for k in range(blocks)]


def _ignored_only(lexer: LexerTables) -> np.ndarray:
    """Per term-set id: all its terminals are %ignore'd (such closed lexemes are left out)."""
    ignored = set(int(t) for t in lexer.ignored)
    return np.array([bool(lexer.term_set(i)) and set(lexer.term_set(i)) <= ignored
                     for i in range(lexer.n_term_sets)], dtype=bool)


# An outcome's key: (node, final) for one path; its sorted paths for several.
OutcomeKey = Path | tuple[Path, ...]


def _intern_outcomes(index: dict[OutcomeKey, int], nodes: np.ndarray, finals: np.ndarray) -> np.ndarray:
    keys = nodes.astype(np.int64) * (1 << 32) + finals.astype(np.int64)
    unique, inverse = np.unique(keys, return_inverse=True)
    ids = np.empty(len(unique), dtype=np.int32)
    for i, key in enumerate(unique.tolist()):
        pair = (key >> 32, key & 0xFFFFFFFF)
        ids[i] = index.setdefault(pair, len(index))
    return ids[inverse.reshape(-1)]


def _intern_paths(index: dict[OutcomeKey, int], n_rows: int, rows: np.ndarray, nodes: np.ndarray,
                  finals: np.ndarray) -> np.ndarray:
    """Per row, the outcome of its live branches (paths), NO_OUTCOME for a row without one; new
    outcomes are numbered in the order of their rows' first branch. Most rows have one branch (a
    schema's scans: 240k rows, under 100 forked): those are grouped by one sort of their keys; only
    the rows with several branches are grouped by their sorted paths."""
    ids = np.full(n_rows, NO_OUTCOME, dtype=np.int32)
    if not len(rows):
        return ids
    keys = (nodes.astype(np.int64) << 32) | finals.astype(np.int64)     # sorts as (node, final)
    several = np.bincount(rows, minlength=n_rows)[rows] > 1
    one = np.flatnonzero(~several)
    distinct, first, which = np.unique(keys[one], return_index=True, return_inverse=True)
    found: list[tuple[int, OutcomeKey]] = [(int(at), _path(key)) for at, key in zip(one[first].tolist(),
                                                                                     distinct.tolist())]
    forked_rows, signature, paths, first_branch = _forked_paths(np.flatnonzero(several), rows, keys)
    found += zip(first_branch, paths)
    outcome_of = {key: index.setdefault(key, len(index)) for _, key in sorted(found, key=lambda item: item[0])}
    ids[rows[one]] = np.fromiter((outcome_of[_path(key)] for key in distinct.tolist()), dtype=np.int32,
                                 count=len(distinct))[which.reshape(-1)]
    if len(forked_rows):
        ids[forked_rows] = np.asarray([outcome_of[key] for key in paths], dtype=np.int32)[signature]
    return ids


def _path(key: int) -> Path:
    """A branch's (node, final) from its packed key."""
    return key >> 32, key & 0xFFFFFFFF


def _forked_paths(branches: np.ndarray, rows: np.ndarray,
                  keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[OutcomeKey], list[int]]:
    """The rows of `branches` (each with several branches) grouped by their sets of paths: (the
    rows, each row's group, each group's outcome key, each group's first branch)."""
    if not len(branches):
        return branches, branches, [], []
    order = branches[np.lexsort((keys[branches], rows[branches]))]
    row, key = rows[order], keys[order]
    new = np.ones(len(row), dtype=bool)
    new[1:] = (row[1:] != row[:-1]) | (key[1:] != key[:-1])     # a repeated (row, path) counts once
    row, key = row[new], key[new]
    forked_rows, starts = np.unique(row, return_index=True)
    ends = np.append(starts[1:], len(row))
    first_of_row = np.full(int(rows.max()) + 1, len(rows), dtype=np.int64)
    np.minimum.at(first_of_row, rows[branches], branches)
    group_of: dict[OutcomeKey, int] = {}
    paths: list[OutcomeKey] = []
    first_branch: list[int] = []
    signature = np.empty(len(forked_rows), dtype=np.int64)
    for i, (lo, hi, r) in enumerate(zip(starts.tolist(), ends.tolist(), forked_rows.tolist())):
        pairs = [_path(k) for k in key[lo:hi].tolist()]
        found: OutcomeKey = pairs[0] if len(pairs) == 1 else tuple(pairs)
        group = group_of.get(found)
        if group is None:
            group = group_of[found] = len(paths)
            paths.append(found)
            first_branch.append(int(first_of_row[r]))
        else:
            first_branch[group] = min(first_branch[group], int(first_of_row[r]))
        signature[i] = group
    return forked_rows, signature, paths, first_branch


def _outcomes(index: dict[OutcomeKey, int]) -> tuple[Outcome, ...]:
    """The interned outcomes in id order."""
    out = []
    for key, _ in sorted(index.items(), key=lambda kv: kv[1]):
        if isinstance(key[0], tuple):
            (node, final), *more = key
            out.append(Outcome(node, final, tuple(more)))
        else:
            out.append(Outcome(*key))
    return tuple(out)


def _eos_outcome(lexer: LexerTables, contexts: LexerContexts, state: int, trie: _TrieBuilder,
                 index: dict[OutcomeKey, int]) -> int:
    """EOS from lexer state q: close the open lexeme at end of output (if any), then END."""
    if contexts.is_start[state]:
        node = 0
    else:
        accepted = int(lexer.close_sets[state, END_OF_INPUT])
        if accepted == 0:
            return NO_OUTCOME
        starts = contexts.next_starts[accepted]
        tag = starts[0] if len(starts) == 1 else NO_CHECK   # nothing follows: any context will do
        node = int(trie.extend(np.array([0], dtype=np.int32), np.array([accepted], dtype=np.int32),
                               np.array([tag], dtype=np.int64))[0])
    return index.setdefault((node, FINAL_END), len(index))
