"""The LR quotient (parser/quotient.py) against the real GLR parser: on stacks reached by parsing
random inputs, consuming any terminal and mapping the result to classes gives exactly what the
quotient tables give on the mapped stack, and "the top has an action" agrees; interchangeable
terminals and rule-only differences are folded."""

from __future__ import annotations

import pytest

from devtools.cfg_text import as_normalized, cfg_from_text, sentences_and_mutations
from glrmask_cli.parser.lr import build_lr_tables
from glrmask_cli.parser.normalize import normalize
from glrmask_cli.parser.quotient import quotient
from glrmask_runtime.glr import GLRParser, GSSNode, iter_paths

GRAMMARS = {
    "operators": "e: e + t | e - t | t\nt: t * f | t / f | f\nf: ( e ) | N | M",
    "lists": "s: [ xs ] | [ ]\nxs: xs , x | xs ; x | x\nx: N | s",
    "keywords": "s: s st | st\nst: if c then s end | while c do s end | N = c ;\nc: N | N < N | N > N",
    "reduce_reduce": "s: x c | y c | s x\nx: a | a a\ny: a",
}
AMBIGUOUS = {"ambiguous": "e: e + e | e * e | N | M"}


def _linear(path: tuple[int, ...]) -> tuple[GSSNode, ...]:
    node = None
    for state in reversed(path):
        node = GSSNode(state, (node,) if node is not None else ())
    return (node,)


def _check(cfg, grammar) -> None:
    tables = build_lr_tables(grammar)
    q = quotient(tables)
    real, folded = GLRParser(tables), GLRParser(q.tables)
    end = tables.end_terminal
    assert q.terminal_class[end] == q.tables.end_terminal
    stacks: set[tuple[int, ...]] = set()
    for sentence in sentences_and_mutations(cfg, seed=5, n=60):
        gss = real.initial()
        for t in sentence:
            stacks.update(iter_paths(gss, limit=200))
            gss = real.shift(gss, [t])
            if not gss:
                break
    assert len(stacks) > 5
    to_class = lambda path: tuple(int(q.state_class[s]) for s in path)  # noqa: E731
    for path in stacks:
        mapped = to_class(path)
        for t in range(tables.n_terminals):
            k = int(q.terminal_class[t])
            assert bool(len(tables.actions_of(path[0], t))) == bool(len(q.tables.actions_of(mapped[0], k)))
            if t == end:
                assert real.accepts_end(_linear(path)) == folded.accepts_end(_linear(mapped)), path
                continue
            after = {to_class(p) for p in iter_paths(real.shift(_linear(path), [t]))}
            assert after == set(iter_paths(folded.shift(_linear(mapped), [k]))), (path, t)


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_quotient_steps_as_the_real_parser(name):
    cfg = cfg_from_text(GRAMMARS[name])
    _check(cfg, as_normalized(cfg))


@pytest.mark.parametrize("name", sorted(AMBIGUOUS))
def test_quotient_steps_as_the_real_parser_with_conflicts(name):
    grammar = normalize(cfg_from_text(AMBIGUOUS[name]))
    _check(grammar.cfg, grammar)


def test_interchangeable_terminals_and_rules_fold():
    cfg = cfg_from_text(GRAMMARS["operators"])
    tables = build_lr_tables(as_normalized(cfg))
    q = quotient(tables)
    name = {cfg.name(t): t for t in range(tables.n_terminals - 1)}
    same = lambda a, b: q.terminal_class[name[a]] == q.terminal_class[name[b]]  # noqa: E731
    assert same("+", "-") and same("*", "/") and same("N", "M")
    assert not same("+", "*") and not same("(", ")")
    assert q.n_state_classes < tables.n_states
    # one rule per (left-hand side, length): e -> e + t and e -> e - t are one
    assert len(q.tables.rule_len) < len(tables.rule_len)


def test_ignored_terminals_and_lexer_contexts_stay_apart():
    cfg = cfg_from_text(GRAMMARS["operators"])
    tables = build_lr_tables(as_normalized(cfg))
    name = {cfg.name(t): t for t in range(tables.n_terminals - 1)}
    q = quotient(tables, ignored=[name["M"]])
    assert q.terminal_class[name["N"]] != q.terminal_class[name["M"]]
    # states of different lexer contexts are never one class
    contexts = [s % 2 for s in range(tables.n_states)]
    q = quotient(tables, lexer_start=contexts)
    for members in q.members:
        assert len({contexts[int(s)] for s in members}) == 1
