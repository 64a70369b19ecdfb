"""glrmask_cli.parser.normalize: language preservation judged by lark's Earley parser.

Random small grammars (hypothesis) are compared on every string up to a length and on generated
sentences of both grammars; real grammars on generated sentences and their one-edit mutations.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import os
import random
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import lark
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from devtools.data import syncode_grammar
from devtools.lark_judge import EarleyJudge, mutations, random_sentence
from glrmask_cli.errors import LimitExceeded, NormalizationError
from glrmask_cli.grammar import load_grammar, load_grammar_text
from glrmask_cli.parser.cfg import CFG, Rule, build_cfg
from glrmask_cli.parser.lr import build_lr
from glrmask_cli.parser.normalize import check_normalized, normalize, rules_by_name

ROOT = Path(__file__).resolve().parents[3]
LARK_GRAMMARS = Path(lark.__file__).parent / "grammars"
SHARED = ROOT.parent / "shared"
MAX_SENTENCE = 12


def _all_strings(n_terminals: int, max_len: int):
    for n in range(max_len + 1):
        yield from itertools.product(range(n_terminals), repeat=n)


def _verdicts(judge: EarleyJudge, strings) -> dict[tuple[int, ...], bool]:
    return {s: judge.accepts_terminals(s) for s in strings}


def _assert_same_language(cfg: CFG, strings) -> None:
    """normalize(cfg) + accepts_empty accepts exactly what cfg accepts, on `strings` and on
    sentences generated from either grammar."""
    result = normalize(cfg)
    check_normalized(result.cfg)
    original, normalized = EarleyJudge.from_cfg(cfg), EarleyJudge.from_cfg(result.cfg)
    rng = random.Random(0)
    pool = set(strings)
    for grammar in (cfg, result.cfg):
        for _ in range(20):
            s = random_sentence(grammar, rng)
            if s is not None and len(s) <= MAX_SENTENCE:  # Earley is slow on long, very ambiguous input
                pool.add(s)
                pool.update(mutations(s, list(range(cfg.n_terminals - 1)), rng, 2))
    expected = _verdicts(original, pool)
    got = {s: (result.accepts_empty if s == () else normalized.accepts_terminals(s)) for s in pool}
    diff = sorted((s for s in pool if expected[s] != got[s]), key=len)
    assert not diff, (f"first difference {diff[0]}: original {expected[diff[0]]}\n"
                      f"{rules_by_name(cfg)}\n-> {rules_by_name(result.cfg)}")


# ---------------------------------------------------------------- random grammars

@st.composite
def small_cfgs(draw) -> CFG:
    n_t = draw(st.integers(1, 3))
    n_n = draw(st.integers(1, 4))
    symbols = list(range(n_t)) + [n_t + 1 + i for i in range(n_n)]
    nt = st.integers(n_t + 1, n_t + n_n)
    rhs = st.lists(st.sampled_from(symbols), max_size=4).map(tuple)
    rules = draw(st.lists(st.builds(Rule, nt, rhs), min_size=1, max_size=9, unique=True))
    return CFG(tuple("ABC"[:n_t]) + ("$END",), tuple(f"n{i}" for i in range(n_n)), tuple(rules), n_t + 1)


def _nullable(cfg: CFG) -> set[int]:
    out: set[int] = set()
    while True:
        new = {r.lhs for r in cfg.rules if all(s in out for s in r.rhs)} - out
        if not new:
            return out
        out |= new


def _check_cycle_claim(cfg: CFG, message: str) -> None:
    """The cycle named in the error exists: each step A => B is A -> x B y with x, y nullable."""
    names = re.search(r"cyclic \(([^)]*)\)", message).group(1).split(" => ")
    ids = {cfg.name(s): s for s in range(cfg.n_terminals, cfg.n_terminals + len(cfg.nonterminal_names))}
    nullable = _nullable(cfg)
    for a, b in zip(names, names[1:], strict=False):
        assert any(r.lhs == ids[a] and ids[b] in r.rhs and
                   all(s in nullable for i, s in enumerate(r.rhs) if i != r.rhs.index(ids[b]) or
                       s != ids[b]) for r in cfg.rules), (a, b, message)


@settings(suppress_health_check=[HealthCheck.too_slow],
          max_examples=int(os.environ.get("GLRMASK_TEST_EXAMPLES", "100")) // 4)
@given(small_cfgs())
def test_random_grammars_keep_their_language(cfg):
    max_len = {1: 7, 2: 5, 3: 4}[cfg.n_terminals - 1]
    strings = list(_all_strings(cfg.n_terminals - 1, max_len))
    try:
        _assert_same_language(cfg, strings)
    except NormalizationError as e:
        judge = EarleyJudge.from_cfg(cfg)
        accepted = [s for s in strings if judge.accepts_terminals(s)]
        if "language is empty" in str(e):
            assert accepted == []
        elif "only the empty string" in str(e):
            assert accepted == [()]
        else:
            assert "cyclic" in str(e), str(e)
            _check_cycle_claim(cfg, str(e))


# ---------------------------------------------------------------- hand-made cases

def _cfg(text: str, start: str | None = None) -> CFG:
    return build_cfg(load_grammar_text(text, start=start))


@pytest.mark.parametrize("text", [
    'e: e "+" e | e "*" e | "(" e ")" | "1"',                            # ambiguous, right recursive
    'e: "-" e | "1" | e "!"',                                            # prefix and postfix
    'start: a\na: "x" b | "y"\nb: "z" a | "w" a "v"',                      # indirect right recursion
    'start: "x"* "y"? start?',                                           # nullable, hidden recursion
    'start: a b\na: "x"? a? "y"\nb: b? "z"?',                              # hidden left + right recursion
    'start: "a" "b" "c" "d" "e" "f" "g" "h" "i" | "a" "b" "c" "d" "x"',  # long rules, shared prefix
    'e: e "+" e | "-" e | e "!" | "(" e ")" | e "[" e "]" | "1"',         # infix, prefix, postfix, inside
    'e: e "?" e ":" e | e e | "a"',                                        # ternary, concatenation
    'start: "(" (e ("," e)* ","?)? ")"\ne: "x" | start',                  # list, trailing comma
    'start: a ("," a)* ("," b)? | b\nb: "y" ("," "y")*\na: "x" | "x" "y"',   # lists, more after them
    'start: "(" (e ("," e)+ ","? | e ",") ")"\ne: "x" | start',            # a tuple: x+ and x* of one list
    'e: o | e "." "n" | t\nt: v | "[" "]" t\nv: "n" "." "n" | "n"\no: "n" | "(" e ")"',  # a name twice
    'start: a | b\na: "x" | "y" "y"\nb: c | "z"\nc: "x" | "y" d\nd: "y"',      # readings that cover each other
])
def test_hand_made_grammars_keep_their_language(text):
    cfg = _cfg(text, start=text.split(":")[0])
    strings = list(_all_strings(min(cfg.n_terminals - 1, 4), 4))
    _assert_same_language(cfg, strings)


def test_normalized_invariant_and_rhs_bound():
    result = normalize(_cfg('start: "a" start | "b" "c" "d" "e" "f" "g" start | "h"'), max_rhs_length=3)
    assert all(0 < len(r.rhs) <= 3 for r in result.cfg.rules)
    assert any("right recursion" in line for line in result.rewrites)
    assert any("split" in line for line in result.rewrites)


@pytest.mark.parametrize("max_rhs_length", [2, 3, 4])
@pytest.mark.parametrize("text", [
    'start: "s" "a"? "b" "c"? "d"? "e" "f"? "g"?',                       # optional parts: many lengths
    'start: "x" "y" "z" "w" "v" | "x" "y" "z" "w" | "x" "y" "z" "w" "v" "u" "t"',
    'start: "s" item ("," item)* ";"\nitem: "i" "j"? "k"? "l"? "m"?',
])
def test_splitting_long_rules_adds_no_conflict(text, max_rhs_length):
    """Rules of an LR(1) grammar that begin alike are cut at the same places, so the parser never
    has to guess where a helper ends: the split grammar is LR(1) too (no forked stacks at run time)."""
    result = normalize(_cfg(text, start="start"), max_rhs_length=max_rhs_length)
    assert all(len(r.rhs) <= max_rhs_length for r in result.cfg.rules)
    assert any("split" in line for line in result.rewrites)
    assert build_lr(result).conflicts == ()


@pytest.mark.parametrize("text", [
    'start: "(" (e ("," e)* ","?)? ")"\ne: "x" | "[" e "]"',
    'start: "(" args? ")"\nargs: e ("," e)* ("," "*" e)? ","?\ne: "x" | "(" e ")"',
    'start: "(" (e ("," e)+ ","? | e ",") ")"\ne: "x" | "(" e ")"',      # a tuple: x+ and x* of one list
])
def test_repetitions_become_lists_without_a_fork(text):
    """`e ("," e)*` before an optional trailing comma: LR(1) cannot tell after `e` whether a comma
    ends the list or continues it, but the left-recursive list reads that comma in one state."""
    cfg = _cfg(text, start="start")
    result = normalize(cfg)
    assert any(line.startswith("repetitions made left-recursive lists") for line in result.rewrites)
    assert build_lr(result).conflicts == ()


def test_repetitions_that_do_not_fork_are_left_alone():
    """A list whose separator never follows it (json's arrays) does not fork: it keeps lark's form."""
    result = normalize(_cfg('start: "[" (e ("," e)*)? "]"\ne: "x" | start', start="start"))
    assert not any(line.startswith("repetitions made left-recursive lists") for line in result.rewrites)
    assert build_lr(result).conflicts == ()


@pytest.mark.parametrize("text", [
    'e: o | e "." "n" | e "(" ")" | t\nt: v | "[" "]"\nv: "n" "." "n" | "n"\no: "n" | "(" e ")"',
    'start: a | b\na: "x" | "y"\nb: "x" | "z"',
])
def test_alternatives_another_rule_derives_are_dropped(text):
    """An operand `n` that is also a type name `n` (and `n.n` a selector or a qualified name): the
    readings through the unit chain that another rule already derives are dropped, leaving no
    conflict; the language is checked above."""
    result = normalize(_cfg(text, start=text.split(":")[0]))
    assert any("another rule derives dropped" in line for line in result.rewrites)
    assert build_lr(result).conflicts == ()


@pytest.mark.parametrize("text", [
    'e: e "+" e | e "*" e | "-" e | e "!" | "(" e ")" | "1"',
    'e: e "+" e | "-" e | e "!" | "(" e ")" | e "[" e "]" | "1"',
    'e: e "?" e ":" e | e e | "a"',
])
def test_operators_without_precedence_get_one_parse(text):
    """A rule with its nonterminal at both ends is nested to the left: the normalized grammar has no
    conflict left (one stack where GLR carried one per reading); the language is checked above."""
    result = normalize(_cfg(text, start="e"))
    assert any(line.startswith("operators without precedence") for line in result.rewrites)
    assert build_lr(result).conflicts == ()


def test_accepts_empty():
    assert normalize(_cfg('start: "a"*')).accepts_empty
    assert not normalize(_cfg('start: "a"+')).accepts_empty


def test_cyclic_grammar_names_the_cycle():
    with pytest.raises(NormalizationError, match=r"cyclic \(a => b => a\)"):
        normalize(_cfg('start: a\na: b | "x"\nb: a "y"?'))


def test_self_loop_through_nullable_is_dropped_and_logged():
    result = normalize(_cfg('start: x\nx: "a" | x ","? | x "b"'))
    assert any("A -> A" in line and "x" in line for line in result.rewrites)


def test_empty_language_is_an_error():
    with pytest.raises(NormalizationError, match="language is empty"):
        normalize(_cfg('start: "a" start'))
    with pytest.raises(NormalizationError, match="only the empty string"):
        normalize(_cfg("start: a?\na: a"))


def test_size_limit_names_the_rules():
    with pytest.raises(LimitExceeded, match=r"right recursion in rules e\): limit max_normalized_symbols=10 exceeded"):
        normalize(_cfg('e: "-" e | "!" e | "(" e ")" | "1"', start="e"), max_normalized_symbols=10)


def test_check_normalized_rejects_what_it_must():
    right = _cfg('start: "a" start | "b"')
    with pytest.raises(NormalizationError, match="rightmost-symbol cycle start -> start"):
        check_normalized(right)
    with pytest.raises(NormalizationError, match="epsilon"):
        check_normalized(_cfg('start: "a" | '))
    check_normalized(normalize(right).cfg)


def test_deterministic():
    cfg = _cfg('e: e "+" e | "-" e | t\nt: "x" | "(" e ")" t', start="e")
    assert normalize(cfg) == normalize(cfg)


# ---------------------------------------------------------------- real grammars

def _sympy_latex() -> Path:
    """sympy's latex.lark: in this interpreter, or in the system python3 (sympy is not a dependency)."""
    spec = importlib.util.find_spec("sympy")
    if spec and spec.origin:
        return Path(spec.origin).parent / LATEX
    try:
        out = subprocess.run(["python3", "-c", "import sympy; print(sympy.__file__)"], capture_output=True,
                             text=True, timeout=60)
        return Path(out.stdout.strip()).parent / LATEX
    except (OSError, subprocess.SubprocessError):
        return Path("/nonexistent") / LATEX


LATEX = "parsing/latex/lark/grammar/latex.lark"


def _real_grammars():
    yield "json", ROOT / "grammars" / "json.lark", None
    yield "lark", LARK_GRAMMARS / "lark.lark", None
    yield "python-eval", LARK_GRAMMARS / "python.lark", "eval_input"
    yield "latex", _sympy_latex(), "latex_string"
    corpus = SHARED / "corpora" / "grammars" / "lark-1.3.1-sdist"
    for name in ["verilog.lark", "template_lark.lark", "composition/json.lark", "composition/storage.lark"]:
        yield name, corpus / name, None
    for name in ["go", "java", "sql"]:        # fetched (and cached) on first use
        yield f"syncode-{name}", functools.partial(syncode_grammar, f"{name}.lark"), None


REAL = list(_real_grammars())


# Earley needs ~0.05 s per token on the normalized latex grammar, and half a minute on sql's
# sentences: those two run in the slow suite only.
SLOW_REAL = ("latex", "syncode-sql")


@pytest.mark.parametrize("label,path,start", [r for r in REAL if r[0] not in SLOW_REAL],
                         ids=[r[0] for r in REAL if r[0] not in SLOW_REAL])
def test_real_grammars_keep_their_language(label, path, start):
    _check_real_grammar(path, start, budget=8, n_sentences=12)


@pytest.mark.slow
@pytest.mark.parametrize("label,path,start", REAL, ids=[r[0] for r in REAL])
def test_real_grammars_keep_their_language_long_sentences(label, path, start):
    slow = label in SLOW_REAL
    _check_real_grammar(path, start, budget=12 if slow else 30, n_sentences=8 if slow else 40)


def _check_real_grammar(path: Path | Callable[[], Path], start: str | None, budget: int, n_sentences: int) -> None:
    path = path() if callable(path) else path
    if not path.exists():
        pytest.skip(f"{path} not found (needs ../shared/corpora or sympy)")
    cfg = build_cfg(load_grammar(path, start=start))
    result = normalize(cfg)
    original, normalized = EarleyJudge.from_cfg(cfg), EarleyJudge.from_cfg(result.cfg)
    rng = random.Random(1)
    terminals = list(range(cfg.n_terminals - 1))
    sentences = {random_sentence(grammar, rng, budget) for grammar in (cfg, result.cfg) for _ in range(n_sentences)}
    pool = sentences | {m for s in sentences for m in mutations(s, terminals, rng, 3)}
    pool.discard(())
    checked = {s: original.accepts_terminals(s) for s in pool}
    assert all(checked[s] for s in sentences if s)
    assert {s: normalized.accepts_terminals(s) for s in pool} == checked
