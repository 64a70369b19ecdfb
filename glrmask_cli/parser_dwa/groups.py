"""Stage 7 (policy): which outcomes share one automaton, and where the mask walks start.

One group holding every outcome gives one walk per mask. On deep operator-precedence grammars that
automaton explodes (docs/ARCHITECTURE.md, "Layouts"), so the outcomes are split by the token's
closed lexemes, as trie subtrees: one group for tokens without a closed lexeme, one per first
lexeme's terminal set (the contextual lexer's nodes for its contexts together), deeper where a group
is still too large (layout.py decides). A group is walked only from stack tops
with an action on one of its first terminals: with canonical LR(1) tables no token of the group can
be consumed from any other top. The mask ORs the walks' rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from glrmask_cli.parser_dwa.determinize import NO_STATE, ParserDWA
from glrmask_cli.terminal_dwa import TerminalDWA


@dataclass(frozen=True)
class Group:
    """The tokens whose closed lexemes start with the lexemes of a trie node in `subtrees`, plus those
    whose closed lexemes are exactly a node in `exact` (node 0: tokens without a closed lexeme)."""

    subtrees: frozenset[int]
    exact: frozenset[int] = frozenset()


def children(tdwa: TerminalDWA, node: int) -> list[int]:
    """The trie nodes one closed lexeme below `node`, in order."""
    return [int(c) for c in np.flatnonzero(tdwa.trie_parent == node) if c != 0]


def whole(tdwa: TerminalDWA) -> list[Group]:
    """Everything in one group."""
    return [Group(frozenset([0]))]


def by_first_lexeme(tdwa: TerminalDWA) -> list[Group]:
    """The bare tokens, then one group per first closed lexeme's term set (with the contextual lexer
    the trie has a node per context that lexeme hands over to: one group for all of them)."""
    by_set: dict[int, list[int]] = {}
    for node in children(tdwa, 0):
        by_set.setdefault(int(tdwa.trie_set[node]), []).append(node)
    return [Group(frozenset(), frozenset([0]))] + [Group(frozenset(nodes)) for nodes in by_set.values()]


def split(tdwa: TerminalDWA, group: Group) -> list[Group] | None:
    """A group of several subtrees as one group per subtree; of one subtree as one group per next
    lexeme (plus the tokens that end at its node); None if it cannot be split."""
    if group.exact:
        return None
    if len(group.subtrees) > 1:
        return [Group(frozenset([node])) for node in sorted(group.subtrees)]
    (node,) = group.subtrees
    below = children(tdwa, node)
    if not below:
        return None
    return [Group(frozenset(), frozenset([node]))] + [Group(frozenset([child])) for child in below]


def first_lexeme_of(tdwa: TerminalDWA, node: int) -> int:
    """The first-level ancestor of a trie node (0 for the root)."""
    while node and tdwa.trie_parent[node] != 0:
        node = int(tdwa.trie_parent[node])
    return node


def gate(group: Group, tdwa: TerminalDWA, term_sets: Sequence[tuple[int, ...]], ignored: frozenset[int],
         has_action: np.ndarray) -> np.ndarray:
    """Per LR state p, whether a walk from a top in state p takes the group: its first closed lexemes
    can be consumed there (always for the tokens without one, or a first lexeme that may be ignored).
    `has_action[p, t]`: LR state p has an action on t."""
    firsts = {first_lexeme_of(tdwa, node) for node in group.subtrees | group.exact}
    terminals = sorted({t for node in firsts - {0} for t in term_sets[int(tdwa.trie_set[node])]})
    if 0 in firsts or ignored.intersection(terminals):
        return np.ones(has_action.shape[0], dtype=bool)
    if not terminals:
        return np.zeros(has_action.shape[0], dtype=bool)
    return np.asarray(has_action[:, terminals].any(axis=1), dtype=bool)


def walk_roots(dwa: ParserDWA, groups: Sequence[Group], tdwa: TerminalDWA, term_sets: Sequence[tuple[int, ...]],
               ignored: frozenset[int], has_action: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each LR state p, the roots of the groups a walk from a top in state p must take (`gate`),
    as CSR (offsets of length n_lr_states + 1, roots)."""
    n_lr = has_action.shape[0]
    gated = np.stack([gate(group, tdwa, term_sets, ignored, has_action) for group in groups]) if groups else \
        np.zeros((0, n_lr), dtype=bool)
    roots = np.asarray(dwa.roots, dtype=np.int64)
    per_state = [np.asarray([r for r in np.unique(roots[gated[:, p]]).tolist() if _matters(dwa, r, p)], dtype=np.int64)
                 for p in range(n_lr)]
    offsets = np.zeros(n_lr + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(r) for r in per_state])
    flat = np.concatenate(per_state) if per_state else np.zeros(0, dtype=np.int64)
    return offsets, flat


def _matters(dwa: ParserDWA, root: int, top: int) -> bool:
    """False iff a walk from `root` stops at once on `top` with nothing accepted (it adds row 0)."""
    return dwa.outcomes[root] != 0 or dwa.step(root, top) != NO_STATE
