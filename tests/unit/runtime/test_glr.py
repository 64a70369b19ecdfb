"""The GLR driver against a naive GLR over explicit stacks, and the Recognizer on a real lexer."""

from __future__ import annotations

import random

import pytest

from devtools.cfg_text import as_normalized, cfg_from_text, sentences_and_mutations
from glrmask_cli.grammar import load_grammar_text
from glrmask_cli.lexer.scanner import build_lexer
from glrmask_cli.parser.cfg import build_cfg
from glrmask_cli.parser.lr import build_lr_tables
from glrmask_runtime import glr
from glrmask_runtime.errors import InputRejected
from glrmask_runtime.glr import _FALLBACK, GLRParser, GSSNode, iter_paths
from glrmask_runtime.recognizer import Recognizer
from glrmask_runtime.tables import ACCEPT, REDUCE, SHIFT, LRTables, unpack_action

STRESS = {
    "ambiguous": "e: e + e | e * e | N",
    "catalan": "s: s s | a",
    "reduce_reduce": "s: x c | y c | s x\nx: a | a a\ny: a",
    "nested_conflicts": "s: a s b | a s | c | s s",
    "unit_chain": "s: a | s ; a\na: b\nb: c\nc: N | ( s )",
}


def naive_step(tables: LRTables, stacks: set[tuple[int, ...]], t: int) -> set[tuple[int, ...]]:
    """GLR over explicit stacks (top first): finite because every rule pops at least one state."""
    closure, todo = set(stacks), list(stacks)
    while todo:
        stack = todo.pop()
        for a in tables.actions_of(stack[0], t).tolist():
            kind, arg = unpack_action(a)
            if kind == REDUCE:
                rest = stack[int(tables.rule_len[arg]):]
                new = (int(tables.goto[rest[0], tables.rule_lhs[arg]]),) + rest
                if new not in closure:
                    closure.add(new)
                    todo.append(new)
    if t == tables.end_terminal:
        return {s for s in closure if any(unpack_action(a)[0] == ACCEPT for a in tables.actions_of(s[0], t))}
    return {(unpack_action(a)[1],) + s for s in closure for a in tables.actions_of(s[0], t).tolist()
            if unpack_action(a)[0] == SHIFT}


def _paths(stacks) -> set[tuple[int, ...]]:
    return set(iter_paths(stacks, limit=10**6))


@pytest.mark.parametrize("name", sorted(STRESS))
def test_gss_paths_equal_naive_stacks(name):
    cfg = cfg_from_text(STRESS[name])
    tables = build_lr_tables(as_normalized(cfg))
    parser = GLRParser(tables)
    for sentence in sentences_and_mutations(cfg, seed=3, n=40):
        sentence = sentence[:10]
        stacks, naive = parser.initial(), {(0,)}
        for t in sentence:
            stacks, naive = parser.shift(stacks, [t]), naive_step(tables, naive, t)
            assert _paths(stacks) == naive, (sentence, t)
            assert len(stacks) <= tables.n_states
            if not naive:
                break
        assert parser.accepts_end(stacks) == bool(naive_step(tables, naive, tables.end_terminal))


@pytest.mark.parametrize("name", ["nested_conflicts", "catalan"])
def test_late_edge_is_reduced_through(name):
    """A reduction adds an edge to a top whose reductions already ran: paths through it must reduce too.

    `nested_conflicts` on random a/b/c strings hits that case (removing the re-reduction fails here).
    """
    cfg = cfg_from_text(STRESS[name])
    tables = build_lr_tables(as_normalized(cfg))
    parser = GLRParser(tables)
    rng = random.Random(5)
    for _ in range(40):
        stacks, naive = parser.initial(), {(0,)}
        for _ in range(rng.randrange(1, 9)):
            t = rng.randrange(tables.end_terminal)
            # feeding the same GSS in any order (and duplicated) must give the same stacks, through
            # every tier and through the general step alone (the linear tier decides most of these)
            reordered = tuple(reversed(stacks)) + stacks
            assert _paths(parser.shift(reordered, [t])) == naive_step(tables, naive, t)
            assert _paths(parser._general_shift(reordered, [t])) == naive_step(tables, naive, t)
            stacks, naive = parser.shift(stacks, [t]), naive_step(tables, naive, t)
            assert _paths(stacks) == naive
            if not naive:
                break


def test_inputs_are_never_mutated():
    cfg = cfg_from_text(STRESS["ambiguous"])
    parser = GLRParser(build_lr_tables(as_normalized(cfg)))
    n, plus = cfg.terminal_names.index("N"), cfg.terminal_names.index("+")
    stacks = parser.initial()
    history = []
    for t in [n, plus, n, plus, n]:
        history.append((stacks, _paths(stacks)))
        stacks = parser.shift(stacks, [t])
        parser.shift(stacks, [plus])
        parser.accepts_end(stacks)
        parser.expected_terminals(stacks)
    for old, paths in history:
        assert _paths(old) == paths


