"""Stage 6 (policy): which outcomes share one automaton, and where the mask walks start.

One group holding every outcome gives one walk per mask. On deep operator-precedence grammars that
automaton explodes (docs/ARCHITECTURE.md, "Parser DWA groups"), so the outcomes are split by the
token's first closed lexeme: one group for tokens without a closed lexeme, one per first lexeme.
A group is walked only from stack tops with an action on one of its first terminals: with canonical
LR(1) tables no token of the group can be consumed from any other top. The mask ORs the walks' rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from glrmask_cli.parser_dwa.determinize import NO_STATE, ParserDWA
from glrmask_cli.terminal_dwa import TerminalDWA


@dataclass(frozen=True)
class Group:
    """The tokens whose first closed lexeme is one of the first-level trie nodes `firsts`, plus, if
    `bare`, the tokens without a closed lexeme (decided by the top state alone)."""

    firsts: frozenset[int]
    bare: bool


def first_lexemes(tdwa: TerminalDWA) -> list[int]:
    """The first-level trie nodes (one per terminal set a first closed lexeme can have), in order."""
    return [node for node in range(1, len(tdwa.trie_parent)) if tdwa.trie_parent[node] == 0]


def whole(tdwa: TerminalDWA) -> list[Group]:
    """Everything in one group."""
    return [Group(frozenset(first_lexemes(tdwa)), True)]


def by_first_lexeme(tdwa: TerminalDWA) -> list[Group]:
    """The bare tokens, then one group per first closed lexeme."""
    return [Group(frozenset(), True)] + [Group(frozenset([node]), False) for node in first_lexemes(tdwa)]


def walk_roots(dwa: ParserDWA, groups: Sequence[Group], tdwa: TerminalDWA, term_sets: list[tuple[int, ...]],
               ignored: frozenset[int], has_action: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each LR state p, the roots of the groups a walk from a top in state p must take, as CSR
    (offsets of length n_lr_states + 1, roots). `has_action[p, t]`: LR state p has an action on t."""
    n_lr = has_action.shape[0]
    gated = np.zeros((len(groups), n_lr), dtype=bool)
    for g, group in enumerate(groups):
        terminals = sorted({t for node in group.firsts for t in term_sets[int(tdwa.trie_set[node])]})
        if group.bare or ignored.intersection(terminals):
            gated[g] = True
        elif terminals:
            gated[g] = has_action[:, terminals].any(axis=1)
    roots = np.asarray(dwa.roots, dtype=np.int64)
    per_state = [np.asarray([r for r in np.unique(roots[gated[:, p]]).tolist() if _matters(dwa, r, p)], dtype=np.int64)
                 for p in range(n_lr)]
    offsets = np.zeros(n_lr + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(r) for r in per_state])
    flat = np.concatenate(per_state) if per_state else np.zeros(0, dtype=np.int64)
    return offsets, flat


def _matters(dwa: ParserDWA, root: int, top: int) -> bool:
    """False iff a walk from `root` stops at once on `top` with nothing accepted (it adds row 0)."""
    return dwa.outcomes[root] != 0 or dwa.edges[root].get(top, dwa.default[root]) != NO_STATE
