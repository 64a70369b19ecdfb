"""Stage 6 (policy): which Parser DWA layout an artifact gets, trying the fastest first.

- "one": one automaton for every outcome; a mask is one walk and one row (json, lark.lark, verilog).
- "runtime-close": tokens whose first byte cannot extend the open lexeme get no outcome; the runtime
  closes that lexeme on the real stack and asks the DWA from START (terminal_dwa.py). On deep
  grammars this removes most outcomes (python eval_input x gpt2: 24,458 -> about 1,000).
- "grouped": runtime-close plus one automaton per first closed lexeme (groups.py), walked only from
  tops that can take that lexeme; a group that is still too large is split by its next lexeme, and
  the smallest groups are merged back into one automaton when that stays small (fewer walks).
"auto" takes the first layout whose read NFA and subset construction stay within WHOLE_NFA_BUDGET
and WHOLE_DWA_BUDGET (the last one without them). Every layout gives the same masks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal, Sequence

import numpy as np

from glrmask_cli.errors import LimitExceeded
from glrmask_cli.parser.stack_effects import EffectGraph
from glrmask_cli.parser_dwa.determinize import MAX_DWA_STATES, ParserDWA, Part, StatePool
from glrmask_cli.parser_dwa.groups import Group, by_first_lexeme, split, walk_roots, whole
from glrmask_cli.parser_dwa.splice import MAX_NFA_NODES, EffectIndex, build_read_nfa, index_effects
from glrmask_cli.terminal_dwa import TerminalDWA
from glrmask_runtime.tables import LexerTables, LRTables

Layout = Literal["auto", "one", "runtime-close", "grouped"]
AUTO_ORDER: tuple[Layout, ...] = ("one", "runtime-close", "grouped")
WHOLE_NFA_BUDGET = 400_000   # read-NFA nodes "auto" allows a layout before trying the next one
WHOLE_DWA_BUDGET = 200_000   # and subset states (verilog x cl100k, the largest "one" so far: 24k states)
MERGE_STATES = 20_000        # grouped: the small groups merged into one automaton, states before merging


@dataclass(frozen=True)
class ParserDWABuild:
    layout: Layout
    terminal_dwa: TerminalDWA
    dwa: ParserDWA
    groups: tuple[Group, ...]
    walk_roots: tuple[np.ndarray, np.ndarray]    # CSR: LR state -> DWA roots (groups.walk_roots)


def build_parser_dwa(terminal_dwa: Callable[[bool], TerminalDWA], lexer: LexerTables,
                     effects: Sequence[EffectGraph], lr: LRTables, layout: Layout = "auto") -> ParserDWABuild:
    """Splice stack effects into the outcomes, determinize and minimize, in the given layout (see the
    module docstring). `terminal_dwa(close_at_runtime)` builds (or returns) the Terminal DWA."""
    term_sets = [lexer.term_set(i) for i in range(lexer.n_term_sets)]
    ignored = frozenset(int(t) for t in lexer.ignored)
    has_action = (np.diff(lr.action_offsets) > 0).reshape(lr.n_states, lr.n_terminals)
    tried = AUTO_ORDER if layout == "auto" else (layout,)
    index = index_effects(effects)     # once, not per group

    for name in tried:
        tdwa = terminal_dwa(name != "one")
        last = name == tried[-1]
        pool = StatePool()      # the groups' states, shared; one automaton at the end
        group_dwa = _group_builder(pool, term_sets, effects, has_action, ignored, lr.end_terminal, index)

        try:
            if name == "grouped":
                groups, parts = _merge_small(tdwa, *_grouped(tdwa, group_dwa), group_dwa)
            else:
                groups = whole(tdwa)
                parts = [group_dwa(tdwa, groups[0], *((MAX_NFA_NODES, MAX_DWA_STATES) if last
                                                      else (WHOLE_NFA_BUDGET, WHOLE_DWA_BUDGET)))]
        except LimitExceeded:
            if last:
                raise
            continue
        dwa = pool.dwa([part.root for part in parts])
        return ParserDWABuild(name, tdwa, dwa, tuple(groups),
                              walk_roots(dwa, groups, tdwa, term_sets, ignored, has_action))
    raise AssertionError("unreachable: the last layout either returns or raises")


def _group_builder(pool: StatePool, term_sets: list[tuple[int, ...]], effects: Sequence[EffectGraph],
                   has_action: np.ndarray, ignored: frozenset[int], end_terminal: int,
                   index: EffectIndex) -> Callable[..., Part]:
    """`group_dwa(tdwa, group, budget, max_states)`: one group's read NFA, determinized into `pool`."""
    def group_dwa(tdwa: TerminalDWA, group: Group, budget: int, max_states: int = MAX_DWA_STATES) -> Part:
        return pool.add_group(build_read_nfa(tdwa, term_sets, effects, has_action, ignored, end_terminal,
                                             group, budget, index), max_states)
    return group_dwa


def _merge_small(tdwa: TerminalDWA, groups: list[Group], parts: list[Part],
                 group_dwa) -> tuple[list[Group], list[Part]]:
    """Fewer walks per mask: the smallest groups, MERGE_STATES states together at most, become one
    group if its automaton stays within twice their total (they mostly read the stack in step;
    python eval_input x gpt2: the 52 smallest of 65 groups, 20,420 states apart, 10,051 together)."""
    order = sorted(range(len(groups)), key=lambda i: (parts[i].n_states, i))
    chosen, total = [], 0
    for i in order:
        if total + parts[i].n_states > MERGE_STATES:
            break
        chosen.append(i)
        total += parts[i].n_states
    if len(chosen) < 2:
        return groups, parts
    union = Group(frozenset().union(*(groups[i].subtrees for i in chosen)),
                  frozenset().union(*(groups[i].exact for i in chosen)))
    try:
        merged = group_dwa(tdwa, union, MAX_NFA_NODES, 2 * total)
    except LimitExceeded:
        return groups, parts
    rest = [i for i in range(len(groups)) if i not in set(chosen)]
    return [union] + [groups[i] for i in rest], [merged] + [parts[i] for i in rest]


def _grouped(tdwa: TerminalDWA, group_dwa) -> tuple[list[Group], list[Part]]:
    """One group per first closed lexeme; a group too large to build is split by its next lexeme
    (groups.split), again if needed. LimitExceeded if a group that cannot be split is too large."""
    groups, parts = [], []
    todo = list(reversed(by_first_lexeme(tdwa)))
    while todo:
        group = todo.pop()
        try:
            parts.append(group_dwa(tdwa, group, MAX_NFA_NODES))
            groups.append(group)
        except LimitExceeded:
            smaller = split(tdwa, group)
            if smaller is None:
                raise
            todo.extend(reversed(smaller))
    return groups, parts
