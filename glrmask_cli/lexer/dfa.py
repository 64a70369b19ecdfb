"""Prioritized byte NFA -> one terminal's byte DFA; Moore minimization shared with the scanner.

Subset construction over byte classes. A DFA state is the list of NFA threads (state + pending
lookahead obligations) in priority order, plus the lookbehind monitors' states; a thread that
matches cuts the lower-priority ones (leftmost-first: a lexeme ends where `re.match` ends it, for
`a|ab` after `a`, for a lazy `".*?"` at the first quote), and higher-priority threads go on.
A match may depend on the byte after the lexeme (trailing lookahead): `close[s, c]`, c = 256 = end.
Conventions: state 0 = DEAD, state 1 = START. Limit: `max_states` per terminal (limit max_pattern_dfa_states).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from glrmask_cli.errors import LimitExceeded
from glrmask_cli.lexer.nfa import NFA
from glrmask_cli.lexer.syntax import SyntaxUnsupported
from glrmask_cli.limits import DEFAULTS

DEAD, START, EOF = 0, 1, 256


@dataclass(frozen=True)
class ByteDFA:
    trans: np.ndarray          # int32 (n, 256)
    close: np.ndarray          # bool (n, 257): a lexeme ending here is matched when followed by c


def nfa_byte_classes(nfa: NFA) -> np.ndarray:
    """Representative bytes of the classes of bytes no NFA edge distinguishes."""
    cuts = {0, 256}
    for edges in nfa.edges:
        for lo, hi, _ in edges:
            cuts.add(lo)
            cuts.add(hi + 1)
    return np.array(sorted(cuts)[:-1], dtype=np.int64)  # class = [cut_i, cut_{i+1})


class _Determinizer:
    def __init__(self, nfa: NFA):
        self.nfa = nfa
        self._sub_cache: dict[frozenset, frozenset] = {}

    # -- sub-NFAs (lookaround bodies): plain sets --------------------------------------------
    def sub_closure(self, seeds) -> frozenset:
        key = frozenset(seeds)
        hit = self._sub_cache.get(key)
        if hit is not None:
            return hit
        seen, stack = set(key), list(key)
        while stack:
            for t in self.nfa.eps[stack.pop()]:
                if t not in seen:
                    seen.add(t)
                    stack.append(t)
        out = frozenset(s for s in seen if self.nfa.edges[s] or not self.nfa.eps[s])
        self._sub_cache[key] = out
        return out

    def sub_step(self, states: frozenset, b: int) -> frozenset:
        return self.sub_closure(t for s in states for lo, hi, t in self.nfa.edges[s] if lo <= b <= hi)

    def resolve(self, negate: bool, sub: frozenset, accept: int) -> bool | None:
        """True: obligation satisfied, False: violated, None: still open."""
        if accept in sub:
            return not negate
        if not sub:
            return negate
        return None

    def step_monitors(self, monitors: tuple, b: int) -> tuple:
        out = []
        for (start, _), cur in zip(self.nfa.monitors, monitors):
            stepped = self.sub_step(cur, b)
            out.append(stepped | self.sub_closure([start]))
        return tuple(out)

    # -- main threads ------------------------------------------------------------------------
    def closure(self, seeds, monitors: tuple) -> list:
        """Ordered epsilon closure of threads (state, obligations); first occurrence wins."""
        out, seen = [], set()
        stack = list(reversed(seeds))
        nfa = self.nfa
        while stack:
            thread = stack.pop()
            if thread in seen:
                continue
            seen.add(thread)
            state, obls = thread
            if state in nfa.look:
                negate, sub_start, sub_accept, nxt = nfa.look[state]
                sub = self.sub_closure([sub_start])
                verdict = self.resolve(negate, sub, sub_accept)
                if verdict is None:
                    stack.append((nxt, obls | {(negate, sub_accept, sub)}))
                elif verdict:
                    stack.append((nxt, obls))
            elif state in nfa.behind:
                negate, mon, nxt = nfa.behind[state]
                if (nfa.monitors[mon][1] in monitors[mon]) != negate:
                    stack.append((nxt, obls))
            elif nfa.eps[state]:
                stack.extend((t, obls) for t in reversed(nfa.eps[state]))
            else:
                out.append(thread)
        return out

    def step_obligations(self, obls: frozenset, b: int):
        """Obligations after byte b, or None if one is violated."""
        out = []
        for negate, accept, sub in obls:
            nsub = self.sub_step(sub, b)
            verdict = self.resolve(negate, nsub, accept)
            if verdict is False:
                return None
            if verdict is None:
                out.append((negate, accept, nsub))
        return frozenset(out)

    def peek_ok(self, obls: frozenset, c: int) -> bool:
        """Is a match with pending obligations valid when the next byte is c (256 = end)?"""
        for negate, accept, sub in obls:
            if c == EOF:
                verdict = negate
            else:
                verdict = self.resolve(negate, self.sub_step(sub, c), accept)
                if verdict is None:
                    raise SyntaxUnsupported("a lookahead reads more than one byte past the end of the "
                                            "lexeme (only a one-byte trailing lookahead is supported)")
            if not verdict:
                return False
        return True

    def successor(self, threads: list, monitors: tuple, c: int):
        """(matched when followed by c, next threads, next monitors)."""
        matched, live = False, []
        for state, obls in threads:
            if state == self.nfa.accept:
                if self.peek_ok(obls, c):
                    matched = True
                    break
            else:
                live.append((state, obls))
        if c == EOF:
            return matched, [], monitors
        new_monitors = self.step_monitors(monitors, c)
        seeds = []
        for state, obls in live:
            for lo, hi, t in self.nfa.edges[state]:
                if lo <= c <= hi:
                    nobls = self.step_obligations(obls, c)
                    if nobls is not None:
                        seeds.append((t, nobls))
        return matched, self.closure(seeds, new_monitors), new_monitors


def determinize(nfa: NFA, max_states: int = DEFAULTS.max_pattern_dfa_states) -> ByteDFA:
    """Subset construction over ordered thread lists, then expanded to 256 columns.
    LimitExceeded past `max_states` states."""
    det = _Determinizer(nfa)
    reps = nfa_byte_classes(nfa)
    monitors0 = tuple(det.sub_closure([start]) for start, _ in nfa.monitors)
    start = (det.closure([(nfa.start, frozenset())], monitors0), monitors0)
    keys: dict = {}
    states: list = [None, start]

    def key_of(threads, monitors):
        return (tuple(threads), monitors)

    keys[key_of(*start)] = START
    trans_rows, close_rows = [np.zeros(len(reps), np.int32)], [np.zeros(257, bool)]
    i = START
    while i < len(states):
        threads, monitors = states[i]
        row, close = np.zeros(len(reps), np.int32), np.zeros(257, bool)
        close[EOF] = det.successor(threads, monitors, EOF)[0]
        for k, c in enumerate(reps.tolist()):
            matched, nthreads, nmon = det.successor(threads, monitors, c)
            close[c] = matched
            if nthreads:
                key = key_of(nthreads, nmon)
                if key not in keys:
                    if len(states) >= max_states:
                        raise LimitExceeded("max_pattern_dfa_states", max_states, "lexer (pattern DFA)",
                                            "the pattern's subset construction is too large")
                    keys[key] = len(states)
                    states.append((nthreads, nmon))
                row[k] = keys[key]
        trans_rows.append(row)
        close_rows.append(close)
        i += 1
    return _expand(np.array(trans_rows), np.array(close_rows), reps)


def literal_dfa(text: bytes) -> ByteDFA:
    """The minimized DFA of one fixed byte string (what `minimize(determinize(...))` gives for it)."""
    n = len(text) + 2
    trans = np.zeros((n, 256), np.int32)
    trans[np.arange(START, n - 1), np.frombuffer(text, np.uint8)] = np.arange(START + 1, n)
    close = np.zeros((n, 257), bool)
    close[n - 1] = True
    return ByteDFA(trans, close)


def _expand(trans_by_class: np.ndarray, close_by_rep: np.ndarray, reps: np.ndarray) -> ByteDFA:
    class_of = np.searchsorted(reps, np.arange(256), side="right") - 1
    trans = trans_by_class[:, class_of].astype(np.int32)
    close = close_by_rep.copy()
    close[:, :256] = close_by_rep[:, reps[class_of]]
    return ByteDFA(trans, close)


def trim(dfa: ByteDFA) -> ByteDFA:
    """Send states from which no match is reachable to DEAD (so live state = viable terminal)."""
    n = dfa.trans.shape[0]
    alive = np.asarray(dfa.close.any(axis=1))
    alive[DEAD] = False
    while True:
        reach = alive | np.asarray(alive[dfa.trans].any(axis=1))
        reach[DEAD] = False
        if (reach == alive).all():
            break
        alive = reach
    trans = np.where(alive[dfa.trans], dfa.trans, DEAD).astype(np.int32)
    trans[~alive] = DEAD
    close = dfa.close & alive[:, None]
    return ByteDFA(trans, close) if n else dfa


_row_weights = np.zeros(0, dtype=np.uint64)     # odd 64-bit multipliers, one per column (grown on demand)
_HASH_COLUMNS = 1024


def hash_weights(n: int) -> np.ndarray:
    global _row_weights
    if len(_row_weights) < n:
        _row_weights = np.random.default_rng(0).integers(1, 2**63, size=max(n, 256), dtype=np.uint64) | np.uint64(1)
    return _row_weights[:n]


def row_classes(rows: np.ndarray) -> np.ndarray:
    """Per row of a 2-D integer array, a class number (0..k-1): equal rows, equal numbers. Rows are
    grouped by a 64-bit hash and checked against their group's first row; a collision (never seen)
    falls back to sorting the rows themselves, so the result is always exact."""
    weights = hash_weights(rows.shape[1])
    if rows.dtype == np.int64:          # the same bits as unsigned: the product wraps as the sum below
        hashes = np.einsum("ij,j->i", rows.view(np.uint64), weights)
    else:
        hashes = np.zeros(rows.shape[0], dtype=np.uint64)
        for lo in range(0, rows.shape[1], _HASH_COLUMNS):      # in slices: small temporaries for wide rows
            hi = lo + _HASH_COLUMNS
            hashes += np.einsum("ij,j->i", rows[:, lo:hi].astype(np.uint64), weights[lo:hi])
    _, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    if (rows == rows[first[inverse]]).all():
        return inverse
    return np.unique(rows, axis=0, return_inverse=True)[1].ravel()


_WHOLE_ROUNDS_SPLIT = 32   # moore_partition: whole rounds while one makes more than n / this new blocks


def moore_partition(trans: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Coarsest partition refining `labels` that is stable under `trans` (Moore's algorithm), as
    block numbers 0..k-1 (only the partition is meant: `renumber` numbers the quotient)."""
    return deque(moore_rounds(trans, labels), maxlen=1)[0]


