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

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from glrmask_cli.errors import LimitExceeded
from glrmask_cli.progress import NO_PROGRESS, Progress, Ticker
from glrmask_runtime.tables import DEAD, END_OF_INPUT, START, LexerTables

NO_OUTCOME = -1
FINAL_END = -1  # Outcome.final for EOS: the parser must accept END


@dataclass(frozen=True)
class Outcome:
    node: int    # LexemeTrie node: the closed lexemes (terminal-set ids), ignored-only ones dropped
    final: int   # term-set id of the terminals the open lexeme can still become, or FINAL_END


@dataclass(frozen=True, eq=False)
class TerminalDWA:
    """Outcomes of every (lexer state, token class), plus the trie of closed-lexeme sequences.

    trie_parent[n], trie_set[n]: node n extends trie_parent[n] by one closed lexeme whose terminals
    are term set trie_set[n]; node 0 is the empty sequence.
    class_of_token[v]: the token's class; `n_classes` is the EOS class and `n_classes + 1` the class
    of tokens that are never allowed (special tokens other than EOS, empty tokens).
    Classes are numbered by first byte, then longest first, so each first byte's classes are one
    block: block k is classes block_starts[k]..block_starts[k+1]-1. `outcome_row(q)[c]`: outcome id
    (index into `outcomes`) of class c at lexer state q, or NO_OUTCOME; stored factored, since a
    token whose first byte extends q's lexeme depends on q only through the state that byte reaches:
    block_rows[k][block_pick[q, k]] is block k's part of q's row (block_rows[k][0]: no outcome), and
    eos_outcome[q] the EOS class's (lexer states x classes would be 2 GB at 3,000 keywords).
    class_first[c]: the first byte of class c's tokens; 256 for the EOS and never classes.
    state_close[q, b]: term-set id the open lexeme of q closes as when byte b cannot extend it (a
    token starting with b is then decided from START at run time), else 0 (column 256: 0); all 0
    once the closes are spelled out. `close_row(q)` gives it per class.
    """

    trie_parent: np.ndarray
    trie_set: np.ndarray
    outcomes: tuple[Outcome, ...]
    class_of_token: np.ndarray
    n_classes: int
    class_first: np.ndarray
    state_close: np.ndarray
    block_starts: np.ndarray
    block_rows: tuple[np.ndarray, ...]
    block_pick: np.ndarray
    eos_outcome: np.ndarray

    @property
    def n_lexer_states(self) -> int:
        return len(self.eos_outcome)

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
    _, inverse = np.unique(columns, axis=0, return_inverse=True)
    return inverse.reshape(-1).astype(np.uint8 if inverse.max() < 256 else np.int32)


def token_classes(lexer: LexerTables, token_bytes: Sequence[bytes], never: np.ndarray,
                  eos_ids: Sequence[int]) -> tuple[np.ndarray, list[bytes]]:
    """Group tokens by their byte-class strings. Returns (class of each token, one token per class),
    classes numbered by first byte, then longest first."""
    classes = byte_classes(lexer)
    table = bytes(int(c) for c in classes) if classes.dtype == np.uint8 else None
    if table is None:
        raise ValueError("more than 256 byte classes cannot happen for a byte DFA")
    keys = [b.translate(table) for b in token_bytes]
    excluded = never.copy()
    excluded[list(eos_ids)] = True
    index: dict[bytes, int] = {}
    representatives: list[bytes] = []
    class_of_token = np.empty(len(token_bytes), dtype=np.int32)
    for token_id, key in enumerate(keys):
        if excluded[token_id]:
            class_of_token[token_id] = -1
            continue
        cls = index.get(key)
        if cls is None:
            cls = index[key] = len(representatives)
            representatives.append(token_bytes[token_id])
        class_of_token[token_id] = cls
    n_classes = len(representatives)
    # renumber: by first byte, then longest first (the scan takes each first byte's classes as a block)
    order = sorted(range(n_classes), key=lambda c: (representatives[c][0], -len(representatives[c]), c))
    renumbered = np.empty(n_classes, dtype=np.int32)
    renumbered[order] = np.arange(n_classes, dtype=np.int32)
    counted = class_of_token >= 0
    class_of_token[counted] = renumbered[class_of_token[counted]]
    representatives = [representatives[c] for c in order]
    class_of_token[never] = n_classes + 1
    class_of_token[list(eos_ids)] = n_classes
    return class_of_token, representatives


