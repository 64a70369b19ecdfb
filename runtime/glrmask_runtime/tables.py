"""In-memory form of the lexer and LR tables: what the compiler builds and the artifact stores.

Both are plain numpy arrays so that the artifact can memory-map them. Conventions:
- Lexer: state 0 is DEAD, state 1 is START (no lexeme open). Terminal ids index the
  grammar's terminal list; `n_terminals` of the LR tables counts them plus END (`$end`),
  whose id is `n_terminals - 1`.
- LR: state 0 is the start state. Actions are packed int32: `kind | (arg << 2)`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DEAD = 0
START = 1
END_OF_INPUT = 256  # column of `LexerTables.close_sets` used when the output ends

SHIFT, REDUCE, ACCEPT = 0, 1, 2


def pack_action(kind: int, arg: int | np.ndarray = 0) -> int | np.ndarray:
    """An action as one int (or an array of them, for an array of args)."""
    return kind | (arg << 2)


def unpack_action(action: int) -> tuple[int, int]:
    return action & 3, action >> 2


def unpack_actions(actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`unpack_action` over an array of packed actions: (kinds, args)."""
    packed = np.asarray(actions, dtype=np.int64)
    return packed & 3, packed >> 2


@dataclass(frozen=True, eq=False)
class LexerTables:
    """The combined scanner DFA over bytes (docs/ARCHITECTURE.md, "Lexer"; docs/semantics.md, "Scanning").

    transitions[s, b]  int32 (n_states, 256): next state on byte b; DEAD (0) = cannot extend.
    close_sets[s, c]   int32 (n_states, 257): id (into term_sets) of the terminals a lexeme that
                       ends in state s is accepted as, when the following byte is c (c = 256: end of
                       output). Only meaningful where transitions[s, c] == DEAD (or c == 256).
                       lark's basic-lexer rules are already applied (one terminal per lexeme); a
                       one-byte trailing lookahead makes the set depend on c. Set 0 = not accepted.
    viable_sets[s]     int32 (n_states,): id of the terminals the open lexeme in state s can still
                       close as (the closes reachable from s, s's own included).
    term_set_offsets,  CSR encoding of the terminal sets: set i is
    term_set_items     term_set_items[term_set_offsets[i]:term_set_offsets[i+1]] (sorted ids).
                       Set 0 is the empty set.
    ignored            int32 sorted terminal ids that are %ignore'd (scanned, never parsed).
    """

    transitions: np.ndarray
    close_sets: np.ndarray
    viable_sets: np.ndarray
    term_set_offsets: np.ndarray
    term_set_items: np.ndarray
    ignored: np.ndarray

    @property
    def n_states(self) -> int:
        return int(self.transitions.shape[0])

    @property
    def n_term_sets(self) -> int:
        return int(self.term_set_offsets.shape[0]) - 1

    def term_set(self, set_id: int) -> tuple[int, ...]:
        lo, hi = self.term_set_offsets[set_id], self.term_set_offsets[set_id + 1]
        return tuple(int(t) for t in self.term_set_items[lo:hi])


@dataclass(frozen=True, eq=False)
class LRTables:
    """LR(1)-family tables with every conflict kept (GLR), over the normalized grammar.

    action_offsets     int32 (n_states * n_terminals + 1): the actions of (state, terminal) are
                       actions[action_offsets[i]:action_offsets[i+1]], i = state * n_terminals + terminal,
                       sorted; empty = error.
    actions            int32 packed actions: SHIFT (arg = target state), REDUCE (arg = rule id),
                       ACCEPT (only on END).
    goto               int32 (n_states, n_nonterminals): state after reducing to a nonterminal; -1 = none.
    rule_lhs           int32 (n_rules,): nonterminal index of each rule's left-hand side.
    rule_len           int32 (n_rules,): length of each rule's right-hand side (>= 1 after normalization).
    """

    n_terminals: int
    action_offsets: np.ndarray
    actions: np.ndarray
    goto: np.ndarray
    rule_lhs: np.ndarray
    rule_len: np.ndarray

    @property
    def n_states(self) -> int:
        return int(self.goto.shape[0])

    @property
    def end_terminal(self) -> int:
        return self.n_terminals - 1

    def actions_of(self, state: int, terminal: int) -> np.ndarray:
        i = state * self.n_terminals + terminal
        return self.actions[self.action_offsets[i]:self.action_offsets[i + 1]]
