"""Test helper: every text up to a length over an alphabet, and the ones where a checker and a lark
judge disagree (the lexer suites' exhaustive oracle)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator

import lark

from devtools.lark_judge import lark_parses
from glrmask_cli.check import Checker


def short_texts(alphabet: str, max_length: int) -> Iterator[str]:
    for n in range(1, max_length + 1):
        for chars in itertools.product(alphabet, repeat=n):
            yield "".join(chars)


def disagreements(judge: lark.Lark, checker: Checker, texts: Iterable[str]) -> list[str]:
    return [t for t in texts if lark_parses(judge, t) != checker.check_bytes(t.encode()).ok]


def assert_lark_verdicts(judge: lark.Lark, checker: Checker, texts: Iterable[str]) -> None:
    """Every text gets the judge's verdict from the checker."""
    differ = disagreements(judge, checker, texts)
    assert differ == [], f"{len(differ)} texts differ from lark, e.g. {differ[:5]}"
