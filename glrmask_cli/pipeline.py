"""The compile pipeline: the only module that knows the order of the stages (`STAGES`).

grammar -> lexer -> parser (BNF, normalization, LR tables) -> stack effects -> vocabulary ->
Terminal DWA -> Parser DWA (splice, determinize, minimize) -> rows -> artifact.
`compile_front_end` runs the stages up to the LR tables (`glrmask check` needs no more);
`compile_grammar` runs it and the rest up to the row pool; `build_artifact` also writes the file.
The pipeline passes the limits (`BuildLimits`) and the progress reporter down to the stages, and
owns the "auto" layout choice: it builds the Terminal DWA each layout needs and the Parser DWA of one
layout at a time, falling back to the next layout when a limit is hit.
"""

from __future__ import annotations

import dataclasses
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from glrmask_cli import __version__
from glrmask_cli.collector import paced
from glrmask_cli.errors import LimitExceeded, TokenizerError
from glrmask_cli.forks import available_jobs
from glrmask_cli.grammar import GrammarSpec, load_grammar
from glrmask_cli.lexer.contextual import ContextualLexer, build_contextual_lexer
from glrmask_cli.lexer.contextual import unproduced_warnings as contextual_unproduced
from glrmask_cli.lexer.scanner import LexerBuild, boundary_warnings, build_lexer, compile_terminals
from glrmask_cli.lexer_option import DEFAULT_LEXER, LexerKind
from glrmask_cli.limits import DEFAULTS, BuildLimits
from glrmask_cli.output import write_output
from glrmask_cli.parser.cfg import build_cfg
from glrmask_cli.parser.lark_lalr import shift_preferred, shift_preferred_warnings
from glrmask_cli.parser.lr import LRBuild, build_lr, terminal_followers
from glrmask_cli.parser.normalize import NormalizedGrammar, normalize
from glrmask_cli.parser.quotient import LRQuotient, quotient
from glrmask_cli.parser.stack_effects import EffectGraph, build_effect_graphs, max_read_depth
from glrmask_cli.parser_dwa.layout import AUTO_ORDER, Layout, ParserDWABuild, build_parser_dwa, closes_at_runtime
from glrmask_cli.parser_dwa.rows import RowPool, build_rows
from glrmask_cli.parser_dwa.splice import EffectIndex
from glrmask_cli.progress import NO_PROGRESS, Progress
from glrmask_cli.terminal_dwa import (
    LexerContexts,
    TerminalDWA,
    build_terminal_dwa,
    lexer_contexts,
    merge_terminals,
    spell_out_closes,
)
from glrmask_cli.vocab.registry import load_vocabulary
from glrmask_cli.vocab.vocabulary import Vocabulary
from glrmask_runtime.artifact import ARTIFACT_KIND
from glrmask_runtime.format import encode_container
from glrmask_runtime.tables import LexerTables, LRTables

# The stages in order, as `Progress.stage` and `Compiled.timings` name them.
# "lexer contexts" (lark's contextual lexer, which needs the parser's states) only with --lexer contextual.
STAGES = ("grammar", "lexer", "parser", "lexer contexts", "stack effects", "vocabulary", "terminal DWA",
          "parser DWA", "rows", "artifact")


@dataclass
class Compiled:
    """Every stage's product, in memory."""

    grammar: GrammarSpec
    lexer: LexerTables
    lexer_warnings: tuple[str, ...]
    normalized: NormalizedGrammar
    lr: LRTables
    conflicts: int
    effects: tuple[EffectGraph, ...]                          # over the quotient's states and terminals
    vocab: Vocabulary
    terminal_dwa: TerminalDWA
    parser_dwa: ParserDWABuild
    rows: RowPool
    timings: dict[str, float] = field(default_factory=dict)   # seconds per stage (STAGES)
    read_depth: int = 0                                       # stack_effects.max_read_depth(effects)
    limits: BuildLimits = DEFAULTS
    lr_cores: tuple[str, ...] = ()                            # per LR state: its kernel items, readable
    limits_reached: tuple[str, ...] = ()                      # auto layout tries that hit a budget
    contextual: ContextualLexer | None = None                 # lark's contextual lexer (`lexer` is its DFA)
    quotient: LRQuotient | None = None                        # the LR automaton the Parser DWA reads
    parser_warnings: tuple[str, ...] = ()                     # where lark's LALR parser accepts less


