"""A negative lookahead of fixed strings, built as a product instead of by subset construction.

A JSON Schema object's other keys are one regexp of that shape: `"(?!(?:name|type)")BODY*"`, any
string but the declared keys. `dfa.determinize` handles every lookahead by carrying its obligation
in each thread, one Python step per (state, byte class): 10-40 ms for such a key pattern. When the
pattern is a fixed prefix, then `(?!X)` with X a finite set of fixed strings, then a rest without
lookarounds, its DFA is the prefix's chain followed by the product of the rest's DFA with the trie
of X: a byte that completes a string of X kills the match, a byte that leaves the trie frees it.
Every thread of the rest starts where the lookahead stands, so the lookahead keeps or kills all of
them at once and leftmost-first priorities are the rest's own. The result, minimized, is the DFA
the subset construction gives (`minimize` numbers states canonically; tests compare them).
"""

from __future__ import annotations

import functools

import numpy as np

from glrmask_cli.lexer.dfa import DEAD, START, ByteDFA, determinize
from glrmask_cli.lexer.nfa import build_nfa
from glrmask_cli.lexer.syntax import Alt, Chars, Look, Repeat, Seq

_MAX_STRINGS = 4096     # a lookahead of more fixed strings goes through the subset construction
_FREE = -1              # the trie state once the input has left it: the lookahead cannot match any more


def excluding_dfa(tree: object, max_nfa_states: int, max_dfa_states: int) -> ByteDFA | None:
    """The (unminimized) DFA of `tree` if it is a fixed prefix, a negative lookahead of fixed strings
    and a rest without lookarounds, where no match of the rest ends while the lookahead is undecided;
    else None (the caller takes the subset construction)."""
    items = tree.items if isinstance(tree, Seq) else (tree,)
    at = next((i for i, item in enumerate(items) if isinstance(item, Look)), None)
    if at is None:
        return None
    look, rest = items[at], items[at + 1:]
    prefix = _strings(Seq(items[:at]))
    excluded = _strings(look.item)
    if (not look.ahead or not look.negate or prefix is None or len(prefix) != 1 or excluded is None
            or not rest or any(_has_look(item) for item in rest)):
        return None
    after = _rest_dfa(rest[0] if len(rest) == 1 else Seq(rest), max_nfa_states, max_dfa_states)
    product = _product(after, _Trie(excluded), max_dfa_states)
    if product is None:
        return None
    return _after_prefix(prefix[0], product)


@functools.lru_cache(maxsize=64)
def _rest_dfa(rest: object, max_nfa_states: int, max_dfa_states: int) -> ByteDFA:
    """The rest's DFA, kept across patterns (a schema's key patterns share theirs: a JSON string's
    body and its closing quote)."""
    dfa = determinize(build_nfa(rest, max_nfa_states), max_dfa_states)
    dfa.trans.flags.writeable = False
    dfa.close.flags.writeable = False
    return dfa


def _strings(node: object) -> list[bytes] | None:
    """The UTF-8 strings `node` matches if they are a few fixed ones, else None."""
    if isinstance(node, Chars):
        if len(node.ranges) != 1 or node.ranges[0][0] != node.ranges[0][1]:
            return None
        try:
            return [chr(node.ranges[0][0]).encode("utf-8")]
        except UnicodeEncodeError:       # a lone surrogate
            return None
    if isinstance(node, Seq):
        found = [b""]
        for item in node.items:
            part = _strings(item)
            if part is None or len(found) * len(part) > _MAX_STRINGS:
                return None
            found = [a + b for a in found for b in part]
        return found
    if isinstance(node, Alt):
        found = []
        for item in node.items:
            part = _strings(item)
            if part is None or len(found) + len(part) > _MAX_STRINGS:
                return None
            found += part
        return list(dict.fromkeys(found))
    return None


def _has_look(node: object) -> bool:
    if isinstance(node, Look):
        return True
    if isinstance(node, (Seq, Alt)):
        return any(_has_look(item) for item in node.items)
    return isinstance(node, Repeat) and _has_look(node.item)


class _Trie:
    """The excluded strings as a byte trie: `child[node, byte]` (-1: none), `complete[node]`."""

    def __init__(self, strings: list[bytes]) -> None:
        children: list[dict[int, int]] = [{}]
        complete = [False]
        for text in strings:
            node = 0
            for byte in text:
                node = children[node].setdefault(byte, len(children))
                if node == len(children):
                    children.append({})
                    complete.append(False)
            complete[node] = True
        self.child = np.full((len(children), 256), _FREE, dtype=np.int64)
        for node, edges in enumerate(children):
            self.child[node, list(edges)] = list(edges.values())
        self.complete = np.asarray(complete)


def _product(after: ByteDFA, trie: _Trie, max_states: int) -> ByteDFA | None:
    """The DFA of `after`'s matches that no excluded string is a prefix of (its START: the
    lookahead's position), built a breadth-first level at a time; None where a match of `after`
    would end with the lookahead undecided (the lexeme's end would depend on later bytes) or past
    `max_states` states (the subset construction then says so)."""
    if trie.complete[0]:                       # the empty string is excluded: nothing matches
        return ByteDFA(np.zeros((2, 256), np.int32), np.zeros((2, 257), bool))
    n_nodes = len(trie.complete) + 1           # trie nodes, then _FREE as the last
    free = n_nodes - 1
    child = np.vstack([np.where(trie.child >= 0, trie.child, free), np.full((1, 256), free)])
    completes = np.append(trie.complete, False)
    state_of_key = np.full(after.trans.shape[0] * n_nodes, -1, dtype=np.int64)   # (state, node) -> state
    state_of_key[DEAD] = DEAD
    keys = [np.asarray([DEAD, START * n_nodes], dtype=np.int64)]
    state_of_key[START * n_nodes] = START
    frontier, total, rows = keys[0][START:], 2, [np.zeros((1, 256), np.int64)]
    while len(frontier):
        states, nodes = np.divmod(frontier, n_nodes)
        if ((nodes != free) & after.close[states].any(axis=1)).any():
            return None
        steps = child[nodes]
        alive = (after.trans[states] != DEAD) & ~completes[steps]
        targets = np.where(alive, after.trans[states].astype(np.int64) * n_nodes + steps, DEAD)
        fresh = np.unique(targets[state_of_key[targets] < 0])
        if total + len(fresh) > max_states:
            return None
        state_of_key[fresh] = np.arange(total, total + len(fresh))
        total += len(fresh)
        rows.append(state_of_key[targets])
        keys.append(fresh)
        frontier = fresh
    key = np.concatenate(keys)
    states, nodes = np.divmod(key, n_nodes)
    close = np.where((nodes == free)[:, None], after.close[states], False)
    close[DEAD] = False
    return ByteDFA(np.concatenate(rows).astype(np.int32), close)


def _after_prefix(prefix: bytes, dfa: ByteDFA) -> ByteDFA:
    """`dfa` entered after reading `prefix` from START: states START..len(prefix) spell the prefix,
    `dfa`'s state s >= START becomes s + len(prefix)."""
    n, k = dfa.trans.shape[0], len(prefix)
    trans = np.zeros((n + k, 256), np.int32)
    close = np.zeros((n + k, 257), bool)
    trans[START + k:] = np.where(dfa.trans[START:] != DEAD, dfa.trans[START:] + k, DEAD)
    close[START + k:] = dfa.close[START:]
    trans[np.arange(START, START + k), list(prefix)] = np.arange(START + 1, START + k + 1)
    return ByteDFA(trans, close)
