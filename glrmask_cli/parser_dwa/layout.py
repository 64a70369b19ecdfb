"""Stage 7 (policy): the Parser DWA layouts; `build_parser_dwa` builds one of them.

- "one": one automaton for every outcome; a mask is one walk and one row (json, lark.lark, verilog).
- "runtime-close": tokens whose first byte cannot extend the open lexeme get no outcome; the runtime
  closes that lexeme on the real stack and asks the DWA from START (terminal_dwa.py). On deep
  grammars this removes most outcomes (python eval_input x gpt2: 24,458 -> about 1,000).
- "grouped": runtime-close plus one automaton per first closed lexeme (groups.py), walked only from
  tops that can take that lexeme; a group that is still too large is split by its next lexeme, and
  the smallest groups are merged back into one automaton when that stays small (fewer walks).
"auto" (pipeline.py tries the layouts in AUTO_ORDER) takes the first layout whose read NFA and subset
construction stay within their budgets (max_nfa_nodes_auto for "one", max_nfa_nodes_close_auto for
"runtime-close", max_dwa_states_auto; the last one within max_nfa_nodes and max_dwa_states). Every
layout gives the same masks. This module builds one given layout; the pipeline owns the order and
the fallback.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np

from glrmask_cli.errors import LimitExceeded
from glrmask_cli.forks import available_jobs
from glrmask_cli.limits import DEFAULTS
from glrmask_cli.parser.stack_effects import EffectGraph
from glrmask_cli.parser_dwa.determinize import ParserDWA, Part, StatePool
from glrmask_cli.parser_dwa.groups import Group, by_first_lexeme, gate, split, walk_roots, whole
from glrmask_cli.parser_dwa.splice import EffectIndex, TrieIndex, build_read_nfa
from glrmask_cli.parser_dwa.workers import Built, GroupBuilds, Task
from glrmask_cli.progress import NO_PROGRESS, Progress, Ticker
from glrmask_cli.ragged import row_positions
from glrmask_cli.terminal_dwa import TerminalDWA
from glrmask_runtime.tables import LRTables

Layout = Literal["auto", "one", "runtime-close", "grouped"]
AUTO_ORDER: tuple[Layout, ...] = ("one", "runtime-close", "grouped")


def closes_at_runtime(layout: Layout) -> bool:
    """Whether the layout's Terminal DWA leaves closing tokens to the runtime (terminal_dwa.py)."""
    return layout != "one"


@dataclass(frozen=True)
class ParserDWABuild:
    layout: Layout
    terminal_dwa: TerminalDWA
    dwa: ParserDWA
    groups: tuple[Group, ...]
    walk_roots: tuple[np.ndarray, np.ndarray]    # CSR: LR state -> DWA roots (groups.walk_roots)


