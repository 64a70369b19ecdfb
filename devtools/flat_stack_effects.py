"""Every terminal's stack effects as a flat list: the oracle for the compiler's effect graphs.

glrmask_cli.parser.stack_effects builds each terminal's effects as a shared DAG (`build_effect_graphs`).
This runs the same symbolic LR exploration (its `_Explorer`: the decoded action cells and `successors`)
one configuration at a time and lists every effect, sorted and deduplicated. The list can be
exponentially larger than the graph (deep precedence chains: sql.lark, python.lark), so only the
tests (tests/unit/parser/test_stack_effects.py) and the stage benchmark (bench/parser_bench.py) use it.
Exploration is bounded per terminal by `max_configs` and MAX_READ_DEPTH (LimitExceeded: un-normalized
input, e.g. right recursion, would not terminate).
"""

from __future__ import annotations

from dataclasses import dataclass

from glrmask_cli.errors import LimitExceeded
from glrmask_cli.parser.stack_effects import DEFAULT_MAX_CONFIGS, MAX_READ_DEPTH, StackEffect, _Explorer
from glrmask_runtime.tables import ACCEPT, SHIFT, LRTables


@dataclass(frozen=True)
class StackEffects:
    by_terminal: tuple[tuple[StackEffect, ...], ...]  # index = terminal id (END: effects reaching ACCEPT, writes=())
    max_read_depth: int


def build_stack_effects(tables: LRTables, max_configs: int = DEFAULT_MAX_CONFIGS) -> StackEffects:
    """Every terminal's stack effects, sorted and deduplicated."""
    explorer = _Explorer(tables)
    by_terminal = tuple(tuple(sorted(_effects_of(explorer, t, max_configs))) for t in range(tables.n_terminals))
    depth = max((len(e.reads) for effects in by_terminal for e in effects), default=0)
    return StackEffects(by_terminal, depth)


def _effects_of(explorer: _Explorer, t: int, max_configs: int) -> set[StackEffect]:
    readers = explorer.states_with_action[t]
    effects: set[StackEffect] = set()
    seen: set[tuple] = set()
    explored = 0
    todo = [((p,), 0, ()) for p in reversed(readers)]
    while todo:
        config = todo.pop()
        if config in seen:
            continue
        seen.add(config)
        explored += 1
        if explored > max_configs:
            raise LimitExceeded("max_configs", max_configs, "stack effects",
                                f"terminal {t}'s reductions branch into too many stack effects")
        if len(config[0]) > MAX_READ_DEPTH:
            raise LimitExceeded("max_read_depth", MAX_READ_DEPTH, "stack effects",
                                "reductions do not terminate: is the grammar normalized (no right recursion)?")
        _step(explorer, config, t, effects, todo)
    return effects


def _step(explorer: _Explorer, config: tuple, t: int, effects: set[StackEffect], todo: list) -> None:
    reads, popped, writes = config
    top = writes[-1] if writes else reads[popped]
    for kind, arg, length in explorer.cell(top, t):
        if kind == SHIFT:
            effects.add(StackEffect(reads, writes + (arg,)))
        elif kind == ACCEPT:
            effects.add(StackEffect(reads, ()))
        else:
            todo.extend(explorer.successors(reads, popped, writes, arg, length))
