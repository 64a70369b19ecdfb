"""Every size limit of the compiler, in one place: `BuildLimits`.

The pipeline (pipeline.py) passes a `BuildLimits` down; stages take the values they need as
parameters (the defaults of those parameters are `DEFAULTS`, for callers outside the pipeline).
A limit's name is the same string in `BuildLimits`, in `glrmask build --limit NAME=VALUE` and in
the `LimitExceeded` it raises. Most limits stop a build that would take too long or too much memory
(the error names the limit and how to raise it); a few are thresholds of a policy and never raise
(`max_rhs_length`, the `*_auto` budgets, `max_merged_states`, `max_cumulative_states`). docs/ARCHITECTURE.md ("Build
limits") has the table.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Iterable


def _limit(default: int, stage: str, doc: str, minimum: int = 1) -> Any:
    return field(default=default, metadata={"stage": stage, "doc": doc, "minimum": minimum})


@dataclass(frozen=True)
class BuildLimits:
    """The size limits of one build; `BuildLimits()` is the default (see each field's doc)."""

    max_pattern_nfa_states: int = _limit(
        200_000, "lexer",
        "NFA states of one terminal's pattern (Thompson construction); bounded repeats such as "
        "x{1000} multiply states, and each state is determinized in Python")
    max_pattern_dfa_states: int = _limit(
        50_000, "lexer",
        "DFA states of one terminal before minimization; real terminals need at most a few hundred, "
        "more means a pattern whose subset construction explodes")
    max_lexer_states: int = _limit(
        1_000_000, "lexer",
        "states of the combined lexer DFA (all terminals, before minimization); every lexer state "
        "is scanned by every token class in the Terminal DWA, so large values are slow there")
    max_rhs_length: int = _limit(
        3, "normalize",
        "right-hand sides longer than this are cut into left-nested helper rules at the same "
        "places in every rule that begins alike (not an error; at least 2); shorter rules keep "
        "the stack effects and the Parser DWA small", minimum=2)
    max_normalized_symbols: int = _limit(
        2_000_000, "normalize",
        "right-hand-side symbols after right-recursion removal; the rewrite can grow a grammar "
        "quadratically, and this stops it long before the LR construction would run out of memory")
    max_epsilon_variants: int = _limit(
        4096, "normalize",
        "copies of one rule made by epsilon removal (2^k for k nullable symbols); 12 optional "
        "parts in one rule, far more than real grammars have")
    max_effect_graph_nodes: int = _limit(
        1_000_000, "stack effects",
        "nodes of one terminal's stack-effect graph (memory: sympy's latex.lark has 7.7M nodes over "
        "its 99 terminals in about 1 GB)")
    max_read_depth: int = _limit(
        256, "stack effects",
        "old-stack states one terminal's stack effect may read; normalization makes it finite "
        "(json: 9), so a value near this means a runaway grammar")
    max_nfa_nodes: int = _limit(
        4_000_000, "parser DWA",
        "read-NFA nodes of one Parser DWA group (in every layout tried; earlier auto tries stop at "
        "the smaller _auto budget); python eval_input x gpt2 needs at most 0.4M per first-lexeme "
        "group, go.lark x cl100k 2.2M (at 2M its groups were split again and again, 26 s per try)")
    max_dwa_states: int = _limit(
        500_000, "parser DWA",
        "subset-construction states of one Parser DWA group (in every layout tried; in the grouped "
        "layout a group past this or max_nfa_nodes is split by its next lexeme if it can be)")
    max_token_paths: int = _limit(
        100_000, "terminal DWA",
        "ways one token splits into lexemes, with the contexts each lexeme hands over to, read from "
        "one lexer state (the contextual lexer: a closed lexeme hands over to every context its "
        "terminal is shifted into that lexes the rest differently, so a run of short lexemes can "
        "multiply them; the largest measured: a third of the MaskBench schemas x Llama-3 241, syncode's "
        "sql.lark and go.lark x cl100k 97, python eval_input x gpt2 61)")
    max_outcomes_auto: int = _limit(
        20_000, "terminal DWA",
        "--layout auto: token outcomes the 'one' layout may have (it spells out every close: a read-NFA "
        "node and a bit in every state's set per outcome) before auto tries the next layout (not an "
        "error; the largest 'one' measured: lark.lark x Llama-3, 4.3k; python eval_input x cl100k has "
        "34k and its 'one' try fails at max_nfa_nodes_auto after 8 s)")
    max_nfa_nodes_auto: int = _limit(
        150_000, "parser DWA",
        "--layout auto: read-NFA nodes the 'one' try may use before auto tries the next layout (not an "
        "error; verilog x cl100k, the largest 'one' so far, needs 72k, lark.lark x cl100k 56k; a failed "
        "try costs about 1 s per 40k nodes: at 400k go x gpt2's 'one' try took 10.5 s of a 32 s build)")
    max_nfa_nodes_close_auto: int = _limit(
        20_000, "parser DWA",
        "--layout auto: read-NFA nodes the 'runtime-close' try may use before auto builds the grouped "
        "layout (not an error; the largest 'runtime-close' of the exactness matrix, lark.lark with the "
        "basic lexer x cl100k, Llama-3 or Qwen, needs 12.4k, keywords 2.9k; where it does not fit, a try "
        "stopped at 150k cost sql, go, java and python eval x gpt2 2.5-4 s of their builds and latex 13 s)")
    max_dwa_states_auto: int = _limit(
        200_000, "parser DWA",
        "--layout auto: subset states a layout other than the last may use before auto tries the "
        "next layout (not an error; verilog x cl100k, the largest 'one' so far: 24k states)")
    max_cumulative_states: int = _limit(
        20_000, "parser DWA",
        "states of one group's automaton that carry everything accepted so far to the end of the "
        "walk (one row per walk); past this, a state whose read-NFA subset recurs with another "
        "accepted set emits it (the walk ORs the rows of the states it passes that emit) and its "
        "successors start afresh, so the states follow the subsets (not an error; 0: from the "
        "first state; sql.lark x cl100k: 440k states in one group without it, 4k with it)", minimum=0)
    max_merged_states: int = _limit(
        20_000, "parser DWA",
        "grouped layout: the smallest groups, this many states together at most, are merged into "
        "one automaton (fewer walks per mask; not an error; 0 merges nothing)", minimum=0)

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"limit {f.name} must be an integer, got {value!r}")
            if value < f.metadata["minimum"]:
                raise ValueError(f"limit {f.name} must be at least {f.metadata['minimum']}, got {value}")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    def with_assignments(self, assignments: Iterable[str]) -> BuildLimits:
        """These limits with `NAME=VALUE` assignments applied (later ones win). ValueError for an
        unknown name (the message lists the valid ones) or a value that is not a valid integer."""
        changes: dict[str, int] = {}
        for text in assignments:
            name, sep, value = text.partition("=")
            name = name.strip()
            if not sep:
                raise ValueError(f"expected NAME=VALUE, got {text!r}; names: {', '.join(self.names())}")
            if name not in self.names():
                raise ValueError(f"unknown limit {name!r}; names: {', '.join(self.names())}")
            try:
                changes[name] = int(value.strip())
            except ValueError:
                raise ValueError(f"limit {name} must be an integer, got {value!r}") from None
        return dataclasses.replace(self, **changes)


def describe() -> list[tuple[str, int, str, str]]:
    """(name, default, stage, doc) of every limit, in field order."""
    return [(f.name, f.default, f.metadata["stage"], f.metadata["doc"])   # type: ignore[misc]
            for f in dataclasses.fields(BuildLimits)]


DEFAULTS = BuildLimits()