@dataclass(frozen=True)
class FrontEnd:
    """The stages up to the LR tables."""

    grammar: GrammarSpec
    lexer: LexerBuild | None                    # lark's basic lexer; None when the contextual one is asked for
    normalized: NormalizedGrammar
    lr: LRBuild
    contextual: ContextualLexer | None = None   # lark's contextual lexer, when asked for

    @property
    def tables(self) -> LexerTables:
        """The lexer the masks and the recognizer use: the contextual one's DFA, else the basic one."""
        lexer = self.contextual if self.contextual is not None else self.lexer
        assert lexer is not None, "a front end has one of the two lexers"
        return lexer.tables


class _Stages:
    """Announces each stage to `progress` and adds up its seconds in `timings`."""

    def __init__(self, progress: Progress, timings: dict[str, float]) -> None:
        self.progress, self.timings = progress, timings

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        if name not in STAGES:
            raise AssertionError(f"unknown stage {name!r}")
        self.progress.stage(name)
        began = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - began


def load_grammar_stage(grammar_path: str | os.PathLike, *, start: str | None = None,
                       progress: Progress = NO_PROGRESS, timings: dict[str, float] | None = None) -> GrammarSpec:
    """The first stage alone (the build cache keys on its result; pass it on as `grammar=`)."""
    with _Stages(progress, timings if timings is not None else {}).stage("grammar"):
        return load_grammar(grammar_path, start=start)


@paced
def compile_front_end(grammar_path: str | os.PathLike, *, start: str | None = None,
                      limits: BuildLimits = DEFAULTS, progress: Progress = NO_PROGRESS,
                      timings: dict[str, float] | None = None, grammar: GrammarSpec | None = None,
                      contextual: bool = False, jobs: int = 1) -> FrontEnd:
    """grammar -> lexer -> parser (BNF, normalization, canonical LR(1) tables). `grammar`: the first
    stage's result for this path and start, if already loaded (`load_grammar_stage`); `contextual`:
    lark's contextual lexer (one basic lexer per parser state's terminals, so after the parser)
    instead of the basic one; the "lexer" stage then compiles each terminal alone (its errors come
    first, and the contexts reuse the DFAs), without determinizing the union of all terminals,
    which nothing reads then and which two large terminals can make explode (a schema with a
    hostname and a duration field: 314 s and 7.5 GB in that union, 5 s for every context). `jobs`:
    processes that build the contexts' lexers."""
    timings = timings if timings is not None else {}
    stages = _Stages(progress, timings)
    where = str(grammar_path)
    if grammar is None:
        grammar = load_grammar_stage(grammar_path, start=start, progress=progress, timings=timings)
    with stages.stage("lexer"):
        if contextual:
            compile_terminals(grammar.terminals, where, limits)
            lexer = None
        else:
            lexer = build_lexer(grammar.terminals, grammar.ignore, where, limits)
    with stages.stage("parser"):
        normalized = normalize(build_cfg(grammar), where=where, max_rhs_length=limits.max_rhs_length,
                               max_normalized_symbols=limits.max_normalized_symbols,
                               max_epsilon_variants=limits.max_epsilon_variants)
        lr = build_lr(normalized)
    per_state = None
    if contextual:
        with stages.stage("lexer contexts"):
            per_state = build_contextual_lexer(grammar.terminals, grammar.ignore, lr.tables, lr.kernels, where, limits,
                                               jobs)
    return FrontEnd(grammar, lexer, normalized, lr, per_state)


