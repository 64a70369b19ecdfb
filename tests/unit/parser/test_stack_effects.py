"""Stack effects against the real GLR parser on stacks reached by parsing random inputs."""

from __future__ import annotations

import pytest

from devtools.cfg_text import as_normalized, cfg_from_text, sentences_and_mutations
from devtools.flat_stack_effects import build_stack_effects
from glrmask_cli.errors import LimitExceeded
from glrmask_cli.parser.lr import build_lr_tables
from glrmask_cli.parser.normalize import normalize
from glrmask_cli.parser.stack_effects import ANY, Reach, StackEffect, build_effect_graphs, reach_by_top
from glrmask_runtime.glr import GLRParser, GSSNode, iter_paths

LEFT_RECURSIVE = {
    "expr": "e: e + t | t\nt: t * f | f\nf: ( e ) | N",
    "lists": "s: [ xs ] | [ ]\nxs: xs , x | x\nx: N | s",
    "unit_chain": "s: a | s ; a\na: b\nb: c\nc: N | ( s )",
    "reduce_reduce": "s: x c | y c | s x\nx: a | a a\ny: a",
}
# these need the normalizer (right recursion / ambiguity)
NEEDS_NORMALIZE = {
    "ambiguous": "e: e + e | e * e | N",
    "right_recursive": "s: a s | a",
    "dangling_else": "s: i s | i s l s | o",
}


def _linear(path: tuple[int, ...]) -> tuple[GSSNode, ...]:
    node = None
    for state in reversed(path):
        node = GSSNode(state, (node,) if node is not None else ())
    return (node,)


def _reachable_stacks(cfg, parser: GLRParser) -> set[tuple[int, ...]]:
    stacks: set[tuple[int, ...]] = set()
    for sentence in sentences_and_mutations(cfg, seed=13, n=40):
        gss = parser.initial()
        for t in sentence:
            stacks.update(iter_paths(gss, limit=200))
            gss = parser.shift(gss, [t])
            if not gss:
                break
    return stacks


def _check(cfg, grammar) -> None:
    tables = build_lr_tables(grammar)
    parser = GLRParser(tables)
    effects = build_stack_effects(tables)
    end = tables.end_terminal
    for effs in effects.by_terminal:
        assert list(effs) == sorted(set(effs))
    assert effects.max_read_depth == max(len(e.reads) for effs in effects.by_terminal for e in effs)
    assert all(e.writes == () for e in effects.by_terminal[end])
    stacks = _reachable_stacks(cfg, parser)
    assert len(stacks) > 2
    for path in stacks:
        for t in range(tables.n_terminals):
            matching = [e for e in effects.by_terminal[t] if e.matches(path)]
            if t == end:
                assert parser.accepts_end(_linear(path)) == bool(matching), path
                continue
            real = set(iter_paths(parser.shift(_linear(path), [t])))
            assert real == {e.apply(path) for e in matching}, (path, t)


@pytest.mark.parametrize("name", sorted(LEFT_RECURSIVE))
def test_effects_equal_glr_on_reachable_stacks(name):
    cfg = cfg_from_text(LEFT_RECURSIVE[name])
    _check(cfg, as_normalized(cfg))


@pytest.mark.parametrize("name", sorted(NEEDS_NORMALIZE))
def test_effects_equal_glr_after_normalization(name):
    grammar = normalize(cfg_from_text(NEEDS_NORMALIZE[name]))
    _check(grammar.cfg, grammar)


def test_right_recursion_without_normalization_hits_the_limit():
    tables = build_lr_tables(as_normalized(cfg_from_text("s: a s | a")))
    with pytest.raises(LimitExceeded, match="stack effects"):
        build_stack_effects(tables)


def test_reads_never_end_with_any_and_apply_keeps_the_deepest_read():
    tables = build_lr_tables(as_normalized(cfg_from_text(LEFT_RECURSIVE["expr"])))
    for effs in build_stack_effects(tables).by_terminal:
        for e in effs:
            assert e.reads and e.reads[-1] != ANY
    effect = StackEffect(reads=(5, ANY, 3), writes=(7, 9))
    assert effect.matches((5, 8, 3, 0)) and not effect.matches((5, 8, 4, 0)) and not effect.matches((5, 8))
    assert effect.apply((5, 8, 3, 0)) == (9, 7, 3, 0)


@pytest.mark.parametrize("name", sorted(LEFT_RECURSIVE))
def test_effect_graph_spells_exactly_the_flat_effects(name):
    tables = build_lr_tables(as_normalized(cfg_from_text(LEFT_RECURSIVE[name])))
    flat = build_stack_effects(tables).by_terminal
    graphs = build_effect_graphs(tables)
    for t, graph in enumerate(graphs):
        assert graph.terminal == t
        assert sorted(set(graph.iter_effects())) == list(flat[t])


@pytest.mark.parametrize("name", sorted(LEFT_RECURSIVE))
def test_reach_by_top_is_what_the_flat_effects_read_and_lower(name):
    """Per first read state: the longest read, and per state left on top the most the stack is lowered
    (reads past the exposed state minus writes) and the longest read of the effects leaving it, as the
    splice bounds positions with them."""
    tables = build_lr_tables(as_normalized(cfg_from_text(LEFT_RECURSIVE[name])))
    flat = build_stack_effects(tables).by_terminal
    for t, graph in enumerate(build_effect_graphs(tables)):
        expected: dict[int, tuple[int, dict[int, tuple[int, int]]]] = {}
        for e in flat[t]:
            reads, after = expected.setdefault(e.reads[0], (0, {}))
            top = e.writes[-1] if e.writes else e.reads[-1]
            lowered, longest = after.get(top, (-10**9, 0))
            after[top] = (max(lowered, len(e.reads) - 1 - len(e.writes)), max(longest, len(e.reads)))
            expected[e.reads[0]] = (max(reads, len(e.reads)), after)
        assert reach_by_top(graph) == {top: Reach(reads, tuple((s, lo, n) for s, (lo, n) in sorted(after.items())))
                                       for top, (reads, after) in expected.items()}


def test_effect_graph_is_small_where_flat_effects_explode():
    """A 12-level precedence chain: flat effects multiply per level, graph nodes only add up."""
    levels = [f"e{i}: e{i} o{i} e{i + 1} | e{i + 1}" for i in range(12)]
    cfg = cfg_from_text("\n".join(levels + ["e12: N | ( e0 )"]))
    tables = build_lr_tables(as_normalized(cfg))
    graphs = build_effect_graphs(tables)
    close = cfg.terminal_names.index(")")
    nodes = len(graphs[close].edges)
    flat = sum(1 for _ in graphs[close].iter_effects())
    assert nodes * 20 < flat
