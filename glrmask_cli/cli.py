"""The `glrmask` command line: parse arguments, call the pipeline, map errors to exit codes.

Exit codes, the same for every command (stated in `glrmask --help` and the README): 0 success;
1 a user error: the input is bad or cannot be written (grammar, tokenizer, artifact, output file,
a rejected document or prefix), one line `Error: ...` on stderr; 2 a usage error (click's: unknown
option, missing argument, conflicting options, an output that would overwrite an input); 3 an
internal error (a bug: traceback, please report); 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import functools
import sys
import traceback
from typing import TYPE_CHECKING

import click

from glrmask_cli import __version__
from glrmask_cli.lexer_option import DEFAULT_LEXER, LEXER_KINDS
from glrmask_runtime.errors import GLRMaskError

if TYPE_CHECKING:
    from glrmask_cli.json_schema import Whitespace

EXIT_USER_ERROR = 1
EXIT_INTERNAL_ERROR = 3
EXIT_INTERRUPTED = 130   # 128 + SIGINT, as shells report it

EXIT_CODES_HELP = """\b
Exit codes (every command):
  0    success
  1    user error: bad grammar, tokenizer, artifact or output file, rejected document
  2    usage error: bad options or arguments
  3    internal error (please report)
  130  interrupted"""


def user_errors(func):
    """GLRMaskError -> one line + exit 1, Ctrl-C -> exit 130, any other exception -> traceback + exit 3."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except GLRMaskError as err:
            click.echo(f"Error: {str(err).splitlines()[0]}", err=True)
            sys.exit(EXIT_USER_ERROR)
        except KeyboardInterrupt:
            click.echo("Interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except Exception:  # a bug: show it, do not reword it
            traceback.print_exc()
            click.echo("internal error, please report it with the traceback above", err=True)
            sys.exit(EXIT_INTERNAL_ERROR)

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODES_HELP)
@click.version_option(__version__, prog_name="glrmask")
def cli() -> None:
    """Compile Lark grammars into Parser DWA artifacts for grammar-constrained decoding."""


@cli.command("tokenizers")
@user_errors
def tokenizers_command() -> None:
    """List the tokenizer names --tokenizer accepts and what each needs."""
    from glrmask_cli.vocab.registry import describe_tokenizers

    for name, needs in describe_tokenizers():
        click.echo(f"{name:<14} {needs}")


def _schema_options(command):
    """--schema, --whitespace and --strict, shared by `build` and `check`."""
    command = click.option("--strict", is_flag=True,
                           help="JSON Schema only: an object with properties but no additionalProperties takes "
                                "no other keys and an array with prefixItems no other items "
                                "(docs/json-schema.md).")(command)
    command = click.option("--whitespace", type=click.Choice(["flexible", "compact"]), default="flexible",
                           show_default=True, help="JSON Schema only: any JSON whitespace between tokens, "
                           "or none.")(command)
    return click.option("--schema", "is_schema", is_flag=True,
                        help="GRAMMAR is a JSON Schema (the default for a .json file); "
                             "docs/json-schema.md.")(command)


def _limits_option(func):
    """`--limit NAME=VALUE` (repeatable) -> a `BuildLimits` (a usage error for an unknown name or a bad value)."""
    from glrmask_cli.limits import describe

    def parse(ctx, param, values):
        from glrmask_cli.limits import DEFAULTS

        try:
            return DEFAULTS.with_assignments(values)
        except ValueError as err:
            raise click.BadParameter(str(err), ctx=ctx, param=param) from None

    names = ", ".join(f"{name}={default}" for name, default, _, _ in describe())
    return click.option("--limit", "limits", multiple=True, metavar="NAME=VALUE", callback=parse,
                        help=f"Set a build limit (repeatable; docs/ARCHITECTURE.md, 'Build limits'). "
                             f"Names and defaults: {names}.")(func)


@cli.command("build")
@click.argument("grammar", type=click.Path(exists=True, dir_okay=False))
@click.option("--tokenizer", "-t", default="gpt2", show_default=True,
              help="Tokenizer name (see `glrmask tokenizers`) or a path to a vocabulary file.")
@click.option("--tokenizer-pattern", default=None, help="Pre-tokenizer regex for a .tiktoken file.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default=None,
              help="Artifact path, or - for standard output [default: GRAMMAR's stem + .glrm in the "
                   "current directory]. A symbolic link is followed; a device or FIFO is written through.")