@paced
def compile_grammar(grammar_path: str | os.PathLike, *, tokenizer: str | Vocabulary = "gpt2",
                    start: str | None = None, eos_tokens: Sequence[str] = (),
                    tokenizer_pattern: str | None = None, layout: Layout = "auto",
                    limits: BuildLimits = DEFAULTS, progress: Progress = NO_PROGRESS,
                    grammar: GrammarSpec | None = None, lexer: LexerKind = DEFAULT_LEXER,
                    jobs: int | None = None) -> Compiled:
    """Run every stage up to the row pool (LimitExceeded names the limit that was hit). `grammar`:
    the first stage's result, if already loaded (`load_grammar_stage`); `lexer`: lark's basic or
    contextual lexer (docs/semantics.md); `jobs`: processes for the contexts' lexers, the Parser
    DWA's groups and the row pool (default: the CPUs available; the artifact is the same for any
    number)."""
    t: dict[str, float] = {}
    stages = _Stages(progress, t)
    jobs = jobs if jobs is not None else available_jobs()
    front = compile_front_end(grammar_path, start=start, limits=limits, progress=progress, timings=t,
                              grammar=grammar, contextual=lexer == "contextual", jobs=jobs)
    grammar, lexer_build, lr, tables = front.grammar, front.lexer, front.lr.tables, front.tables
    contexts = lexer_contexts(front.contextual, lr) if front.contextual is not None else None
    with stages.stage("stack effects"):
        followers = terminal_followers(lr)
        if front.contextual is not None and contexts is not None:
            warnings = tuple(contextual_unproduced(front.contextual, grammar.terminals)) + tuple(boundary_warnings(
                tables, grammar.terminals, followers, contexts.hand_over, front.contextual.starts.tolist()))
        else:
            assert lexer_build is not None
            warnings = lexer_build.warnings + tuple(boundary_warnings(tables, grammar.terminals, followers))
        parser_warnings = shift_preferred_warnings(shift_preferred(grammar))
        lr_quotient = quotient(lr, tables.ignored.tolist(),
                               None if front.contextual is None else front.contextual.start_of)
        effects = build_effect_graphs(lr_quotient.tables, limits.max_effect_graph_nodes, progress)
        read_depth = max_read_depth(effects)
        if read_depth > limits.max_read_depth:
            raise LimitExceeded("max_read_depth", limits.max_read_depth, "stack effects",
                                f"a terminal's stack effect reads {read_depth} old-stack states")
    with stages.stage("vocabulary"):
        vocab = tokenizer if isinstance(tokenizer, Vocabulary) else load_vocabulary(
            tokenizer, pattern=tokenizer_pattern, eos_tokens=eos_tokens)
        if not vocab.eos_ids:
            raise TokenizerError(f"tokenizer {vocab.name!r} names no EOS token, so no output could ever end; "
                                 "pass --eos-token TEXT or --eos-token ID")
    reached: list[str] = []
    dwa = _parser_dwa(stages, layout, tables, effects, lr_quotient, vocab, limits, progress, reached,
                      front.contextual, contexts, jobs)
    with stages.stage("rows"):
        rows = build_rows(dwa.dwa, dwa.terminal_dwa, progress, contexts, jobs)
    cores = tuple(front.lr.describe_state(state) for state in range(lr.n_states))
    return Compiled(grammar, tables, warnings, front.normalized, lr, len(front.lr.conflicts),
                    effects, vocab, dwa.terminal_dwa, dwa, rows, t, read_depth, limits, cores,
                    tuple(reached), front.contextual, lr_quotient, parser_warnings)


# the limit on read-NFA nodes of each auto try before the last (limits.py)
_NODE_BUDGET: dict[str, str] = {"one": "max_nfa_nodes_auto", "runtime-close": "max_nfa_nodes_close_auto"}


