"""Judges built on the recognizer (scanner + GLR parser), independent of the Parser DWA: oracles 2 and 3.

`brute_force_mask` answers "which tokens can be fed from this state?" by feeding every token's bytes
to the recognizer, sharing work along a byte trie of the vocabulary (a prefix that cannot continue any
sentence prunes every token below it, which is exact because viability only shrinks as a lexeme grows).
`sampled_states` gives the states to compare masks at; `random_walk` samples tokens from the mask.
"""

from __future__ import annotations

import random
from typing import Sequence

import numpy as np

from glrmask_runtime.errors import InputRejected
from glrmask_runtime.tables import START


class TokenTrie:
    """Byte trie of a vocabulary: node = (children by byte, token ids ending here)."""

    def __init__(self, token_bytes: Sequence[bytes], excluded: frozenset[int]):
        self.root: dict = {}
        self.ends: dict[int, list[int]] = {}
        for token_id, data in enumerate(token_bytes):
            if token_id in excluded or not data:
                continue
            node = self.root
            for byte in data:
                node = node.setdefault(byte, {})
            node.setdefault(None, []).append(token_id)


def brute_force_mask(recognizer, state, trie: TokenTrie, vocab_size: int, eos_ids: Sequence[int]) -> np.ndarray:
    """Bool mask of the tokens whose bytes the recognizer accepts from `state` (EOS iff it can finish)."""
    allowed = np.zeros(vocab_size, dtype=bool)
    todo = [(trie.root, state)]
    while todo:
        node, current = todo.pop()
        for byte, child in node.items():
            if byte is None:
                continue
            try:
                after = recognizer.feed(current, bytes([byte]))
            except InputRejected:
                continue
            ending = child.get(None)
            if ending:
                allowed[ending] = True
            todo.append((child, after))
    if recognizer.can_finish(state):
        allowed[list(eos_ids)] = True
    return allowed


def sampled_states(b, documents: list[bytes], n_states: int, seed: int) -> list:
    """Matchers at byte prefixes of valid documents, then along seeded random walks."""
    rng = random.Random(seed)
    states = []
    for doc in documents:
        for cut in sorted({0, len(doc), *(rng.randrange(len(doc) + 1) for _ in range(3))}):
            matcher = b.artifact.matcher()
            try:
                matcher.commit_bytes(doc[:cut])
            except InputRejected:   # a documented scanner difference (no backtracking): skip
                continue
            states.append(matcher)
    rng.shuffle(states)
    states = states[: n_states // 2]
    walks = 0
    while len(states) < n_states:
        walks += 1
        if walks > 20 * n_states:     # every walk stopped at once: masks empty where they must not be
            raise AssertionError(f"random walks reached only {len(states)} of {n_states} states: "
                                 "the masks are empty from the start")
        matcher = b.artifact.matcher()
        for _ in range(rng.randrange(1, 12)):
            allowed = np.flatnonzero(matcher.mask())
            allowed = allowed[~np.isin(allowed, b.artifact.eos_token_ids)]
            if not len(allowed):
                break
            matcher.commit(int(allowed[rng.randrange(len(allowed))]))
            states.append(matcher.copy())
    return states[:n_states]


def _stack_depth(matcher) -> int:
    node, depth = matcher._art.threads(matcher._state)[0].stacks[0], 0
    while node.parents:
        node, depth = node.parents[0], depth + 1
    return depth


def _inside_lexeme(matcher) -> bool:
    """Every thread's open lexeme is one that cannot end yet (inside a string or a comment): the
    parse stack does not change until it does, so depth alone would not steer out of it."""
    art = matcher._art
    return all(t.lexer_state != START and not art.lexer.close_sets[t.lexer_state].any()
               for t in art.threads(matcher._state))


def _closing_choice(matcher, candidates: list[int], rng: random.Random) -> int:
    """Among a few candidates, the token after which the output is closest to an end: accepting,
    then out of a lexeme that cannot end yet, then the shallowest parse."""
    scored = []
    for token_id in candidates:
        trial = matcher.copy()
        trial.commit(token_id)
        scored.append((not trial.is_accepting(), _inside_lexeme(trial), _stack_depth(trial), rng.random() < 0.5,
                       rng.random(), token_id))
    return min(scored)[-1]


def random_walk(matcher, rng: random.Random, max_steps: int, steer_after: int,
                eos_ids: Sequence[int]) -> tuple[list[int], str]:
    """Sample tokens from the mask until EOS. After `steer_after` steps, take EOS when allowed and
    otherwise steer towards an end. Returns (token ids, how it ended: "eos" | "dead" | "length")."""
    eos = set(eos_ids)
    tokens: list[int] = []
    for step in range(max_steps):
        allowed = np.flatnonzero(matcher.mask())
        if len(allowed) == 0:
            return tokens, "dead"
        eos_allowed = [t for t in allowed.tolist() if t in eos]
        texts = [t for t in allowed.tolist() if t not in eos]
        if step >= steer_after and eos_allowed:
            matcher.commit(eos_allowed[0])
            return tokens, "eos"
        if not texts:
            matcher.commit(eos_allowed[0])
            return tokens, "eos"
        if step >= steer_after:
            short = [t for t in texts if len(matcher._art.token_bytes(t)) == 1]
            sample = short if short else [texts[rng.randrange(len(texts))] for _ in range(24)]
            choice = _closing_choice(matcher, sample, rng)
        else:
            choice = texts[rng.randrange(len(texts))]
        matcher.commit(choice)
        tokens.append(choice)
    return tokens, "length"
