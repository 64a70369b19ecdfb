"""The compiler census counts what the rework's quotients would fold, on grammars where the answer
is known by construction."""

from __future__ import annotations

from devtools.builds import JSON_GRAMMAR, vocabulary
from devtools.compiler_census import lr_census, outcome_census
from glrmask_cli.grammar import load_grammar_text
from glrmask_cli.parser.cfg import build_cfg
from glrmask_cli.parser.lr import build_lr
from glrmask_cli.parser.normalize import normalize
from glrmask_cli.pipeline import compile_grammar

KEYWORDS = """
start: stmt+
stmt: type NAME ";" | NAME "=" value ";"
type: "int" | "long" | "char"
value: NAME | "null" | "true"
NAME: /[a-z]+/
%ignore " "
"""


def test_keywords_of_one_context_share_their_presence_but_not_their_columns():
    spec = load_grammar_text(KEYWORDS)
    census = lr_census(build_lr(normalize(build_cfg(spec))).tables)
    # the three type keywords have actions in the same states (one presence class), so do the two
    # values; each still shifts to its own state, so no two columns are equal
    assert census.terminals == len(spec.terminals) + 1
    assert census.presence_classes <= census.terminals - 3
    assert census.column_classes == census.terminals
    assert census.bisimulation_classes <= census.states
    # the compiler's quotient folds the type keywords into one terminal class (same columns once
    # their shift targets are classed together)
    assert census.quotient_states < census.states and census.quotient_terminals <= census.terminals - 2


def test_outcome_census_of_json_counts_single_lexeme_tokens():
    compiled = compile_grammar(JSON_GRAMMAR, tokenizer=vocabulary("small-gpt2"))
    census = outcome_census(compiled.terminal_dwa)
    assert census.token_classes == compiled.terminal_dwa.n_classes and census.live_pairs > 0
    assert 0.5 < census.single_lexeme_share <= 1.0   # JSON tokens mostly stay inside one lexeme