@pytest.mark.parametrize("name", sorted(STRESS))
def test_queries_agree_with_shift(name):
    cfg = cfg_from_text(STRESS[name])
    tables = build_lr_tables(as_normalized(cfg))
    parser = GLRParser(tables)
    for sentence in sentences_and_mutations(cfg, seed=11, n=15):
        stacks = parser.initial()
        for t in sentence[:8]:
            expected = [u for u in range(tables.end_terminal) if parser.shift(stacks, [u])]
            assert [u for u in range(tables.end_terminal) if parser.can_shift(stacks, u)] == expected
            if parser.accepts_end(stacks):
                expected.append(tables.end_terminal)
            assert parser.expected_terminals(stacks) == expected
            # a duplicated top, and the general step alone, give the same stacks
            both = parser.shift(stacks, [t])
            assert _paths(parser.shift(stacks + stacks, [t])) == _paths(both)
            assert _paths(parser._general_shift(stacks + stacks, [t])) == _paths(both)
            stacks = both
            if not stacks:
                break


def test_shift_of_several_terminals_is_the_union():
    cfg = cfg_from_text(STRESS["reduce_reduce"])
    tables = build_lr_tables(as_normalized(cfg))
    parser = GLRParser(tables)
    a, c = cfg.terminal_names.index("a"), cfg.terminal_names.index("c")
    stacks = parser.shift(parser.initial(), [a])
    assert _paths(parser.shift(stacks, [a, c])) == _paths(parser.shift(stacks, [a])) | _paths(parser.shift(stacks, [c]))


@pytest.mark.parametrize("name", sorted(STRESS))
def test_linear_step_makes_the_general_steps_cells(name):
    """Where the linear step decides, its stacks are the general step's, and where no two of its tops
    meet they are the very cells the general step interns (so memos keyed by stacks stay shared), for
    single terminals and sets of them; END agrees with brute force."""
    cfg = cfg_from_text(STRESS[name])
    tables = build_lr_tables(as_normalized(cfg))
    parser = GLRParser(tables)
    rng = random.Random(7)
    decided = fell_back = alone = 0
    for sentence in sentences_and_mutations(cfg, seed=13, n=30):
        stacks, naive = parser.initial(), {(0,)}
        for t in sentence[:10]:
            for terms in ([t], [t, rng.randrange(tables.end_terminal)]):
                linear = parser._linear_shift(stacks, terms)
                if linear is _FALLBACK:
                    fell_back += 1
                    continue
                decided += 1
                general = parser._general_shift(stacks, terms)
                assert [n.state for n in linear] == [n.state for n in general], (sentence, terms)
                assert _paths(linear) == _paths(general), (sentence, terms)
                if not _tops_meet(parser, stacks, terms):
                    assert all(a is b for a, b in zip(linear, general)), (sentence, terms)
                    alone += 1
            end = naive_step(tables, naive, tables.end_terminal)
            assert parser.accepts_end(stacks) == bool(end)
            stacks, naive = parser.shift(stacks, [t]), naive_step(tables, naive, t)
            if not naive:
                break
    assert alone > 0
    if name in ("ambiguous", "catalan", "nested_conflicts"):
        assert decided > alone                        # tops that met were merged
    if name in ("catalan", "nested_conflicts"):
        assert fell_back > 0                          # branches past the budget


def _tops_meet(parser: GLRParser, stacks, terms) -> bool:
    """Whether two different shifting tops of the linear step share a state or a shift target."""
    by_state, by_target = {}, {}
    for t in terms:
        for state, (shifts, _, _), node, reduced in parser._linear_tops(stacks, t):
            key = (id(node), reduced)
            if shifts and by_state.setdefault(state, key) != key:
                return True
            for target in shifts:
                if by_target.setdefault(target, (state, key)) != (state, key):
                    return True
    return False


def test_linear_step_leaves_long_branches_to_the_general_step(monkeypatch):
    """With no actions allowed to the linear step, every reduction falls back, with the same stacks."""
    cfg = cfg_from_text(STRESS["unit_chain"])
    tables = build_lr_tables(as_normalized(cfg))
    parser = GLRParser(tables)
    monkeypatch.setattr(glr, "LINEAR_ACTIONS", 0)
    reductions = 0
    for sentence in sentences_and_mutations(cfg, seed=2, n=20):
        stacks, naive = parser.initial(), {(0,)}
        for t in sentence[:10]:
            if parser._linear_tops(stacks, t) is _FALLBACK:
                reductions += 1
            stacks, naive = parser.shift(stacks, [t]), naive_step(tables, naive, t)
            assert _paths(stacks) == naive
            if not naive:
                break
    assert reductions > 0