def build_parser_dwa(layout: Layout, tdwa: TerminalDWA, term_sets: Sequence[tuple[int, ...]],
                     ignored: frozenset[int], effects: Sequence[EffectGraph], lr: LRTables, *,
                     state_class: np.ndarray | None = None, max_nfa_nodes: int = DEFAULTS.max_nfa_nodes,
                     max_dwa_states: int = DEFAULTS.max_dwa_states,
                     max_merged_states: int = DEFAULTS.max_merged_states,
                     max_cumulative_states: int = DEFAULTS.max_cumulative_states, index: EffectIndex | None = None,
                     progress: Progress = NO_PROGRESS, start_of: Sequence[int] | None = None,
                     jobs: int | None = None) -> ParserDWABuild:
    """Splice stack effects into the outcomes of `tdwa` (built with `closes_at_runtime(layout)`),
    determinize and minimize, in one layout (not "auto"; see the module docstring). `term_sets[i]`:
    the terminals of the term set id i that `tdwa`'s trie sets and finals name; `ignored`: the
    %ignore'd terminals; `lr`: the tables the effects were explored on. With `state_class` (the
    real LR state -> state of `lr`, parser/quotient.py) the result reads real LR states. Each group's
    read NFA may have `max_nfa_nodes` nodes and its subset construction `max_dwa_states` states
    (LimitExceeded past them; "grouped" first splits a group that is too large); past
    `max_cumulative_states` states a group's states emit what they accepted (determinize.py). `index`:
    `EffectIndex(effects)` (pass it when building several layouts). `progress` counts groups.
    `start_of`: per state of `lr`, the START of its lexer context (lark's contextual lexer; None: basic).
    `jobs`: processes that build the grouped layout's groups (workers.py; default: the CPUs available)."""
    if layout not in AUTO_ORDER:
        raise ValueError(f"build_parser_dwa builds one layout of {AUTO_ORDER}, not {layout!r}")
    term_sets = list(term_sets)
    has_action = (np.diff(lr.action_offsets) > 0).reshape(lr.n_states, lr.n_terminals)
    index = index if index is not None else EffectIndex(effects)
    pool = StatePool()      # the groups' states, shared; one automaton at the end
    trie = TrieIndex(tdwa, term_sets)
    task = _group_task(tdwa, term_sets, effects, has_action, ignored, lr.end_terminal, index, trie,
                       max_nfa_nodes, max_cumulative_states, start_of)
    if layout == "grouped":
        ticker = Ticker(progress, 0, "groups")
        with GroupBuilds(task, jobs if jobs is not None else available_jobs()) as builds:
            groups, parts = _live(*_grouped(tdwa, builds, max_dwa_states, ticker, pool), pool)
        gates = [gate(group, tdwa, term_sets, ignored, has_action) for group in groups]
        groups, parts = _merge_small(groups, parts, pool, max_merged_states, gates)
    else:
        ticker = Ticker(progress, 1, "groups")
        groups = whole(tdwa)
        parts = [pool.absorb(*task(groups[0], max_dwa_states))]
        ticker.advance()
        ticker.note(f"{len(pool.signatures):,} states")
    ticker.close()
    dwa = pool.dwa([part.root for part in parts])
    roots = walk_roots(dwa, groups, tdwa, term_sets, ignored, has_action)
    if state_class is not None:
        dwa, roots = dwa.relabel(state_class), _per_real_state(roots, state_class)
    return ParserDWABuild(layout, tdwa, dwa, tuple(groups), roots)


