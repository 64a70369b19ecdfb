"""The compile pipeline: the only module that knows the order of the stages.

grammar -> lexer -> parser (BNF, normalization, LR tables, stack effects) -> vocabulary ->
Terminal DWA -> Parser DWA (splice, determinize, minimize) -> rows -> artifact.
`compile_grammar` returns everything in memory; `build_artifact` also writes the file (atomically).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from glrmask_cli import __version__
from glrmask_cli.artifact import write_artifact
from glrmask_cli.errors import TokenizerError
from glrmask_cli.grammar import GrammarSpec, load_grammar
from glrmask_cli.lexer.scanner import boundary_warnings, build_lexer
from glrmask_cli.parser.cfg import build_cfg
from glrmask_cli.parser.lr import build_lr, terminal_followers
from glrmask_cli.parser.normalize import NormalizedGrammar, normalize
from glrmask_cli.parser.stack_effects import EffectGraph, build_effect_graphs, max_read_depth
from glrmask_cli.parser_dwa.layout import Layout, ParserDWABuild, build_parser_dwa
from glrmask_cli.parser_dwa.rows import RowPool, build_rows
from glrmask_cli.terminal_dwa import TerminalDWA, build_terminal_dwa
from glrmask_cli.vocab.registry import load_vocabulary
from glrmask_cli.vocab.vocabulary import Vocabulary
from glrmask_runtime.artifact import ARTIFACT_KIND
from glrmask_runtime.tables import LexerTables, LRTables

Progress = Callable[[str], None]   # called with a stage name when the stage starts


@dataclass
class Compiled:
    """Every stage's product, in memory."""

    grammar: GrammarSpec
    lexer: LexerTables
    lexer_warnings: tuple[str, ...]
    normalized: NormalizedGrammar
    lr: LRTables
    conflicts: int
    effects: tuple[EffectGraph, ...]
    vocab: Vocabulary
    terminal_dwa: TerminalDWA
    parser_dwa: ParserDWABuild
    rows: RowPool
    timings: dict[str, float] = field(default_factory=dict)


def _stage(timings: dict[str, float], progress: Progress | None, name: str):
    if progress is not None:
        progress(name)
    timings[name] = time.perf_counter()


def _end(timings: dict[str, float], name: str) -> None:
    timings[name] = time.perf_counter() - timings[name]


def compile_grammar(grammar_path: str | os.PathLike, *, tokenizer: str | Vocabulary = "gpt2",
                    start: str | None = None, eos_tokens: Sequence[str] = (),
                    tokenizer_pattern: str | None = None, layout: Layout = "auto",
                    progress: Progress | None = None) -> Compiled:
    """Run every stage up to the row pool."""
    t: dict[str, float] = {}
    _stage(t, progress, "grammar")
    grammar = load_grammar(grammar_path, start=start)
    _end(t, "grammar")
    _stage(t, progress, "lexer")
    lexer_build = build_lexer(grammar.terminals, grammar.ignore, str(grammar_path))
    _end(t, "lexer")
    _stage(t, progress, "parser")
    normalized = normalize(build_cfg(grammar), where=str(grammar_path))
    lr_build = build_lr(normalized)
    lr, conflicts = lr_build.tables, len(lr_build.conflicts)
    warnings = lexer_build.warnings + tuple(boundary_warnings(lexer_build.tables, grammar.terminals,
                                                              terminal_followers(lr)))
    effects = build_effect_graphs(lr)
    _end(t, "parser")
    _stage(t, progress, "vocabulary")
    vocab = tokenizer if isinstance(tokenizer, Vocabulary) else load_vocabulary(
        tokenizer, pattern=tokenizer_pattern, eos_tokens=eos_tokens)
    if not vocab.eos_ids:
        raise TokenizerError(f"tokenizer {vocab.name!r} names no EOS token, so no output could ever end; "
                             "pass --eos-token TEXT or --eos-token ID")
    _end(t, "vocabulary")
    _stage(t, progress, "terminal DWA")
    tdwas: dict[bool, TerminalDWA] = {}

    def terminal_dwa(close_at_runtime: bool) -> TerminalDWA:
        if close_at_runtime not in tdwas:
            tdwas[close_at_runtime] = build_terminal_dwa(lexer_build.tables, vocab.token_bytes, vocab.special_ids,
                                                         vocab.eos_ids, close_at_runtime)
        return tdwas[close_at_runtime]

    terminal_dwa(layout not in ("auto", "one"))
    _end(t, "terminal DWA")
    _stage(t, progress, "parser DWA")
    dwa = build_parser_dwa(terminal_dwa, lexer_build.tables, effects, lr, layout)
    tdwa = dwa.terminal_dwa
    _end(t, "parser DWA")
    _stage(t, progress, "rows")
    rows = build_rows(dwa.dwa, tdwa)
    _end(t, "rows")
    return Compiled(grammar, lexer_build.tables, warnings, normalized, lr, conflicts,
                    effects, vocab, tdwa, dwa, rows, t)


