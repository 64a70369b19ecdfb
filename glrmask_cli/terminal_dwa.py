"""Stage 5: the Terminal DWA: what every token does to the lexer, from every lexer state.

Input: the combined lexer tables and the vocabulary. Output: for every (lexer state q, token v) an
*outcome*: the sequence of closed lexemes' terminal sets (a node of a shared trie) and the set of
terminals the open lexeme at the token's end can still become; or dead. EOS gets the outcome "close
the open lexeme at end of output, then END".

Policy: tokens are first grouped into classes whose bytes map to the same lexer byte classes (they
behave identically from every state); the scan then runs over classes, vectorized with numpy one byte
column at a time. Closed lexemes whose terminals are all %ignore'd are left out of the sequence.
`build_terminal_dwa` scans from every lexer state only the classes whose first byte extends the open
lexeme: a token whose first byte cannot extend it gets no outcome but `class_close[q, c]`, the terminal
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
    class_outcome[q, c]: outcome id (index into `outcomes`) or NO_OUTCOME, shape
    (n_lexer_states, n_classes + 2).
    class_close[q, c]: term-set id the open lexeme closes as when class c's first byte cannot extend
    it (the token is then decided from START at run time), else 0; all 0 unless closes are deferred.
    """

    trie_parent: np.ndarray
    trie_set: np.ndarray
    outcomes: tuple[Outcome, ...]
    class_of_token: np.ndarray
    class_outcome: np.ndarray
    n_classes: int
    class_close: np.ndarray

    @property
    def eos_class(self) -> int:
        return self.n_classes

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
    """Group tokens by their byte-class strings. Returns (class of each token, one token per class)."""
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


def _padded(representatives: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Class representatives sorted by length (longest first) as a padded byte matrix."""
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
    """Scan every class representative from one lexer state: (trie node, open state), DEAD if dead."""
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
    `progress` counts the lexer states scanned."""
    never = np.zeros(len(token_bytes), dtype=bool)
    never[sorted(special_ids - set(eos_ids))] = True
    never |= np.fromiter((len(b) == 0 for b in token_bytes), dtype=bool, count=len(token_bytes))
    never[list(eos_ids)] = False
    class_of_token, representatives = token_classes(lexer, token_bytes, never, eos_ids)
    n_classes = len(representatives)

    trie = _TrieBuilder(lexer.n_term_sets, _ignored_only(lexer))
    matrix, order, active = _padded(representatives)

    outcome_index: dict[tuple[int, int], int] = {}
    class_outcome = np.full((lexer.n_states, n_classes + 2), NO_OUTCOME, dtype=np.int32)
    class_close = np.zeros((lexer.n_states, n_classes + 2), dtype=np.int32)
    first = matrix[:, 0] if matrix.shape[1] else np.zeros(0, dtype=np.uint8)
    ticker = Ticker(progress, lexer.n_states - 1, "lexer states")
    for state in range(1, lexer.n_states):
        scanned = np.ones(n_classes, dtype=bool)          # rows of `matrix` (sorted by length)
        if state != START:
            closes = lexer.transitions[state, first] == DEAD
            class_close[state, order[closes]] = lexer.close_sets[state, first[closes]]
            scanned = ~closes
        kept = np.flatnonzero(scanned)
        nodes, ends = _scan_from(lexer, state, matrix[kept], _active_of(active, scanned), trie)
        finals = lexer.viable_sets[ends]
        alive = (ends != DEAD) & (finals != 0)
        row = np.full(n_classes, NO_OUTCOME, dtype=np.int32)
        row[order[kept[alive]]] = _intern_outcomes(outcome_index, nodes[alive], finals[alive])
        class_outcome[state, :n_classes] = row
        class_outcome[state, n_classes] = _eos_outcome(lexer, state, trie, outcome_index)
        ticker.advance()
    ticker.close()
    ticker.note(f"{len(outcome_index):,} outcomes")

    outcomes = tuple(Outcome(node, final) for (node, final), _ in sorted(outcome_index.items(), key=lambda kv: kv[1]))
    return TerminalDWA(
        trie_parent=np.asarray(trie.parent, dtype=np.int32),
        trie_set=np.asarray(trie.term_set, dtype=np.int32),
        outcomes=outcomes,
        class_of_token=class_of_token,
        class_outcome=class_outcome,
        n_classes=n_classes,
        class_close=class_close,
    )


def spell_out_closes(tdwa: TerminalDWA, lexer: LexerTables) -> TerminalDWA:
    """The Terminal DWA with nothing left to the runtime: a token deferred at q (class_close[q, c] = T)
    closes the open lexeme as T and then does from START what it does there, so its outcome is START's
    with the lexeme T prepended (left out if T's terminals are all %ignore'd). Existing trie nodes and
    outcomes keep their ids; new ones follow (a node still after its parent)."""
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
    start_row = tdwa.class_outcome[START]
    class_outcome = tdwa.class_outcome.copy()
    close_rows, row_of_state = _distinct_rows(tdwa.class_close)
    deferred = (close_rows != 0) & (start_row != NO_OUTCOME)[None, :]
    keys = close_rows.astype(np.int64) * len(tdwa.outcomes) + start_row[None, :]   # (closed as, START outcome)
    pairs = np.unique(keys[deferred])
    spelled = np.empty(len(pairs), dtype=np.int32)
    for i, key in enumerate(pairs.tolist()):
        first, start_outcome = divmod(key, len(tdwa.outcomes))
        o = outcomes[start_outcome]
        pair = (prepend(first, o.node), o.final)
        found = index.get(pair)
        if found is None:
            found = index[pair] = len(outcomes)
            outcomes.append(Outcome(*pair))
        spelled[i] = found
    for r in range(len(close_rows)):
        columns = np.flatnonzero(deferred[r])
        if len(columns):
            states = np.flatnonzero(row_of_state == r)
            class_outcome[np.ix_(states, columns)] = spelled[np.searchsorted(pairs, keys[r, columns])]
    return TerminalDWA(
        trie_parent=np.asarray(parent, dtype=np.int32),
        trie_set=np.asarray(term_set, dtype=np.int32),
        outcomes=tuple(outcomes),
        class_of_token=tdwa.class_of_token,
        class_outcome=class_outcome,
        n_classes=tdwa.n_classes,
        class_close=np.zeros_like(tdwa.class_close),
    )


def _distinct_rows(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct rows in order of first occurrence, each row's index among them); by hashing the
    rows' bytes (np.unique(axis=0) sorts them, far slower on wide tables)."""
    index: dict[bytes, int] = {}
    of_row = np.fromiter((index.setdefault(row.tobytes(), len(index)) for row in table), dtype=np.int64,
                         count=len(table))
    _, first = np.unique(of_row, return_index=True)
    return table[first], of_row


def _ignored_only(lexer: LexerTables) -> np.ndarray:
    """Per term-set id: all its terminals are %ignore'd (such closed lexemes are left out)."""
    ignored = set(int(t) for t in lexer.ignored)
    return np.array([bool(lexer.term_set(i)) and set(lexer.term_set(i)) <= ignored
                     for i in range(lexer.n_term_sets)], dtype=bool)


def _active_of(active: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """`active` (rows still scanning at each column, rows sorted by length) for the kept rows only."""
    before = np.concatenate([[0], np.cumsum(kept)])
    return before[active]


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