def moore_rounds(trans: np.ndarray, labels: np.ndarray) -> Iterator[np.ndarray]:
    """Moore's refinement of `labels` under `trans`, a round at a time: the blocks (numbered 0..k-1)
    after 0, 1, 2, ... rounds, states of one block having the same labels along every string of at
    most that many symbols; the last one yielded is stable. The array yielded is changed by the
    next round: copy what is kept.

    Each round refines the blocks by the blocks of each state's successors, but recomputes that
    signature only for the states with a successor whose block number changed in the round before:
    a block that splits keeps its number for the states whose signature is that of its other
    members, so the rest of the states keep theirs. A lexer with a length-bounded terminal needs a
    round per character it counts, and each round then touches the states near the split, not all
    of them (a schema's contexts with a 253-character hostname: 54k states, 250 rounds, 12.7 ->
    0.9 s). Rounds that make many new blocks are done whole, which costs less then."""
    cols = trans[:, np.unique(row_classes(trans.T), return_index=True)[1]] if trans.shape[1] > 1 else trans
    block = np.unique(labels, return_inverse=True)[1].astype(np.int64).ravel()
    n = len(block)
    n_blocks = int(block.max()) + 1 if n else 0
    yield block
    while True:          # whole rounds while they split much (each signature is computed anyway)
        new_block = row_classes(np.concatenate([block[:, None], block[cols]], axis=1))
        count = int(new_block.max()) + 1 if n else 0
        block, grown, n_blocks = new_block, count - n_blocks, count
        if not grown:
            return
        yield block
        if grown <= n // _WHOLE_ROUNDS_SPLIT:
            break
    # predecessors of each state over the distinct columns (CSR), without repeats
    edges = np.unique(cols.astype(np.int64).ravel() * n + np.repeat(np.arange(n, dtype=np.int64), cols.shape[1]))
    pred_offsets = np.searchsorted(edges // n, np.arange(n + 1))
    preds = edges % n
    dirty = np.arange(n, dtype=np.int64)
    is_dirty = np.zeros(n, bool)
    while len(dirty):
        is_dirty[:] = False
        is_dirty[dirty] = True
        clean = np.flatnonzero(~is_dirty)
        member = np.full(n_blocks, -1, np.int64)     # one clean member of each block, if it has one
        member[block[clean]] = clean
        touched = np.unique(block[dirty])
        references = member[touched]
        references = references[references >= 0]
        states = np.concatenate([references, dirty])
        classes = row_classes(np.concatenate([block[states][:, None], block[cols[states]]], axis=1))
        keeps = np.full(int(classes.max()) + 1, False)
        keeps[classes[:len(references)]] = True           # the signature of a block's clean members
        ours, cls = dirty, classes[len(references):]
        # a block of dirty states only: the class of its first dirty state keeps its number
        alone = member[block[ours]] < 0
        if alone.any():
            first = np.full(n_blocks, -1, np.int64)
            first[block[ours[alone]][::-1]] = cls[alone][::-1]
            keeps[first[block[ours[alone]]]] = True
        moving = ~keeps[cls]
        if not moving.any():
            return
        new_classes, new_of = np.unique(cls[moving], return_inverse=True)
        changed = ours[moving]
        block[changed] = n_blocks + new_of.ravel()
        n_blocks += len(new_classes)
        yield block
        starts, ends = pred_offsets[changed], pred_offsets[changed + 1]
        lengths = ends - starts
        index = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(int(lengths.sum()))
        dirty = np.unique(preds[index])


def renumber(trans: np.ndarray, block: np.ndarray, starts: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Quotient by `block`, numbered DEAD=0, then the blocks of `starts` in order (the first is
    START), then breadth-first in byte order.

    Returns (new transitions, new id of each old state's block; -1 for unreachable ones)."""
    n_blocks = int(block.max()) + 1
    rep = np.zeros(n_blocks, np.int64)
    rep[block[::-1]] = np.arange(len(block))[::-1]      # first old state of each block
    qtrans = block[trans[rep]]
    new_id = np.full(n_blocks, -1, np.int64)
    order: list[int] = []
    for b in [int(block[DEAD])] + [int(block[s]) for s in starts]:
        if new_id[b] < 0:
            new_id[b] = len(order)
            order.append(b)
    found = [np.asarray(order, np.int64)]
    numbered = len(order)
    frontier = found[0][1:]           # breadth-first from the starts, a level at a time (DEAD not expanded)
    while len(frontier):
        targets = qtrans[frontier].ravel()        # in the order a queue would meet them: state, then byte
        fresh = targets[new_id[targets] < 0]
        first = np.unique(fresh, return_index=True)[1]
        frontier = fresh[np.sort(first)]
        new_id[frontier] = np.arange(numbered, numbered + len(frontier))
        numbered += len(frontier)
        found.append(frontier)
    out = new_id[qtrans[np.concatenate(found)]].astype(np.int32)
    return out, new_id[block]


def minimize(dfa: ByteDFA) -> ByteDFA:
    """Trim, then Moore-minimize a single terminal's DFA."""
    dfa = trim(dfa)
    if not dfa.close.any():
        return ByteDFA(np.zeros((2, 256), np.int32), np.zeros((2, 257), bool))
    block = moore_partition(dfa.trans, row_classes(dfa.close))
    trans, ids = renumber(dfa.trans, block, [START])
    close = np.zeros((trans.shape[0], 257), bool)
    keep = ids >= 0
    close[ids[keep]] = dfa.close[keep]
    return ByteDFA(trans, close)
