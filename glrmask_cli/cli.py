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


def main() -> None:
    cli(prog_name="glrmask")