@click.option("--start", default=None, help="Start rule [default: start].")
@click.option("--eos-token", "eos_tokens", multiple=True,
              help="EOS token text or id (repeatable); required when the vocabulary names no EOS token.")
@click.option("--layout", type=click.Choice(["auto", "one", "runtime-close", "grouped"]), default="auto",
              show_default=True, help="Parser DWA layout (docs/ARCHITECTURE.md); auto: the first that fits.")
@click.option("--vocab-size", type=click.IntRange(min=1), default=None,
              help="Pad the vocabulary to this many ids (a model's logits); the extra ids are never allowed.")
@click.option("--lexer", type=click.Choice(LEXER_KINDS), default=DEFAULT_LEXER, show_default=True,
              help="lark's lexer= option the masks follow, as the grammar's owner gives it to lark: "
                   "contextual (per parser state, only the terminals it accepts; lark's default for "
                   "parser='lalr') or basic (one lexer for the whole grammar). docs/semantics.md.")
@_schema_options
@click.option("--emit-lark", is_flag=True, help="JSON Schema only: print the Lark grammar it is lowered to, "
              "build nothing.")
@_limits_option
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Processes the build may use [default: the CPUs available]; the artifact is the same "
                   "for any number.")
@click.option("--no-cache", is_flag=True, help="Build even if the build cache holds this artifact, and do not "
              "store it (the cache: $GLRMASK_CACHE_DIR/builds, else ~/.cache/glrmask/builds).")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@user_errors
def build_command(grammar, tokenizer, tokenizer_pattern, output, start, eos_tokens, layout, vocab_size, lexer,
                  is_schema, whitespace, strict, emit_lark, limits, jobs, no_cache, quiet) -> None:
    """Compile GRAMMAR (.lark, or a JSON Schema .json) and a tokenizer vocabulary into an artifact."""
    from glrmask_cli.api import compile_grammar
    from glrmask_cli.output import STDOUT, same_file
    from glrmask_cli.pipeline import STAGES, default_output
    from glrmask_cli.progress import NO_PROGRESS

    if emit_lark and not (is_schema or grammar.endswith(".json")):
        raise click.UsageError("--emit-lark is for a JSON Schema (a .json file, or --schema)")
    source = _grammar_source(grammar, is_schema, whitespace, strict)
    if emit_lark:
        click.echo(source, nl=False)
        return

    target = output if output is not None else default_output(grammar)
    for given, path in (("GRAMMAR", grammar), ("--tokenizer", tokenizer)):
        if target != STDOUT and same_file(target, path):
            raise click.BadParameter(f"{target!r} is the {given} input; choose another output path",
                                     param_hint="'-o' / '--output'")
    progress = _StageProgress(STAGES) if not quiet and sys.stderr.isatty() else None
    try:
        built = compile_grammar(source, tokenizer=tokenizer, start=start, eos_tokens=eos_tokens,
                                vocab_size=vocab_size, tokenizer_pattern=tokenizer_pattern, layout=layout,
                                lexer=lexer, limits=limits, use_cache=not no_cache, progress=progress or NO_PROGRESS,
                                jobs=jobs)
        size = built.write(target)
    finally:
        if progress is not None:
            progress.done()
    if not quiet:
        meta = built.metadata
        for warning in meta["lexer"]["warnings"] + meta["parser"]["warnings"]:
            click.echo(f"warning: {warning}", err=True)
        shown = "<stdout>" if target == STDOUT else target
        source = " (from the build cache)" if built.from_cache else ""
        click.echo(f"wrote {shown}: {meta['dwa']['n_states']} DWA states, {meta['dwa']['n_rows']} rows, "
                   f"{meta['lexer']['n_states']} lexer states, {meta['parser']['n_states']} LR states, "
                   f"{size:,} bytes in {built.seconds:.2f} s{source}", err=target == STDOUT)


