"""The Terminal DWA's outcomes agree with the runtime scanner fed the token's bytes, from every lexer
state: the scan (closes deferred: a token whose first byte cannot extend the open lexeme is left to
the runtime, with the terminal set it closes the lexeme as) and `spell_out_closes` (that token's
outcome spelled out: the closed lexeme, then what it does from START)."""

from __future__ import annotations

import random

import pytest

from devtools.builds import JSON_GRAMMAR, LARK_GRAMMARS, vocabulary
from glrmask_cli.grammar import load_grammar
from glrmask_cli.lexer.scanner import build_lexer
from glrmask_cli.terminal_dwa import FINAL_END, NO_OUTCOME, build_terminal_dwa, spell_out_closes
from glrmask_runtime.errors import InputRejected
from glrmask_runtime.lexer import Scanner
from glrmask_runtime.tables import DEAD, START

GRAMMARS = {"json": JSON_GRAMMAR, "lark": LARK_GRAMMARS / "lark.lark", "bounded": None}
# bounded repetitions: a lexer state per count, which tokens of different lengths tell apart
# differently (the scan's length tiers)
BOUNDED = 'start: (STR | NUM)+\nSTR: /"[a-z ,.]{0,40}"/\nNUM: /[0-9]{1,12}/\n%ignore " "\n'


def _expected(scanner: Scanner, ignored_only, state: int, data: bytes):
    """(closed lexemes' term sets without ignored-only ones, open lexeme's viable term set), or None."""
    try:
        closed, end = scanner.scan(state, data)
    except InputRejected:
        return None
    viable = int(scanner.tables.viable_sets[end])
    if viable == 0:
        return None
    return tuple(s for s in closed if not ignored_only(s)), viable


@pytest.fixture(scope="module", params=sorted(GRAMMARS))
def setup(request, tmp_path_factory):
    path = GRAMMARS[request.param]
    if path is None:
        path = tmp_path_factory.mktemp("bounded") / "bounded.lark"
        path.write_text(BOUNDED)
    spec = load_grammar(path)
    lexer = build_lexer(spec.terminals, spec.ignore, path).tables
    vocab = vocabulary("small-gpt2")
    deferred = build_terminal_dwa(lexer, vocab)
    return lexer, vocab, deferred, spell_out_closes(deferred, lexer)


def _sample(lexer, vocab, n: int = 4000):
    rng = random.Random(5)
    tokens = [v for v, b in enumerate(vocab.token_bytes) if b and v not in vocab.special_ids]
    return [(rng.randrange(1, lexer.n_states), rng.choice(tokens)) for _ in range(n)]


def test_outcomes_equal_the_scanner(setup):
    lexer, vocab, deferred, spelled = setup
    scanner = Scanner(lexer)
    ignored = {int(t) for t in lexer.ignored}
    ignored_only = lambda s: set(lexer.term_set(s)) <= ignored  # noqa: E731
    checked = deferred_seen = 0
    for state, token in _sample(lexer, vocab):
        data = vocab.token_bytes[token]
        expected = _expected(scanner, ignored_only, state, data)
        c = int(deferred.class_of_token[token])
        for tdwa in (deferred, spelled):
            close = int(tdwa.close_row(state)[c])
            if close:
                assert tdwa is deferred and state != START
                assert lexer.transitions[state, data[0]] == DEAD and close == lexer.close_sets[state, data[0]]
                deferred_seen += 1
                continue
            o = int(tdwa.outcome_row(state)[c])
            got = None if o == NO_OUTCOME else (tdwa.lexeme_sequence(tdwa.outcomes[o].node), tdwa.outcomes[o].final)
            assert got == expected, (state, data)
            checked += 1
    assert checked > 4000 and deferred_seen > 100


def test_eos_outcomes_agree(setup):
    lexer, _, deferred, spelled = setup
    for tdwa in (deferred, spelled):
        for state in range(1, lexer.n_states):
            o = int(tdwa.outcome_row(state)[tdwa.eos_class])
            closes = int(lexer.close_sets[state, 256])
            if state != START and not closes:
                assert o == NO_OUTCOME
            else:
                assert tdwa.outcomes[o].final == FINAL_END
                assert tdwa.lexeme_sequence(tdwa.outcomes[o].node) in ((), (closes,))


def test_spelled_out_keeps_the_deferred_ids(setup):
    """Outcomes and trie nodes the scan made keep their ids; a new trie node follows its parent."""
    _, _, deferred, spelled = setup
    assert spelled.outcomes[:len(deferred.outcomes)] == deferred.outcomes
    n = len(deferred.trie_parent)
    assert (spelled.trie_parent[:n] == deferred.trie_parent).all()
    assert all(spelled.trie_parent[node] < node for node in range(1, len(spelled.trie_parent)))
    assert not spelled.state_close.any() and len(spelled.outcomes) > len(deferred.outcomes)