def artifact_sections(c: Compiled) -> dict[str, np.ndarray]:
    """The arrays the runtime loads, cast to and checked against `glrmask_runtime.schema` (the one
    list of section names, dtypes and dimensions; a missing, unknown or overflowing one raises)."""
    from glrmask_runtime.schema import conform_sections

    edges = c.parser_dwa.dwa.edges
    root_offsets, roots = c.parser_dwa.walk_roots
    offsets = np.zeros(len(edges) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(e) for e in edges])
    labels = [label for e in edges for label in sorted(e)]
    targets = [e[label] for e in edges for label in sorted(e)]
    token_lengths = np.fromiter((len(b) for b in c.vocab.token_bytes), dtype=np.int64, count=c.vocab.size)
    token_offsets = np.zeros(c.vocab.size + 1, dtype=np.int64)
    token_offsets[1:] = np.cumsum(token_lengths)
    return conform_sections({
        "lexer.transitions": c.lexer.transitions, "lexer.close_sets": c.lexer.close_sets,
        "lexer.viable_sets": c.lexer.viable_sets, "lexer.term_set_offsets": c.lexer.term_set_offsets,
        "lexer.term_set_items": c.lexer.term_set_items, "lexer.ignored": c.lexer.ignored,
        "lr.action_offsets": c.lr.action_offsets, "lr.actions": c.lr.actions,
        "lr.goto": c.lr.goto, "lr.rule_lhs": c.lr.rule_lhs, "lr.rule_len": c.lr.rule_len,
        "dwa.edge_offsets": offsets, "dwa.edge_labels": labels, "dwa.edge_targets": targets,
        "dwa.default": c.parser_dwa.dwa.default, "dwa.accept_of": c.rows.accept_of,
        "dwa.root_offsets": root_offsets, "dwa.roots": roots,
        "rows.q_offsets": c.rows.q_offsets, "rows.q_accepts": c.rows.q_accepts,
        "rows.q_rows": c.rows.q_rows, "rows.close_offsets": c.rows.close_offsets,
        "rows.close_sets": c.rows.close_sets, "rows.close_rows": c.rows.close_rows,
        "rows.bits": c.rows.rows,
        "vocab.token_offsets": token_offsets,
        "vocab.token_data": np.frombuffer(b"".join(c.vocab.token_bytes), dtype=np.uint8),
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
        "lexer": {"n_states": c.lexer.n_states, "warnings": list(c.lexer_warnings)},
        "parser": {"n_states": c.lr.n_states, "n_terminals": c.lr.n_terminals, "conflicts": c.conflicts,
                   "n_rules": int(c.lr.rule_len.shape[0]), "rewrites": list(c.normalized.rewrites),
                   "max_read_depth": max_read_depth(c.effects)},
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
                   layout: Layout = "auto", progress: Progress | None = None) -> BuildResult:
    """Compile and write the artifact (default: `default_output`; `-`: standard output)."""
    began = time.perf_counter()
    compiled = compile_grammar(grammar_path, tokenizer=tokenizer, start=start, eos_tokens=eos_tokens,
                               tokenizer_pattern=tokenizer_pattern, layout=layout, progress=progress)
    out = Path(out_path) if out_path is not None else default_output(grammar_path)
    if progress is not None:
        progress("artifact")
    size = write_artifact(out, artifact_metadata(compiled), artifact_sections(compiled))
    return BuildResult(out, size, time.perf_counter() - began, compiled)