def _parser_dwa(stages: _Stages, layout: Layout, lexer: LexerTables, effects: tuple[EffectGraph, ...],
                lr: LRQuotient, vocab: Vocabulary, limits: BuildLimits, progress: Progress,
                reached: list[str], contextual: ContextualLexer | None,
                contexts: LexerContexts | None, jobs: int | None) -> ParserDWABuild:
    """The Terminal DWA and the Parser DWA of `layout`; "auto" tries AUTO_ORDER and takes the first
    layout that stays within max_outcomes_auto / its read-NFA budget (`_NODE_BUDGET`) /
    max_dwa_states_auto (the last one within max_nfa_nodes / max_dwa_states, which also cap the
    earlier tries). Each try that hit
    a budget is appended to `reached` ("layout one: max_nfa_nodes_auto"). The Parser DWA is built over
    the LR quotient `lr` (its terminal classes in the Terminal DWA's sets) and reads real LR states."""
    tried = AUTO_ORDER if layout == "auto" else (layout,)
    with stages.stage("terminal DWA"):
        deferred = build_terminal_dwa(lexer, vocab, progress, contexts, limits.max_token_paths)
        spelled = None
        if not closes_at_runtime(tried[0]):      # only "one" spells out the closes, and it comes first
            try:
                spelled = spell_out_closes(deferred, lexer, None if len(tried) == 1 else limits.max_outcomes_auto,
                                           contexts)
            except LimitExceeded:
                reached.append(f"layout {tried[0]}: max_outcomes_auto")
                progress.note(f"layout {tried[0]}: max_outcomes_auto reached, trying the next layout")
    index = None
    term_sets = [lexer.term_set(i) for i in range(lexer.n_term_sets)]
    ignored = frozenset(int(lr.terminal_class[t]) for t in lexer.ignored)
    start_of = None if contextual is None else np.asarray(contextual.start_of)[[int(m[0]) for m in lr.members]].tolist()
    for name in tried:
        real = deferred if closes_at_runtime(name) else spelled
        if real is None:
            continue
        last = name == tried[-1]
        with stages.stage("parser DWA"):
            progress.note(f"layout {name}")
            if index is None:
                index = EffectIndex(effects)     # once, not per layout or group
            tdwa, class_sets = merge_terminals(real, term_sets, lr.terminal_class)
            try:
                return build_parser_dwa(
                    name, tdwa, class_sets, ignored, effects, lr.tables, state_class=lr.state_class,
                    max_nfa_nodes=limits.max_nfa_nodes if last else min(getattr(limits, _NODE_BUDGET[name]),
                                                                         limits.max_nfa_nodes),
                    max_dwa_states=limits.max_dwa_states if last else min(limits.max_dwa_states_auto,
                                                                          limits.max_dwa_states),
                    max_merged_states=limits.max_merged_states,
                    max_cumulative_states=limits.max_cumulative_states, index=index, progress=progress,
                    start_of=start_of, jobs=jobs)
            except LimitExceeded as err:
                if last:
                    raise
                budget = {"max_nfa_nodes": _NODE_BUDGET[name], "max_dwa_states": "max_dwa_states_auto"}
                reached.append(f"layout {name}: {budget.get(err.limit, err.limit)}")
                progress.note(f"layout {name}: {budget.get(err.limit, err.limit)} reached, trying the next layout")
    raise AssertionError("unreachable: the last layout either returns or raises")


def artifact_sections(c: Compiled) -> dict[str, np.ndarray]:
    """The arrays the runtime loads, cast to and checked against `glrmask_runtime.schema` (the one
    list of section names, dtypes and dimensions; a missing, unknown or overflowing one raises)."""
    from glrmask_runtime.schema import conform_sections

    dwa = c.parser_dwa.dwa
    root_offsets, roots = c.parser_dwa.walk_roots
    core_text = [core.encode("utf-8") for core in c.lr_cores]
    core_offsets = np.zeros(len(core_text) + 1, dtype=np.int64)
    core_offsets[1:] = np.cumsum([len(t) for t in core_text])
    return conform_sections({
        "lexer.transitions": c.lexer.transitions, "lexer.close_sets": c.lexer.close_sets,
        "lexer.viable_sets": c.lexer.viable_sets, "lexer.term_set_offsets": c.lexer.term_set_offsets,
        "lexer.term_set_items": c.lexer.term_set_items, "lexer.ignored": c.lexer.ignored,
        "lr.action_offsets": c.lr.action_offsets, "lr.actions": c.lr.actions,
        "lr.goto": c.lr.goto, "lr.rule_lhs": c.lr.rule_lhs, "lr.rule_len": c.lr.rule_len,
        "dwa.edge_offsets": dwa.offsets, "dwa.edge_labels": dwa.labels, "dwa.edge_targets": dwa.targets,
        "dwa.default": dwa.default, "dwa.accept_of": c.rows.accept_of,
        "dwa.root_offsets": root_offsets, "dwa.roots": roots,
        **({"dwa.emits": np.asarray(dwa.emits, dtype=np.uint8)} if any(dwa.emits) else {}),
        "rows.q_offsets": c.rows.q_offsets, "rows.q_accepts": c.rows.q_accepts,
        "rows.q_rows": c.rows.q_rows, "rows.close_offsets": c.rows.close_offsets,
        "rows.close_sets": c.rows.close_sets, "rows.close_rows": c.rows.close_rows,
        "dwa.q_root_offsets": c.rows.q_root_offsets, "dwa.q_roots": c.rows.q_roots,
        "rows.close_root_offsets": c.rows.close_root_offsets, "rows.close_roots": c.rows.close_roots,
        "rows.bits": c.rows.rows,
        "vocab.token_offsets": c.vocab.token_offsets,
        "vocab.token_data": c.vocab.token_data,
        "lr.core_offsets": core_offsets, "lr.core_text": np.frombuffer(b"".join(core_text), dtype=np.uint8),
        **({} if c.contextual is None else {"lexer.restart": c.contextual.restart,
                                            "lr.lexer_start": c.contextual.start_of}),
    })


