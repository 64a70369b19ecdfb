"""Stage 6a: splice stack effects into the Terminal DWA's paths -> the read NFA.

Input: the Terminal DWA (closed-lexeme trie + outcomes) and each terminal's stack effects. Output: a
read NFA (read_nfa.py) that accepts outcome o after reading, top first, any old-stack prefix from
which the parser can consume o's closed lexemes and then shift a terminal o's open lexeme can become.

The parser's position after some lexemes is (trie node, W), W = the states written above the
untouched rest of the old stack (top last). What was read before does not change what can happen
next, so (trie node, W) is an NFA node and the old-stack reads are its labelled edges. An effect
(reads u, writes z) first cancels u against W (a mismatch kills the branch), reads the rest of u from
the old stack, then writes z (DESIGN 3a, seed notes "Stack effects").
"""

from __future__ import annotations

from glrmask_cli.errors import LimitExceeded
from glrmask_cli.parser.stack_effects import ANY, StackEffect, StackEffects
from glrmask_cli.parser_dwa.read_nfa import ReadNFA
from glrmask_cli.terminal_dwa import FINAL_END, TerminalDWA

Written = tuple[int, ...]
MAX_NFA_NODES = 5_000_000


def consuming_effects(effects: StackEffects) -> tuple[tuple[StackEffect, ...], ...]:
    """Rewrite each effect so that it consumes everything it reads (`apply_effect`'s convention).

    `StackEffects` keep the deepest read state on the stack; here it is popped and written back.
    """
    return tuple(tuple(StackEffect(e.reads, e.reads[-1:] + e.writes) for e in terminal_effects)
                 for terminal_effects in effects.by_terminal)


class EffectIndex:
    """One terminal's effects (consuming convention), indexed by their first read so that the ones
    a non-empty written stack rules out are never tried."""

    def __init__(self, effects: tuple[StackEffect, ...]):
        self.all = effects
        self.by_top: dict[int, tuple[StackEffect, ...]] = {}
        wildcard = tuple(e for e in effects if not e.reads or e.reads[0] == ANY)
        for top in sorted({e.reads[0] for e in effects if e.reads and e.reads[0] != ANY}):
            self.by_top[top] = tuple(e for e in effects if e.reads and e.reads[0] == top) + wildcard
        self.wildcard = wildcard

    def candidates(self, written: Written) -> tuple[StackEffect, ...]:
        if not written:
            return self.all
        return self.by_top.get(written[-1], self.wildcard)


def apply_effect(written: Written, effect: StackEffect) -> tuple[tuple[int, ...], Written] | None:
    """Cancel an effect against the written states: (old-stack reads still needed, new written
    states), or None if a read contradicts a written state."""
    depth = len(written)
    n_reads = len(effect.reads)
    for j in range(min(n_reads, depth)):
        label = effect.reads[j]
        if label != ANY and label != written[depth - 1 - j]:
            return None
    if n_reads <= depth:
        return (), written[:depth - n_reads] + effect.writes
    return effect.reads[depth:], effect.writes


def _strip_any(reads: tuple[int, ...]) -> tuple[int, ...]:
    end = len(reads)
    while end and reads[end - 1] == ANY:
        end -= 1
    return reads[:end]


def build_read_nfa(tdwa: TerminalDWA, term_sets: list[tuple[int, ...]], effects: StackEffects,
                   ignored: frozenset[int], end_terminal: int) -> ReadNFA:
    """The read NFA of every outcome of the Terminal DWA (see the module docstring)."""
    by_terminal = [EffectIndex(e) for e in consuming_effects(effects)]
    children: dict[int, list[int]] = {}
    for node in range(1, len(tdwa.trie_parent)):
        children.setdefault(int(tdwa.trie_parent[node]), []).append(node)
    outcomes_at: dict[int, list[int]] = {}
    for outcome_id, outcome in enumerate(tdwa.outcomes):
        outcomes_at.setdefault(outcome.node, []).append(outcome_id)

    nfa = ReadNFA()
    accept = {o: nfa.add_node(1 << o) for o in range(len(tdwa.outcomes))}
    index: dict[tuple[int, Written], int] = {(0, ()): nfa.start}
    todo = [(0, ())]

    def position(trie_node: int, written: Written) -> int:
        key = (trie_node, written)
        nfa_node = index.get(key)
        if nfa_node is None:
            nfa_node = index[key] = nfa.add_node()
            todo.append(key)
            if len(nfa.accepted) > MAX_NFA_NODES:
                raise LimitExceeded("max_nfa_nodes", MAX_NFA_NODES, "parser DWA splice")
        return nfa_node

    while todo:
        trie_node, written = todo.pop()
        source = index[(trie_node, written)]
        for outcome_id in outcomes_at.get(trie_node, ()):
            final = tdwa.outcomes[outcome_id].final
            finals = (end_terminal,) if final == FINAL_END else term_sets[final]
            for terminal in finals:
                if terminal in ignored:
                    nfa.add_epsilon(source, accept[outcome_id])
                    continue
                for effect in by_terminal[terminal].candidates(written):
                    applied = apply_effect(written, effect)
                    if applied is not None:
                        nfa.connect(source, _strip_any(applied[0]), accept[outcome_id])
        for child in children.get(trie_node, ()):
            for terminal in term_sets[int(tdwa.trie_set[child])]:
                if terminal in ignored:
                    nfa.add_epsilon(source, position(child, written))
                    continue
                for effect in by_terminal[terminal].candidates(written):
                    applied = apply_effect(written, effect)
                    if applied is not None:
                        reads, new_written = applied
                        nfa.connect(source, reads, position(child, new_written))
    return nfa