class _StageProgress:
    """Progress on a terminal (stderr), one line per stage, redrawn at most every 0.1 s:
    `[4/9] stack effects [#######.............] 35/99 terminals ...`, then the stage's seconds."""

    BAR = 20

    def __init__(self, stages: tuple[str, ...]) -> None:
        import time

        self._stages = stages
        self._clock = time.perf_counter
        self._name: str | None = None
        self._started = self._drawn = 0.0
        self._total = self._done = self._width = 0
        self._unit = self._note = ""

    def stage(self, name: str) -> None:
        self._finish_line()
        self._name, self._started = name, self._clock()
        self._total = self._done = 0
        self._unit = self._note = ""
        self._draw(force=True)

    def total(self, n: int, unit: str) -> None:
        self._total, self._unit = n, unit
        self._draw()

    def advance(self, n: int = 1) -> None:
        self._done += n
        self._draw()

    def note(self, text: str) -> None:
        self._note = text
        self._draw()

    def done(self) -> None:
        self._finish_line()

    def _line(self) -> str:
        index = self._stages.index(self._name) + 1 if self._name in self._stages else 0
        text = f"[{index}/{len(self._stages)}] {self._name}"
        if self._total:
            filled = min(self.BAR, self.BAR * self._done // self._total)
            text += f" [{'#' * filled}{'.' * (self.BAR - filled)}] {self._done:,}/{self._total:,} {self._unit}"
        if self._note:
            text += f", {self._note}"
        return text

    def _show(self, line: str, nl: bool) -> None:
        click.echo("\r" + line.ljust(self._width), err=True, nl=nl)
        self._width = 0 if nl else len(line)

    def _draw(self, force: bool = False) -> None:
        now = self._clock()
        if self._name is None or (not force and now - self._drawn < 0.1):
            return
        self._drawn = now
        self._show(self._line() + " ...", nl=False)

    def _finish_line(self) -> None:
        if self._name is not None:
            self._show(f"{self._line()} {self._clock() - self._started:.2f} s", nl=True)
            self._name = None


@cli.command("inspect")
@click.argument("artifact", type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--prefix", default=None,
              help="Commit TEXT's tokens and print only what the mask allows after them.")
@click.option("--why", "why_token", default=None, metavar="TOKEN",
              help="With --prefix (or from the start): why TOKEN (its text, or #ID) is allowed or masked.")
@click.option("--trace", is_flag=True, help="With --prefix (or from the start): every walk and close of the mask.")
@click.option("--dot", type=click.Choice(["dwa", "lexer"]), default=None,
              help="Write Graphviz to stdout (not with --json, --prefix, --why or --trace; see --from-prefix).")
@click.option("--from-prefix", default=None, metavar="TEXT",
              help="With --dot dwa: only the DWA states the mask's walks after TEXT visit.")
@click.option("--depth", type=click.IntRange(min=0), default=None,
              help="With --dot dwa --from-prefix: also the states up to N steps off those walks "
                   "(at most 8 edges per state drawn, the rest counted) [default: 0].")
@user_errors
def inspect_command(artifact, as_json, prefix, why_token, trace, dot, from_prefix, depth) -> None:
    """Describe ARTIFACT: grammar, tokenizer, automata sizes, sections."""
    import json

    import glrmask_runtime
    from glrmask_cli import dot as dot_module
    from glrmask_cli import explain, report

    if dot is not None and (as_json or prefix is not None or why_token is not None or trace):
        raise click.UsageError("--dot writes Graphviz alone; it cannot be combined with --json, --prefix, --why "
                               "or --trace (use --from-prefix)")
    if (from_prefix is not None or depth is not None) and dot != "dwa":
        raise click.UsageError("--from-prefix and --depth go with --dot dwa")
    art = glrmask_runtime.load(artifact)
    encode = _encoder_for(art)
    if dot is not None:
        if from_prefix is not None:
            matcher = report.matcher_after(art, from_prefix, encode)
            click.echo(dot_module.reachable_dwa_dot(art, explain.trace(art, matcher), depth), nl=False)
        else:
            click.echo(dot_module.dwa_dot(art) if dot == "dwa" else dot_module.lexer_dot(art), nl=False)
        return
    if why_token is not None or trace:
        matcher = report.matcher_after(art, prefix or "", encode)
        if why_token is not None:
            answer = explain.why(art, matcher, _token_id(art, why_token, encode))
            click.echo(json.dumps(answer, indent=2) if as_json else explain.format_why(answer))
        if trace:
            walks = explain.trace(art, matcher)
            click.echo(json.dumps(walks, indent=2) if as_json else
                       explain.format_trace(walks, report.mask_cost(art)))
        return
    if prefix is not None:
        answer = report.prefix_report(art, prefix, encode)
        click.echo(json.dumps(answer, indent=2) if as_json else report.format_prefix_report(answer))
        return
    result = report.artifact_report(art)
    click.echo(json.dumps(result, indent=2) if as_json else report.format_report(result))


@cli.command("diff")
@click.argument("a", type=click.Path(exists=True, dir_okay=False))
@click.argument("b", type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@user_errors
def diff_command(a, b, as_json) -> None:
    """What changed between two artifacts: grammar, tokenizer, automata sizes, layout, section sizes."""
    import json

    import glrmask_runtime
    from glrmask_cli import report

    answer = report.diff_report(glrmask_runtime.load(a), glrmask_runtime.load(b))
    click.echo(json.dumps(answer, indent=2) if as_json else report.format_diff(answer))


def _token_id(art, spec: str, encode) -> int:
    """`#ID`, or a text that is exactly one token of the artifact's vocabulary."""
    if spec.startswith("#") and spec[1:].isdigit():
        token_id = int(spec[1:])
        if not 0 <= token_id < art.vocab_size:
            raise click.BadParameter(f"token id {token_id} is outside [0, {art.vocab_size})", param_hint="'--why'")
        return token_id
    data = spec.encode("utf-8")
    matches = [t for t in range(art.vocab_size) if art.token_bytes(t) == data] if encode is None else []
    if encode is not None:
        ids = list(encode(spec))
        matches = ids if len(ids) == 1 else []
    if len(matches) != 1:
        raise click.BadParameter(f"{spec!r} is not a single token of this vocabulary; give its id as #ID",
                                 param_hint="'--why'")
    return int(matches[0])


def _encoder_for(art):
    """The artifact's own tokenizer's encoder if it can be loaded and matches, else None (bytes)."""
    from glrmask_cli.vocab.registry import load_vocabulary

    try:
        vocab = load_vocabulary(art.metadata["tokenizer"]["name"])
    except GLRMaskError:
        return None
    if vocab.fingerprint != art.metadata["tokenizer"]["fingerprint"] or vocab.encoder is None:
        return None
    return vocab.encode


def _grammar_source(grammar: str, is_schema: bool, whitespace: Whitespace, strict: bool) -> str:
    """GRAMMAR's path, or for a JSON Schema (.json or --schema) the Lark text it lowers to."""
    from glrmask_cli.api import json_schema_grammar

    if is_schema or grammar.endswith(".json"):
        return json_schema_grammar(grammar, whitespace=whitespace, strict=strict)
    for given, option in ((whitespace != "flexible", "--whitespace"), (strict, "--strict")):
        if given:
            raise click.UsageError(f"{option} is for a JSON Schema (a .json file, or --schema)")
    return grammar


@cli.command("check")
@click.argument("grammar", type=click.Path(exists=True, dir_okay=False))
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--start", default=None, help="Start rule [default: start].")
@click.option("--lexer", type=click.Choice(LEXER_KINDS), default=DEFAULT_LEXER, show_default=True,
              help="contextual: lark's contextual lexer (its default for parser='lalr'), per parser "
                   "state; basic: lark's basic lexer (docs/semantics.md).")
@_schema_options
@_limits_option
@user_errors
def check_command(grammar, files, start, lexer, is_schema, whitespace, strict, limits) -> None:
    """Check whole FILES against GRAMMAR (.lark, or a JSON Schema .json) with the semantics the
    masks use.

    Prints `FILE: ok` or `FILE: rejected at byte N: REASON` per file. Exit code 0 if all are ok,
    1 if any is rejected (or the grammar or a file cannot be read).
    """
    from glrmask_cli.api import GrammarFile
    from glrmask_cli.check import load_checker

    with GrammarFile(_grammar_source(grammar, is_schema, whitespace, strict)) as path:
        checker = load_checker(path, start, limits, lexer=lexer)
    rejected = 0
    for path in files:
        result = checker.check_file(path)
        rejected += not result.ok
        click.echo(result.line())
    sys.exit(EXIT_USER_ERROR if rejected else 0)


def main() -> None:
    cli(prog_name="glrmask")