def artifact_metadata(c: Compiled) -> dict:
    """Everything `inspect` shows; no timestamps or paths, so equal inputs give equal bytes."""
    g = c.grammar
    return {
        "kind": ARTIFACT_KIND,
        "compiler": {"name": "glrmask", "version": __version__},
        "grammar": {"name": g.name, "sha256": g.sha256, "start": g.start,
                    "terminals": [t.display for t in g.terminals], "ignore": list(g.ignore)},
        "tokenizer": {"name": c.vocab.name, "fingerprint": c.vocab.fingerprint, "vocab_size": c.vocab.size,
                      "eos_ids": list(c.vocab.eos_ids)},
        "lexer": {"kind": "basic" if c.contextual is None else "contextual", "n_states": c.lexer.n_states,
                  "warnings": list(c.lexer_warnings),
                  **({} if c.contextual is None else {"n_contexts": c.contextual.n_contexts})},
        "parser": {"n_states": c.lr.n_states, "n_terminals": c.lr.n_terminals, "conflicts": c.conflicts,
                   "n_rules": int(c.lr.rule_len.shape[0]), "rewrites": list(c.normalized.rewrites),
                   "max_read_depth": c.read_depth, "warnings": list(c.parser_warnings)},
        "build": {"limits": dataclasses.asdict(c.limits), "limits_reached": list(c.limits_reached)},
        "dwa": {"n_states": c.parser_dwa.dwa.n_states, "n_transitions": c.parser_dwa.dwa.n_transitions,
                "depth": c.parser_dwa.dwa.depth(), "layout": c.parser_dwa.layout,
                "n_groups": len(c.parser_dwa.groups),
                "n_outcomes": len(c.terminal_dwa.outcomes),
                "n_token_classes": c.terminal_dwa.n_classes, "n_rows": int(c.rows.rows.shape[0])},
    }


@dataclass(frozen=True)
class BuildResult:
    path: Path
    size: int
    seconds: float
    compiled: Compiled


def default_output(grammar_path: str | os.PathLike[str]) -> Path:
    """`<grammar stem>.glrm` in the current directory."""
    return Path.cwd() / (Path(grammar_path).stem + ".glrm")


def build_artifact(grammar_path: str | os.PathLike, out_path: str | os.PathLike | None = None, *,
                   tokenizer: str | Vocabulary = "gpt2", start: str | None = None,
                   eos_tokens: Sequence[str] = (), tokenizer_pattern: str | None = None,
                   layout: Layout = "auto", limits: BuildLimits = DEFAULTS,
                   progress: Progress = NO_PROGRESS, lexer: LexerKind = DEFAULT_LEXER,
                   jobs: int | None = None) -> BuildResult:
    """Compile and write the artifact (default: `default_output`; `-`: standard output)."""
    began = time.perf_counter()
    compiled = compile_grammar(grammar_path, tokenizer=tokenizer, start=start, eos_tokens=eos_tokens,
                               tokenizer_pattern=tokenizer_pattern, layout=layout, limits=limits,
                               progress=progress, lexer=lexer, jobs=jobs)
    out = Path(out_path) if out_path is not None else default_output(grammar_path)
    data = encode_artifact(compiled, progress)
    write_output(out, data)
    return BuildResult(out, len(data), time.perf_counter() - began, compiled)


def encode_artifact(compiled: Compiled, progress: Progress = NO_PROGRESS) -> bytes:
    """The last stage, in memory: the artifact's bytes (nothing is written)."""
    with _Stages(progress, compiled.timings).stage("artifact"):
        return encode_container(artifact_metadata(compiled), artifact_sections(compiled))