def _per_real_state(roots: tuple[np.ndarray, np.ndarray], state_class: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Walk roots per state of the quotient (CSR) -> per real LR state: those of its class."""
    offsets, flat = roots
    counts = np.diff(offsets)[state_class]
    real_offsets = np.zeros(len(state_class) + 1, dtype=np.int64)
    real_offsets[1:] = np.cumsum(counts)
    return real_offsets, flat[row_positions(offsets[state_class], counts)]


def _group_task(tdwa: TerminalDWA, term_sets: list[tuple[int, ...]], effects: Sequence[EffectGraph],
                has_action: np.ndarray, ignored: frozenset[int], end_terminal: int, index: EffectIndex,
                trie: TrieIndex, max_nfa_nodes: int, cumulative_states: int,
                start_of: Sequence[int] | None) -> Task:
    """`task(group, max_states)`: one group's read NFA (at most `max_nfa_nodes` nodes), determinized
    (at most `max_states` states) into a pool of its own: (that pool's states, the group's part)."""
    def task(group: Group, max_states: int) -> Built:
        own = StatePool()
        nfa = build_read_nfa(tdwa, term_sets, effects, has_action, ignored, end_terminal, group, max_nfa_nodes,
                             index, trie, start_of)
        part = own.add_group(nfa, max_states, cumulative_states)
        return own.signatures, part
    return task


def _live(groups: list[Group], parts: list[Part], pool: StatePool) -> tuple[list[Group], list[Part]]:
    """The groups whose automaton accepts something (java.lark x cl100k: half of them accept
    nothing, e.g. a string literal followed by an opening parenthesis); at least one."""
    live = [i for i, part in enumerate(parts) if not pool.accepts_nothing(part.root)] or [0]
    return [groups[i] for i in live], [parts[i] for i in live]


def _merge_small(groups: list[Group], parts: list[Part], pool: StatePool, max_merged_states: int,
                 gates: list[np.ndarray]) -> tuple[list[Group], list[Part]]:
    """Fewer walks per mask: the smallest groups, `max_merged_states` states together at most, are
    merged into as few groups as possible, each of whose automaton (their automata walked in step,
    `StatePool.add_union`) stays within twice their total (they mostly read the stack in step;
    python eval_input x gpt2: the 52 smallest of 65 groups, 20,420 states apart, 10,051 together).
    Groups are walked together only from tops both are gated at (`gates`), so the chosen groups are
    ordered so that each follows the one whose gate is most like its own (a merge of groups walked
    from the same tops saves walks and reads the stack alike); a run of groups whose union is too
    large is halved until it fits."""
    order = sorted(range(len(groups)), key=lambda i: (parts[i].n_states, i))
    chosen, total = [], 0
    for i in order:
        if total + parts[i].n_states > max_merged_states:
            break
        chosen.append(i)
        total += parts[i].n_states
    chosen = _by_likeness(chosen, gates)
    merged_groups, merged_parts, done = [], [], set()
    start = 0
    while len(chosen) - start >= 2:
        size = len(chosen) - start
        part = None
        while size >= 2 and part is None:
            try:
                part = pool.add_union([parts[i].root for i in chosen[start:start + size]],
                                      2 * sum(parts[i].n_states for i in chosen[start:start + size]))
            except LimitExceeded:
                size //= 2
        if part is None:            # the smallest left merges with nothing: it stays a group
            start += 1
            continue
        run = chosen[start:start + size]
        merged_groups.append(Group(frozenset().union(*(groups[i].subtrees for i in run)),
                                   frozenset().union(*(groups[i].exact for i in run))))
        merged_parts.append(part)
        done.update(run)
        start += size
    rest = [i for i in range(len(groups)) if i not in done]
    return merged_groups + [groups[i] for i in rest], merged_parts + [parts[i] for i in rest]


def _by_likeness(chosen: list[int], gates: list[np.ndarray]) -> list[int]:
    """`chosen` as a chain, each next the one left whose gate overlaps the last one's most
    (Jaccard), starting from the first."""
    if len(chosen) < 3:
        return chosen
    vectors = np.stack([gates[i] for i in chosen]).astype(np.float32)
    common = vectors @ vectors.T
    sizes = vectors.sum(axis=1)
    likeness = common / np.maximum(sizes[:, None] + sizes[None, :] - common, 1)
    chain, left = [0], set(range(1, len(chosen)))
    while left:
        last = chain[-1]
        best = max(sorted(left), key=lambda j: likeness[last, j])
        chain.append(best)
        left.remove(best)
    return [chosen[i] for i in chain]


def _grouped(tdwa: TerminalDWA, builds: GroupBuilds, max_states: int, ticker: Ticker,
             pool: StatePool) -> tuple[list[Group], list[Part]]:
    """One group per first closed lexeme; a group too large to build is split by its next lexeme
    (groups.split), again if needed. LimitExceeded if a group that cannot be split is too large.
    Results are added to `pool` in the groups' order (a split group's parts take its place), so the
    pool does not depend on which build finishes first. Every group is submitted at once, the next
    one first: a long group holds one job while the others build the rest (a finished group's
    states, minimized, wait in the parent's memory until their turn: at most the layout's pool;
    sympy latex.lark x cl100k: its largest group, 222k states, takes about 160 s, in which the other
    job builds the other 79)."""
    groups, parts = [], []
    todo = list(reversed(by_first_lexeme(tdwa)))       # a stack: the next group last
    futures = [builds.submit(group, max_states) for group in reversed(todo)][::-1]   # todo's order
    known = len(todo)
    ticker.total(known, "groups")
    while todo:
        group, future = todo.pop(), futures.pop()
        try:
            parts.append(pool.absorb(*builds.result(future)))
            groups.append(group)
        except LimitExceeded:
            smaller = split(tdwa, group)
            if smaller is None:
                raise
            todo.extend(reversed(smaller))
            futures.extend(reversed([builds.submit(part, max_states) for part in smaller]))
            known += len(smaller) - 1
            ticker.total(known, "groups")
            continue
        ticker.note(f"{len(pool.signatures):,} states")
        ticker.advance()
    return groups, parts
