"""Stage 6a: splice stack effects into the Terminal DWA's paths -> read prefixes per outcome.

Input: the Terminal DWA (closed-lexeme trie + outcomes) and each terminal's stack effects. Output: for
every outcome, the set of old-stack read prefixes (top first, ANY = popped unseen) from which the
parser can consume the outcome's lexemes and then shift one terminal the open lexeme can become.

A configuration (R, W) describes the stack after some lexemes: R = the old-stack positions consumed so
far (top first; an effect consumes what it reads and writes back what stays, so R is also what was
read), W = states written above the untouched rest of the old stack (top last). Composing with an effect (reads u, writes z) cancels writes
against reads (mismatch kills the branch) and reads past W into the old stack (DESIGN 3a).
"""

from __future__ import annotations

from typing import Iterable

from glrmask_cli.errors import LimitExceeded
from glrmask_cli.parser.stack_effects import ANY, StackEffect, StackEffects
from glrmask_cli.terminal_dwa import FINAL_END, TerminalDWA

Config = tuple[tuple[int, ...], tuple[int, ...]]
ROOT_CONFIG: Config = ((), ())
MAX_CONFIGS_PER_NODE = 200_000


def compose(config: Config, effect: StackEffect) -> Config | None:
    """Apply one stack effect to a configuration; None if a read contradicts a written state."""
    reads, written = config
    depth = len(written)
    n_reads = len(effect.reads)
    for j in range(min(n_reads, depth)):
        label = effect.reads[j]
        if label != ANY and label != written[depth - 1 - j]:
            return None
    if n_reads <= depth:
        return reads, written[:depth - n_reads] + effect.writes
    return reads + effect.reads[depth:], effect.writes


def consuming_effects(effects: StackEffects) -> tuple[tuple[StackEffect, ...], ...]:
    """Rewrite each effect so that it consumes everything it reads (`compose`'s convention).

    `StackEffects` keep the deepest read state on the stack; here it is popped and written back.
    """
    return tuple(tuple(StackEffect(e.reads, e.reads[-1:] + e.writes) for e in terminal_effects)
                 for terminal_effects in effects.by_terminal)


def consume(configs: Iterable[Config], terminals: Iterable[int],
            by_terminal: tuple[tuple[StackEffect, ...], ...], ignored: frozenset[int]) -> frozenset[Config]:
    """All configurations after one closed lexeme whose terminal set is `terminals`."""
    terminals = tuple(terminals)
    result: set[Config] = set()
    for config in configs:
        for terminal in terminals:
            if terminal in ignored:
                result.add(config)
                continue
            for effect in by_terminal[terminal]:
                composed = compose(config, effect)
                if composed is not None:
                    result.add(composed)
    return frozenset(result)


def _strip(reads: tuple[int, ...]) -> tuple[int, ...]:
    end = len(reads)
    while end and reads[end - 1] == ANY:
        end -= 1
    return reads[:end]


class ReadPrefixes:
    """Lazily computes configurations per trie node and read prefixes per outcome."""

    def __init__(self, tdwa: TerminalDWA, term_sets: list[tuple[int, ...]], effects: StackEffects,
                 ignored: frozenset[int], end_terminal: int):
        self.tdwa = tdwa
        self.term_sets = term_sets
        self.by_terminal = consuming_effects(effects)
        self.ignored = ignored
        self.end_terminal = end_terminal
        self._configs: dict[int, frozenset[Config]] = {0: frozenset([ROOT_CONFIG])}

    def configs(self, node: int) -> frozenset[Config]:
        cached = self._configs.get(node)
        if cached is not None:
            return cached
        chain = []
        while node not in self._configs:
            chain.append(node)
            node = int(self.tdwa.trie_parent[node])
        configs = self._configs[node]
        for child in reversed(chain):
            term_set = self.term_sets[int(self.tdwa.trie_set[child])]
            configs = consume(configs, term_set, self.by_terminal, self.ignored)
            if len(configs) > MAX_CONFIGS_PER_NODE:
                raise LimitExceeded("max_configs_per_node", MAX_CONFIGS_PER_NODE, "parser DWA",
                                    "the grammar is too ambiguous for one token's lexemes")
            self._configs[child] = configs
        return configs

    def of_outcome(self, outcome_id: int) -> frozenset[tuple[int, ...]]:
        """The read prefixes (top first) from which this outcome's token can be consumed."""
        outcome = self.tdwa.outcomes[outcome_id]
        configs = self.configs(outcome.node)
        if not configs:
            return frozenset()
        finals = (self.end_terminal,) if outcome.final == FINAL_END else self.term_sets[outcome.final]
        prefixes: set[tuple[int, ...]] = set()
        for terminal in finals:
            if terminal in self.ignored:
                prefixes.update(_strip(config[0]) for config in configs)
                continue
            for config in configs:
                for effect in self.by_terminal[terminal]:
                    composed = compose(config, effect)
                    if composed is not None:
                        prefixes.add(_strip(composed[0]))
        return frozenset(prefixes)
