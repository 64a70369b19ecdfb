"""glrmask_cli.grammar: .lark -> GrammarSpec, judged by lark itself (Earley on original vs round-trip)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import lark
import pytest
from lark import Lark

from devtools.lark_judge import EarleyJudge, spec_to_lark
from glrmask_cli.errors import GrammarSyntaxError, UnsupportedFeature
from glrmask_cli.grammar import load_grammar, load_grammar_text

LARK_GRAMMARS = Path(lark.__file__).parent / "grammars"

# Each grammar exercises loader features; the language is compared on every string over `alphabet`
# up to length 4 (lark Earley, basic lexer, on the original text vs on the loaded spec written back).
FEATURES = {
    "ebnf": ('start: "a"+ ("b" | "c")* "d"? ["e"]', "abcde"),
    "inline_and_expand": ('start: _x y\n_x: "a" | "b" _x\n?y: "c" | "c" "d" -> dd', "abcd"),
    "template": ('start: pair{"a", "b"} pair{"c", start}?\npair{l, r}: l r', "abc"),
    "priority_and_flags": ('start: KW | NAME\nKW.2: "ab"i\nNAME: /[a-b]+/', "abAB"),
    "common_import": ('start: INT ("," INT)*\n%import common.INT', "12,"),
    "override_extend": ('%import common (WORD)\n%override WORD: /[ab]+/\nstart: WORD | x\nx: "c"\n'
                        '%extend x: "d"', "abcd"),
    "ignore": ('start: "a" "b"*\n%ignore " "', "ab "),
}


def _strings(alphabet: str, max_len: int):
    for n in range(max_len + 1):
        for chars in itertools.product(alphabet, repeat=n):
            yield "".join(chars)


@pytest.mark.parametrize("name", sorted(FEATURES))
def test_loaded_spec_has_the_same_language_as_lark(name):
    text, alphabet = FEATURES[name]
    original = EarleyJudge(text)
    loaded = EarleyJudge(spec_to_lark(load_grammar_text(text, f"{name}.lark")))
    verdicts = {s: original.accepts(s) for s in _strings(alphabet, 4)}
    assert any(verdicts.values()) and not all(verdicts.values())
    assert {s: loaded.accepts(s) for s in verdicts} == verdicts


def test_relative_import(tmp_path):
    (tmp_path / "lib.lark").write_text('num: DIGIT+\nDIGIT: /[0-9]/\n')
    main = tmp_path / "main.lark"
    main.write_text('%import .lib.num\nstart: num ("+" num)*\n')
    spec = load_grammar(main)
    original = Lark(main.read_text(), parser="earley", lexer="basic", import_paths=[str(tmp_path)])
    judge = EarleyJudge(spec_to_lark(spec))
    for s in ["1", "12+3", "+", "1+", ""]:
        try:
            original.parse(s)
            expected = True
        except lark.exceptions.LarkError:
            expected = False
        assert judge.accepts(s) == expected, s
    assert spec.name == "main"


def test_terminals_translate_lark_terminal_defs():
    text = 'start: "{" NAME "if"i /x+/s KW\nNAME: /[a-z]+/\nKW.3: "kw"\n%ignore /[ ]+/'
    spec = load_grammar_text(text)
    defs = {t.name: t for t in Lark(text, parser="earley", lexer="basic").terminals}
    assert [t.name for t in spec.terminals] == sorted(defs)
    for t in spec.terminals:
        d = defs[t.name]
        assert t.is_literal == isinstance(d.pattern, lark.lexer.PatternStr)
        assert t.flags == d.pattern.flags and t.priority == d.priority
        assert re.compile(t.to_regex()).pattern == t.to_regex()
        probe = d.pattern.value if t.is_literal else None
        if probe is not None:
            assert re.fullmatch(t.to_regex(), probe)
        expected_display = t.name if not d.name.startswith("__") and t.name in text else d.pattern.raw
        assert t.display == expected_display
    assert len(spec.ignore) == 1 and spec.ignore[0] in defs


def test_start_rule_selects_reachable_part():
    spec = load_grammar(LARK_GRAMMARS / "python.lark", start="eval_input")
    assert spec.start == "eval_input"
    lhs = {r.lhs for r in spec.rules}
    assert "suite" not in lhs and "eval_input" in lhs
    assert all(s in lhs or s in {t.name for t in spec.terminals} for r in spec.rules for s in r.rhs)


def test_unknown_start_lists_rules():
    with pytest.raises(GrammarSyntaxError, match=r"start rule 'nope' is not defined; choose --start from: a, b"):
        load_grammar_text('a: "x"\nb: a', "g.lark", start="nope")


# (grammar text, error type, message fragment, location prefix)
ERRORS = [
    ('start: "a" |\n  ) b', GrammarSyntaxError, "Expecting", "g.lark:2:3"),
    ("start: foo", GrammarSyntaxError, "'foo' used but not defined", "g.lark:1:1"),
    ('%declare _INDENT\nstart: _INDENT "a"', UnsupportedFeature, "%declare", "g.lark:1:1: terminal _INDENT"),
    ("start: A\nA: /a*/", UnsupportedFeature, "can match the empty string", "g.lark:2:1: terminal A"),
    ('start: "a" /b?/', UnsupportedFeature, "can match the empty string", "g.lark: terminal /b?/"),
    ('start: A\nA: ""', GrammarSyntaxError, "Empty terminals are not allowed", "g.lark"),
    ("start: A\nA: /(a)\\1/", UnsupportedFeature, "backreference", "g.lark:2:1: terminal A"),
    ("start: A\nA: /(?P<x>a)(?(x)b|c)/", UnsupportedFeature, "backreference", "g.lark:2:1"),
    ("start: A\nA: /(a/", GrammarSyntaxError, "invalid regular expression", "g.lark:2:1: terminal A"),
    ("start: A\nA: /(?<=a+)b/", GrammarSyntaxError, "look-behind requires fixed-width", "g.lark:2:1"),
    ("%import nosuch.X\nstart: X", GrammarSyntaxError, "cannot import grammar nosuch", "g.lark"),
    ('start: _a\n_a: "a" -> b', GrammarSyntaxError, "isn't allowed to have aliases", "g.lark:2:1"),
    ('start: A\nA: "a" A', GrammarSyntaxError, "Recursion in terminal", "g.lark:2:1"),
]


@pytest.mark.parametrize("text,kind,fragment,where", ERRORS, ids=[e[2][:24] for e in ERRORS])
def test_errors(text, kind, fragment, where):
    with pytest.raises(kind) as info:
        load_grammar_text(text, "g.lark")
    message = str(info.value)
    assert fragment in message and message.startswith(where) and "\n" not in message


def test_unreadable_file(tmp_path):
    with pytest.raises(GrammarSyntaxError, match="cannot read grammar file"):
        load_grammar(tmp_path / "missing.lark")
    bad = tmp_path / "bad.lark"
    bad.write_bytes(b'start: "\xff"\n')
    with pytest.raises(GrammarSyntaxError, match="not UTF-8"):
        load_grammar(bad)


def test_declared_terminal_unreachable_from_start_is_fine():
    spec = load_grammar_text('%declare _INDENT\nstart: "a"\nblock: _INDENT start')
    assert [t.name for t in spec.terminals] == ["A"]


def _grammar_files():
    yield LARK_GRAMMARS / "lark.lark", None
    yield LARK_GRAMMARS / "python.lark", "eval_input"
    shared = Path(__file__).resolve().parents[4] / "shared" / "corpora" / "grammars" / "lark-1.3.1-sdist"
    for name in ["verilog.lark", "template_lark.lark", "composition/csv.lark", "composition/json.lark",
                 "composition/storage.lark"]:
        yield shared / name, None


@pytest.mark.parametrize("path,start", list(_grammar_files()), ids=lambda x: getattr(x, "name", str(x)))
def test_real_grammars_match_lark(path, start):
    """Every loaded rule is one of lark's compiled rules and every terminal one of lark's terminals."""
    if not path.exists():
        pytest.skip(f"{path} not found (needs ../shared/corpora)")
    spec = load_grammar(path, start=start)
    kwargs = {"start": start} if start else {}
    parser = Lark(path.read_text(), parser="earley", lexer="basic", import_paths=[str(path.parent)], **kwargs)
    lark_rules = {(str(r.origin.name), tuple(str(s.name) for s in r.expansion)) for r in parser.rules}
    assert {(r.lhs, r.rhs) for r in spec.rules} <= lark_rules
    lark_terms = {t.name: t for t in parser.terminals}
    for t in spec.terminals:
        assert t.name in lark_terms and t.priority == lark_terms[t.name].priority
    assert {r.lhs for r in spec.rules} >= {spec.start}
