"""The shift/reduce conflicts lark's LALR parser resolves as shifts, judged by lark itself: its own
debug log of the resolutions, its verdicts on texts, and its refusal of reduce/reduce collisions."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from lark import Lark
from lark.exceptions import GrammarError, UnexpectedInput

from devtools.builds import vocabulary
from glrmask_cli.grammar import load_grammar_text
from glrmask_cli.parser.lark_lalr import shift_preferred, shift_preferred_warnings
from glrmask_cli.pipeline import artifact_metadata, compile_grammar

ROOT = Path(__file__).resolve().parents[3]

NEEDS_REDUCTION = 'start: "a" "b" "c" | t "b"\nt: "a"\n'
GRAMMARS = {
    "needs_reduction": NEEDS_REDUCTION,
    "dangling_else": 'start: stmt\nstmt: "if" "x" stmt | "if" "x" stmt "else" stmt | "go"\n%ignore " "\n',
    "operators": 'start: e\ne: e "+" e | e "*" e | "n"\n',
    "empty_before_shift": 'start: a "x" | "x" "y"\na: \n',
    # after "x" on "z": reduce by a or b (lark keeps a, the higher priority), or shift for c
    "priority_settles_reduce_reduce": 'start: a "z" | b "z" | c\nc: "x" "z" "q"\na.2: "x"\nb: "x"\n',
    "json": (ROOT / "grammars" / "json.lark").read_text(),
}


def _lark_resolutions(text: str) -> int:
    """How many shift/reduce conflicts lark logs as resolved by shifting while it builds its LALR parser."""
    seen: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    logger = logging.getLogger("lark")
    handler, level = Collect(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        Lark(text, parser="lalr", lexer="basic")
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    return sum("Shift/Reduce conflict" in message for message in seen)


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_counts_the_conflicts_lark_resolves_by_shifting(name: str) -> None:
    text = GRAMMARS[name]
    assert len(shift_preferred(load_grammar_text(text))) == _lark_resolutions(text)


def test_names_the_reduction_lark_drops_and_lark_rejects_the_text_that_needs_it() -> None:
    conflicts = shift_preferred(load_grammar_text(NEEDS_REDUCTION))
    assert [(c.terminal, c.rule) for c in conflicts] == [('"b"', 't: "a"')]
    with pytest.raises(UnexpectedInput):
        Lark(NEEDS_REDUCTION, parser="lalr").parse("ab")
    Lark(NEEDS_REDUCTION, parser="earley").parse("ab")      # the grammar derives it


def test_an_empty_rule_is_shown_as_such() -> None:
    conflicts = shift_preferred(load_grammar_text(GRAMMARS["empty_before_shift"]))
    assert {c.rule for c in conflicts} == {"a: <empty>"}


def test_nothing_is_reported_where_lark_refuses_the_grammar_for_lalr() -> None:
    text = 'start: a "z" | b "z"\na: "x"\nb: "x"\n'        # a reduce/reduce collision of equal priority
    with pytest.raises(GrammarError):
        Lark(text, parser="lalr")
    assert shift_preferred(load_grammar_text(text)) == ()


def test_the_warning_counts_every_conflict_and_names_distinct_ones() -> None:
    conflicts = shift_preferred(load_grammar_text(GRAMMARS["operators"]))
    (warning,) = shift_preferred_warnings(conflicts)
    assert f"resolves {len(conflicts)} shift/reduce conflicts" in warning
    assert warning.count("rather than reduce by") == min(len(set(conflicts)), 3)
    assert shift_preferred_warnings(()) == ()


def test_a_build_carries_the_warning_in_its_metadata(tmp_path: Path) -> None:
    small = vocabulary("small-gpt2")
    path = tmp_path / "g.lark"
    path.write_text(NEEDS_REDUCTION)
    compiled = compile_grammar(path, tokenizer=small, jobs=1)
    (warning,) = artifact_metadata(compiled)["parser"]["warnings"]
    assert 'it shifts "b" rather than reduce by `t: "a"`' in warning
    json_path = tmp_path / "json.lark"
    json_path.write_text(GRAMMARS["json"])
    assert artifact_metadata(compile_grammar(json_path, tokenizer=small, jobs=1))["parser"]["warnings"] == []