class _TrieBuilder:
    """Interns (parent node, term set) pairs into trie node ids, vectorized per batch."""

    def __init__(self, n_term_sets: int, ignored_only: np.ndarray):
        self.n_term_sets = n_term_sets
        self.ignored_only = ignored_only
        self.index: dict[int, int] = {}
        self.parent = [0]
        self.term_set = [0]

    def extend(self, nodes: np.ndarray, term_sets: np.ndarray) -> np.ndarray:
        keep = self.ignored_only[term_sets]
        keys = nodes.astype(np.int64) * self.n_term_sets + term_sets
        unique, inverse = np.unique(keys, return_inverse=True)
        mapped = np.empty(len(unique), dtype=np.int32)
        for i, key in enumerate(unique.tolist()):
            node = self.index.get(key)
            if node is None:
                node = self.index[key] = len(self.parent)
                self.parent.append(key // self.n_term_sets)
                self.term_set.append(key % self.n_term_sets)
            mapped[i] = node
        return np.where(keep, nodes, mapped[inverse.reshape(-1)])


@dataclass(frozen=True)
class _Block:
    """Classes lo..hi-1, whose representatives start with `byte` (longest first), and the rest of
    their bytes as a padded matrix; `active[j]`: how many of them still have a byte in column j."""

    byte: int
    lo: int
    hi: int
    rest: np.ndarray
    active: np.ndarray


def _first_byte_blocks(representatives: list[bytes]) -> list[_Block]:
    """The class representatives (numbered by first byte, then longest first) as blocks."""
    blocks = []
    lo = 0
    while lo < len(representatives):
        byte = representatives[lo][0]
        hi = lo
        while hi < len(representatives) and representatives[hi][0] == byte:
            hi += 1
        rest, order, active = _padded([data[1:] for data in representatives[lo:hi]])
        assert (order == np.arange(hi - lo)).all(), "token_classes numbers each block longest first"
        blocks.append(_Block(byte, lo, hi, rest, active))
        lo = hi
    return blocks


def _padded(representatives: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Byte strings sorted by length (longest first, stably) as a padded byte matrix; (matrix, the
    order, how many rows still have a byte in each column)."""
    lengths = np.fromiter((len(b) for b in representatives), dtype=np.int64, count=len(representatives))
    order = np.argsort(-lengths, kind="stable")
    width = int(lengths.max()) if len(lengths) else 0
    matrix = np.zeros((len(representatives), width), dtype=np.uint8)
    flat = np.frombuffer(b"".join(representatives[i] for i in order), dtype=np.uint8)
    sorted_lengths = lengths[order]
    rows = np.repeat(np.arange(len(order)), sorted_lengths)
    starts = np.cumsum(sorted_lengths) - sorted_lengths
    cols = np.arange(len(flat)) - np.repeat(starts, sorted_lengths)
    matrix[rows, cols] = flat
    active = np.searchsorted(-sorted_lengths, -np.arange(1, width + 1), side="right")
    return matrix, order, active


def _scan_from(lexer: LexerTables, state: int, matrix: np.ndarray, active: np.ndarray,
               trie: _TrieBuilder) -> tuple[np.ndarray, np.ndarray]:
    """Scan the rows of `matrix` (padded bytes, longest first; `active` as `_padded` gives it) from one
    lexer state: per row (trie node of the lexemes closed, open state), DEAD if dead."""
    n = matrix.shape[0]
    states = np.full(n, state, dtype=np.int32)
    nodes = np.zeros(n, dtype=np.int32)
    transitions, close_sets = lexer.transitions, lexer.close_sets
    for column, count in enumerate(active.tolist()):
        cur = states[:count]
        byte = matrix[:count, column]
        nxt = transitions[cur, byte]
        closing = np.nonzero((nxt == DEAD) & (cur != DEAD))[0]
        if len(closing):
            accepted = close_sets[cur[closing], byte[closing]]
            restart = transitions[START, byte[closing]]
            ok = (accepted != 0) & (restart != DEAD)
            good = closing[ok]
            nodes[good] = trie.extend(nodes[good], accepted[ok])
            nxt[good] = restart[ok]
        states[:count] = nxt
    return nodes, states


def build_terminal_dwa(lexer: LexerTables, token_bytes: Sequence[bytes], special_ids: frozenset[int],
                       eos_ids: Sequence[int], progress: Progress = NO_PROGRESS) -> TerminalDWA:
    """Compute every (lexer state, token) outcome, closes deferred (see the module docstring).

    A token whose first byte b extends the open lexeme of state q does from then on what its other
    bytes do from the state q reaches on b, so the classes starting with b are scanned once per
    distinct such state, not once per lexer state (1,000 keywords + NAME: 4,716 lexer states, 40k
    classes; 4.8k scans of 700 classes instead of 4.7k scans of 20k). `progress` counts first bytes."""
    never = np.zeros(len(token_bytes), dtype=bool)
    never[sorted(special_ids - set(eos_ids))] = True
    never |= np.fromiter((len(b) == 0 for b in token_bytes), dtype=bool, count=len(token_bytes))
    never[list(eos_ids)] = False
    class_of_token, representatives = token_classes(lexer, token_bytes, never, eos_ids)
    n_classes = len(representatives)

    trie = _TrieBuilder(lexer.n_term_sets, _ignored_only(lexer))
    outcome_index: dict[tuple[int, int], int] = {}
    blocks = _first_byte_blocks(representatives)
    block_rows = []
    block_pick = np.zeros((lexer.n_states, len(blocks)), dtype=np.int32)
    ticker = Ticker(progress, len(blocks), "first bytes")
    for k, block in enumerate(blocks):
        after = lexer.transitions[:, block.byte].astype(np.int64)
        after[DEAD] = DEAD
        reached = np.unique(after[after != DEAD])
        found = np.full((len(reached) + 1, block.hi - block.lo), NO_OUTCOME, dtype=np.int32)   # 0: dead
        for i, state in enumerate(reached.tolist()):
            nodes, ends = _scan_from(lexer, state, block.rest, block.active, trie)
            finals = lexer.viable_sets[ends]
            alive = (ends != DEAD) & (finals != 0)
            found[i + 1, alive] = _intern_outcomes(outcome_index, nodes[alive], finals[alive])
        block_pick[:, k] = np.where(after != DEAD, np.searchsorted(reached, after) + 1, 0)
        block_rows.append(found)
        ticker.advance()
    eos_outcome = np.full(lexer.n_states, NO_OUTCOME, dtype=np.int32)
    for state in range(1, lexer.n_states):
        eos_outcome[state] = _eos_outcome(lexer, state, trie, outcome_index)
    ticker.close()
    ticker.note(f"{len(outcome_index):,} outcomes")

    outcomes = tuple(Outcome(node, final) for (node, final), _ in sorted(outcome_index.items(), key=lambda kv: kv[1]))
    return TerminalDWA(
        trie_parent=np.asarray(trie.parent, dtype=np.int32),
        trie_set=np.asarray(trie.term_set, dtype=np.int32),
        outcomes=outcomes,
        class_of_token=class_of_token,
        n_classes=n_classes,
        class_first=np.asarray([data[0] for data in representatives] + [256, 256], dtype=np.int64),
        state_close=_state_close(lexer),
        block_starts=np.asarray([b.lo for b in blocks] + [n_classes], dtype=np.int64),
        block_rows=tuple(block_rows),
        block_pick=block_pick,
        eos_outcome=eos_outcome,
    )


def _state_close(lexer: LexerTables) -> np.ndarray:
    """TerminalDWA.state_close: what each lexer state's open lexeme closes as before each byte that
    cannot extend it (nothing for DEAD and START, which have no open lexeme)."""
    closes = np.zeros((lexer.n_states, 257), dtype=np.int32)
    dead = lexer.transitions[:, :256] == DEAD
    closes[:, :256] = np.where(dead, lexer.close_sets[:, :256], 0)
    closes[[DEAD, START]] = 0
    return closes


def spell_out_closes(tdwa: TerminalDWA, lexer: LexerTables, max_outcomes: int | None = None) -> TerminalDWA:
    """The Terminal DWA with nothing left to the runtime: a token deferred at q (close_row(q)[c] = T)
    closes the open lexeme as T and then does from START what it does there, so its outcome is START's
    with the lexeme T prepended (left out if T's terminals are all %ignore'd). Existing trie nodes and
    outcomes keep their ids; new ones follow (a node still after its parent). LimitExceeded (limit
    max_outcomes_auto) before any work if that could give more than `max_outcomes` outcomes."""
    ignored_only = _ignored_only(lexer)
    parent, term_set = tdwa.trie_parent.tolist(), tdwa.trie_set.tolist()
    child = {(p, t): node for node, (p, t) in enumerate(zip(parent, term_set)) if node}
    prepended: dict[tuple[int, int], int] = {}

    def extend(node: int, set_id: int) -> int:
        found = child.get((node, set_id))
        if found is None:
            found = child[(node, set_id)] = len(parent)
            parent.append(node)
            term_set.append(set_id)
        return found

    def prepend(first: int, node: int) -> int:
        """The trie node of (first,) + the lexemes of `node`."""
        if ignored_only[first]:
            return node
        found = prepended.get((first, node))
        if found is None:
            found = extend(0, first) if node == 0 else extend(prepend(first, parent[node]), term_set[node])
            prepended[(first, node)] = found
        return found

    outcomes = list(tdwa.outcomes)
    index = {(o.node, o.final): i for i, o in enumerate(outcomes)}
    base = len(tdwa.outcomes)
    plans = []      # per block with deferred tokens: (block, states, their close set's index, keys)
    for k, lo in enumerate(tdwa.block_starts[:-1].tolist()):
        closes = tdwa.state_close[:, int(tdwa.class_first[lo])]
        states = np.flatnonzero((tdwa.block_pick[:, k] == 0) & (closes != 0))
        if not len(states):
            continue
        close_sets, which = np.unique(closes[states], return_inverse=True)
        start_row = tdwa.block_rows[k][tdwa.block_pick[START, k]]
        keys = np.where(start_row != NO_OUTCOME,            # (closed as, START outcome), -1: none
                        close_sets[:, None].astype(np.int64) * base + start_row[None, :], -1)
        plans.append((k, states, which.reshape(-1), keys))
    pairs = np.unique(np.concatenate([keys[keys >= 0] for *_, keys in plans])) if plans else np.zeros(0, np.int64)
    if max_outcomes is not None and len(outcomes) + len(pairs) > max_outcomes:
        raise LimitExceeded("max_outcomes_auto", max_outcomes, "terminal DWA",
                            f"spelling out the closes gives up to {len(outcomes) + len(pairs):,} token outcomes")
    spelled = np.empty(len(pairs) + 1, dtype=np.int32)
    spelled[-1] = NO_OUTCOME                     # the key -1 finds this entry
    for i, key in enumerate(pairs.tolist()):
        first, start_outcome = divmod(key, base)
        o = outcomes[start_outcome]
        pair = (prepend(first, o.node), o.final)
        found = index.get(pair)
        if found is None:
            found = index[pair] = len(outcomes)
            outcomes.append(Outcome(*pair))
        spelled[i] = found
    block_rows = list(tdwa.block_rows)
    block_pick = tdwa.block_pick.copy()
    for k, states, which, keys in plans:
        new_rows = spelled[np.where(keys >= 0, np.searchsorted(pairs, keys), len(pairs))]
        block_pick[states, k] = len(block_rows[k]) + which
        block_rows[k] = np.concatenate([block_rows[k], new_rows.astype(np.int32)])
    return TerminalDWA(
        trie_parent=np.asarray(parent, dtype=np.int32),
        trie_set=np.asarray(term_set, dtype=np.int32),
        outcomes=tuple(outcomes),
        class_of_token=tdwa.class_of_token,
        n_classes=tdwa.n_classes,
        class_first=tdwa.class_first,
        state_close=np.zeros_like(tdwa.state_close),
        block_starts=tdwa.block_starts,
        block_rows=tuple(block_rows),
        block_pick=block_pick,
        eos_outcome=tdwa.eos_outcome,
    )


def _ignored_only(lexer: LexerTables) -> np.ndarray:
    """Per term-set id: all its terminals are %ignore'd (such closed lexemes are left out)."""
    ignored = set(int(t) for t in lexer.ignored)
    return np.array([bool(lexer.term_set(i)) and set(lexer.term_set(i)) <= ignored
                     for i in range(lexer.n_term_sets)], dtype=bool)


def _intern_outcomes(index: dict[tuple[int, int], int], nodes: np.ndarray, finals: np.ndarray) -> np.ndarray:
    keys = nodes.astype(np.int64) * (1 << 32) + finals.astype(np.int64)
    unique, inverse = np.unique(keys, return_inverse=True)
    ids = np.empty(len(unique), dtype=np.int32)
    for i, key in enumerate(unique.tolist()):
        pair = (key >> 32, key & 0xFFFFFFFF)
        ids[i] = index.setdefault(pair, len(index))
    return ids[inverse.reshape(-1)]


def _eos_outcome(lexer: LexerTables, state: int, trie: _TrieBuilder, index: dict[tuple[int, int], int]) -> int:
    """EOS from lexer state q: close the open lexeme at end of output (if any), then END."""
    if state == START:
        node = 0
    else:
        accepted = int(lexer.close_sets[state, END_OF_INPUT])
        if accepted == 0:
            return NO_OUTCOME
        node = int(trie.extend(np.array([0], dtype=np.int32), np.array([accepted], dtype=np.int32))[0])
    return index.setdefault((node, FINAL_END), len(index))