@pytest.mark.parametrize("name", ["ambiguous", "nested_conflicts"])
def test_remembered_steps_are_the_computed_ones(name):
    """A step met again is answered from memory with the very cells computing it gives (and the
    naive stacks); forgetting changes no answer."""
    cfg = cfg_from_text(STRESS[name])
    tables = build_lr_tables(as_normalized(cfg))
    parser = GLRParser(tables)
    hits = 0
    for sentence in sentences_and_mutations(cfg, seed=5, n=20):
        stacks, naive = parser.initial(), {(0,)}
        for t in sentence[:8]:
            first = parser.shift(stacks, [t])
            remembered = (stacks, (t,)) in parser._steps      # else the single step decided it
            again = parser.shift(stacks, (t,))
            parser.forget_steps()
            computed = parser.shift(stacks, [t])
            hits += remembered and again is first
            assert all(a is b for a, b in zip(again, first, strict=True))
            assert all(a is b for a, b in zip(computed, first, strict=True))
            stacks, naive = first, naive_step(tables, naive, t)
            assert _paths(stacks) == naive
            if not naive:
                break
    assert hits > 0


def test_a_full_step_memory_stays_at_its_limit():
    cfg = cfg_from_text(STRESS["ambiguous"])
    parser = GLRParser(build_lr_tables(as_normalized(cfg)))
    parser._steps.limit = 3
    sizes = []
    for sentence in sentences_and_mutations(cfg, seed=8, n=20):
        stacks = parser.initial()
        for t in sentence[:8]:
            stacks = parser.shift(stacks, [t])
            sizes.append(len(parser._steps))
            if not stacks:
                break
    full = sizes.index(3)
    assert max(sizes) == 3 and all(size == 3 for size in sizes[full:])    # once full, it stays full


def test_deterministic_chain_is_fast_path_node():
    cfg = cfg_from_text("s: s ; a | a\na: N")
    parser = GLRParser(build_lr_tables(as_normalized(cfg)))
    stacks = parser.initial()
    for t in [1, 0, 1, 0, 1]:
        stacks = parser.shift(stacks, [t])
        assert len(stacks) == 1 and isinstance(stacks[0], GSSNode)
    assert parser.accepts_end(stacks)


# ---- Recognizer -------------------------------------------------------------------------------------

JSONISH = r'''
start: value
?value: "[" [value ("," value)*] "]" | NUMBER | WORD | "true"
NUMBER: /-?[0-9]+/
WORD: /[a-z]+/
%ignore " "
'''


def _recognizer(text: str) -> Recognizer:
    spec = load_grammar_text(text, name="t.lark")
    lexer = build_lexer(spec.terminals, spec.ignore).tables
    try:
        from glrmask_cli.parser.normalize import normalize
    except ImportError:  # the normalizer is being written in parallel
        normalize = as_normalized
    lr = build_lr_tables(normalize(build_cfg(spec)))
    return Recognizer(lexer, lr, [t.display for t in spec.terminals])


@pytest.mark.parametrize("text,ok,finished", [
    (b"[1, 2, [true, abc]]", True, True),
    (b"[1, 2", True, False),
    (b"[1 2]", False, False),
    (b"[1,,2]", False, False),
    (b"tru", True, True),          # WORD
    (b"[-", True, False),          # an open lexeme that can still become NUMBER
    (b"[1]]", False, False),
    (b"", True, False),
])
def test_recognizer_document(text, ok, finished):
    r = _recognizer(JSONISH)
    if not ok:
        with pytest.raises(InputRejected):
            r.feed(r.initial(), text)
        return
    state = r.feed(r.initial(), text)
    assert r.is_viable(state) and r.can_finish(state) == finished


def test_recognizer_bytewise_equals_whole_and_state_unchanged():
    r = _recognizer(JSONISH)
    text = b"[ 12 , [ab, true] ,3]"
    whole = r.feed(r.initial(), text)
    state = r.initial()
    for i in range(len(text)):
        before = state
        state = r.feed(state, text[i:i + 1])
        with pytest.raises(InputRejected):
            r.feed(before, b"]]]")
        assert before is not state
    assert r.can_finish(state) and r.can_finish(whole)


def test_recognizer_error_names_terminals_and_position():
    r = _recognizer(JSONISH)
    with pytest.raises(InputRejected) as info:
        r.feed(r.initial(), b"[1 2]")
    assert info.value.position == 3
    assert '","' in info.value.expected and '"]"' in info.value.expected
    assert "NUMBER" in info.value.reason
