"""The `glrmask` command line: parse arguments, call the pipeline, map errors to exit codes.

Exit codes: 0 success, 1 a user error (bad grammar, tokenizer, artifact, rejected document),
2 usage errors (click), 3 an internal error (a bug: traceback, please report).
"""

from __future__ import annotations

import functools
import sys
import traceback

import click
from glrmask_runtime.errors import GLRMaskError

from glrmask_cli import __version__

EXIT_USER_ERROR = 1
EXIT_INTERNAL_ERROR = 3


def user_errors(func):
    """Turn GLRMaskError into a one-line message + exit 1, anything else into exit 3."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except GLRMaskError as err:
            click.echo(f"Error: {str(err).splitlines()[0]}", err=True)
            sys.exit(EXIT_USER_ERROR)
        except (click.exceptions.Exit, click.ClickException, KeyboardInterrupt, SystemExit):
            raise
        except Exception:  # a bug: show it, do not reword it
            traceback.print_exc()
            click.echo("internal error, please report it with the traceback above", err=True)
            sys.exit(EXIT_INTERNAL_ERROR)

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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


@cli.command("build")
@click.argument("grammar", type=click.Path(exists=True, dir_okay=False))
@click.option("--tokenizer", "-t", default="gpt2", show_default=True,
              help="Tokenizer name (see `glrmask tokenizers`) or a path to a vocabulary file.")
@click.option("--tokenizer-pattern", default=None, help="Pre-tokenizer regex for a .tiktoken file.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Artifact path [default: GRAMMAR's stem + .glrm in the current directory].")
@click.option("--start", default=None, help="Start rule [default: start].")
@click.option("--eos-token", "eos_tokens", multiple=True, help="EOS token text or id (repeatable).")
@click.option("--layout", type=click.Choice(["auto", "one", "runtime-close", "grouped"]), default="auto",
              show_default=True, help="Parser DWA layout (docs/ARCHITECTURE.md); auto: the first that fits.")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@user_errors
def build_command(grammar, tokenizer, tokenizer_pattern, output, start, eos_tokens, layout, quiet) -> None:
    """Compile GRAMMAR (.lark) and a tokenizer vocabulary into an artifact."""
    from glrmask_cli.pipeline import build_artifact

    progress = None
    if not quiet and sys.stderr.isatty():
        progress = _StageProgress()
    result = build_artifact(grammar, output, tokenizer=tokenizer, start=start, eos_tokens=eos_tokens,
                            tokenizer_pattern=tokenizer_pattern, layout=layout, progress=progress)
    if progress is not None:
        progress.done()
    if not quiet:
        meta = result.compiled
        click.echo(f"wrote {result.path}: {meta.parser_dwa.dwa.n_states} DWA states, "
                   f"{meta.rows.rows.shape[0]} rows, {meta.lexer.n_states} lexer states, "
                   f"{meta.lr.n_states} LR states, {result.size:,} bytes in {result.seconds:.2f} s")


class _StageProgress:
    """Per-stage progress on a terminal: `[3/8] parser ... 0.12 s`."""

    STAGES = ("grammar", "lexer", "parser", "vocabulary", "terminal DWA", "parser DWA", "rows", "artifact")

    def __init__(self) -> None:
        import time

        self._clock = time.perf_counter
        self._started: float | None = None

    def __call__(self, stage: str) -> None:
        self._finish_line()
        index = self.STAGES.index(stage) + 1 if stage in self.STAGES else 0
        click.echo(f"[{index}/{len(self.STAGES)}] {stage} ...", err=True, nl=False)
        self._started = self._clock()

    def _finish_line(self) -> None:
        if self._started is not None:
            click.echo(f" {self._clock() - self._started:.2f} s", err=True)
            self._started = None

    def done(self) -> None:
        self._finish_line()


@cli.command("inspect")
@click.argument("artifact", type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--prefix", default=None, help="Commit TEXT's tokens and describe the mask after them.")
@click.option("--dot", type=click.Choice(["dwa", "lexer"]), default=None, help="Write Graphviz to stdout.")
@user_errors
def inspect_command(artifact, as_json, prefix, dot) -> None:
    """Describe ARTIFACT: grammar, tokenizer, automata sizes, sections."""
    import json

    import glrmask_runtime

    from glrmask_cli import dot as dot_module
    from glrmask_cli import report

    art = glrmask_runtime.load(artifact)
    if dot is not None:
        click.echo(dot_module.dwa_dot(art) if dot == "dwa" else dot_module.lexer_dot(art), nl=False)
        return
    result = report.artifact_report(art)
    if prefix is not None:
        result["prefix"] = report.prefix_report(art, prefix, _encoder_for(art))
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    click.echo(report.format_report(result))
    if prefix is not None:
        click.echo(report.format_prefix_report(result["prefix"]))


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


@cli.command("check")
@click.argument("grammar", type=click.Path(exists=True, dir_okay=False))
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--start", default=None, help="Start rule [default: start].")
@user_errors
def check_command(grammar, files, start) -> None:
    """Check whole FILES against GRAMMAR with the semantics the masks use.

    Prints `FILE: ok` or `FILE: rejected at byte N: REASON` per file. Exit code 0 if all are ok,
    1 if any is rejected, 2 for a usage or grammar error.
    """
    from glrmask_cli.check import load_checker

    try:
        checker = load_checker(grammar, start)
    except GLRMaskError as err:   # a grammar that does not compile is a usage error here
        click.echo(f"Error: {str(err).splitlines()[0]}", err=True)
        sys.exit(2)
    rejected = 0
    for path in files:
        try:
            result = checker.check_file(path)
        except OSError as err:
            click.echo(f"Error: {path}: cannot read: {err.strerror}", err=True)
            sys.exit(2)
        rejected += not result.ok
        click.echo(result.line())
    sys.exit(1 if rejected else 0)


def main() -> None:
    cli(prog_name="glrmask")
