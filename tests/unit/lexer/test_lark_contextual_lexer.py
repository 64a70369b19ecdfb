"""lark's contextual lexer (`glrmask check --lexer contextual`): every short text over a small
alphabet, and real documents, get the verdict of `Lark(grammar, parser="lalr")` (whose default
lexer is the contextual one, and ours)."""

from __future__ import annotations

import random

import lark
import numpy as np
import pytest
from click.testing import CliRunner

import glrmask_cli.lexer.contextual as contextual
from devtools.builds import LARK_GRAMMARS
from devtools.data import DataUnavailable, corpus_path, poetry_grammar, syncode_grammar
from devtools.lark_judge import lark_parses
from glrmask_cli.check import load_checker
from glrmask_cli.cli import cli
from glrmask_cli.errors import LimitExceeded
from glrmask_cli.limits import BuildLimits
from glrmask_cli.pipeline import compile_front_end
from tests.support.short_texts import assert_lark_verdicts, short_texts

CASES = {
    # a keyword is a keyword only where the parser state accepts it: after IF, "if" is a NAME
    "keyword-by-state": ('start: IF NAME | NAME "=" NAME\nIF: "if"\nNAME: /[a-z]+/\n%ignore " "\n', "if =", 5),
    # a wide terminal only competes where it may come (pep508's URI after "@")
    "wide-terminal-by-state": ('start: NAME ("@" URI)?\nNAME: /[a-z]+/\nURI: /[^ @]+/\n', "ab@/", 5),
    # lark's csv example: the literal " " and _SEPARATOR, each only where the rules allow it
    "separator-by-state": ('start: "#" " "? (WORD _SEPARATOR?)+\nWORD: /[a-z]+/\n_SEPARATOR: /[ ]+/\n', "# a", 6),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_short_text_gets_larks_contextual_verdict(name, tmp_path):
    text, alphabet, max_length = CASES[name]
    path = tmp_path / f"{name}.lark"
    path.write_text(text)
    judge = lark.Lark(text, parser="lalr")
    contextual, basic = load_checker(path, lexer="contextual"), load_checker(path, lexer="basic")
    texts = list(short_texts(alphabet, max_length))
    assert_lark_verdicts(judge, contextual, texts)
    assert any(contextual.check_bytes(t.encode()).ok != basic.check_bytes(t.encode()).ok for t in texts)


# Every terminal after a value starts with optional spaces (as a lowered JSON Schema's punctuation):
# the output may end after "1", not after "1 ", where a lexeme is open (the lexer once reached its
# START again on the spaces, and took the output for complete there)
PREFIXED = ('start: value\nvalue: LSQB [value (COMMA value)*] RSQB | NUMBER\nNUMBER: /[0-9]+/\n'
            'LSQB: /\\[ */\nRSQB: / *\\]/\nCOMMA: / *, */\n')


@pytest.mark.parametrize("lexer", ["contextual", "basic"])
def test_an_optional_prefix_every_terminal_allows_is_an_open_lexeme(lexer, tmp_path):
    path = tmp_path / "prefixed.lark"
    path.write_text(PREFIXED)
    judge = lark.Lark(PREFIXED, parser="lalr", lexer=lexer)
    checker = load_checker(path, lexer=lexer)
    assert not checker.check_bytes(b"1 ").ok
    assert_lark_verdicts(judge, checker, list(short_texts("1[], ", 5)))


def _mutations(text: str, rng: random.Random) -> list[str]:
    i = rng.randrange(len(text) + 1)
    return [text[:i], text[:i] + text[i + 1:], text[:i] + rng.choice("(), '=a1@;") + text[i:]]


@pytest.mark.parametrize("grammar", ["pep508", "sql"])
def test_real_documents_get_larks_contextual_verdict(grammar):
    try:
        if grammar == "pep508":
            path = poetry_grammar("pep508.lark")
            documents = [line for line in corpus_path("pep508/requires_dist.txt").read_text().splitlines() if line]
        else:
            path = syncode_grammar("sql.lark")
            lines = corpus_path("sql/spider/dev_gold.tsv").read_text().splitlines()
            documents = [line.split("\t")[0] for line in lines[::20]]
    except DataUnavailable as e:
        pytest.skip(str(e))
    judge = lark.Lark.open(str(path), parser="lalr")
    checker = load_checker(path, lexer="contextual")
    rng = random.Random(0)
    checked = accepted = 0
    for document in documents:
        for text in [document] + _mutations(document, rng):
            verdict = lark_parses(judge, text)
            assert checker.check_bytes(text.encode()).ok == verdict, text
            checked += 1
            accepted += verdict
    assert accepted > checked // 4


def test_check_takes_the_lexer_option(tmp_path):
    grammar = tmp_path / "g.lark"
    grammar.write_text(CASES["keyword-by-state"][0])
    document = tmp_path / "doc.txt"
    document.write_text("if if")
    runner = CliRunner()
    assert runner.invoke(cli, ["check", "--lexer", "basic", str(grammar), str(document)]).exit_code == 1
    result = runner.invoke(cli, ["check", str(grammar), str(document)])   # contextual by default
    assert result.exit_code == 0 and result.output.endswith(": ok\n"), result.output


def test_contextual_build_warns_only_about_terminals_no_context_produces(tmp_path):
    """pep508-like: NAME and EXTRA share a pattern; lark's basic lexer never produces NAME, the
    contextual one does where EXTRA cannot come. A terminal shadowed in its only context still warns."""
    from glrmask_cli.pipeline import compile_grammar

    path = tmp_path / "g.lark"
    path.write_text('start: NAME "[" EXTRA "]" | "@" (SHADOWED | OTHER)\nEXTRA: /[a-z]+/\nNAME: /[a-z]+/\n'
                    'SHADOWED: /[0-9]+/\nOTHER: /[0-9]+/\n')
    basic = compile_grammar(path, tokenizer="gpt2", lexer="basic")
    contextual = compile_grammar(path, tokenizer="gpt2")
    assert any("NAME is never produced" in w for w in basic.lexer_warnings)
    assert [w.split(" is never")[0] for w in contextual.lexer_warnings] == ["terminal SHADOWED"]


def test_boundary_warnings_are_the_contexts_own(tmp_path):
    """After INT, "." continues a DECIMAL that "x" kills. Where a context holds both (first grammar)
    the build warns and `1.x` is rejected; where INT's context has no DECIMAL (second), only the
    basic lexer has that boundary: the contextual build does not warn and accepts `a1.x`."""
    from devtools.builds import vocabulary
    from glrmask_cli.pipeline import compile_grammar

    terminals = 'INT: /[0-9]+/\nDECIMAL: /[0-9]+\\.[0-9]+/\nDOT: "."\nNAME: /[a-z]+/\n'
    shared, apart = tmp_path / "shared.lark", tmp_path / "apart.lark"
    shared.write_text("start: INT DOT NAME | DECIMAL\n" + terminals)
    apart.write_text('start: "a" INT DOT NAME | "b" DECIMAL\n' + terminals)
    small = vocabulary("small-gpt2")

    def boundary(path, lexer):
        return [w for w in compile_grammar(path, tokenizer=small, lexer=lexer).lexer_warnings
                if "lookahead cannot decide" in w]

    assert any(w.startswith("terminal INT followed by DOT") for w in boundary(shared, "contextual"))
    assert not load_checker(shared).check_bytes(b"1.x").ok
    assert any(w.startswith("terminal INT followed by DOT") for w in boundary(apart, "basic"))
    assert boundary(apart, "contextual") == []
    assert load_checker(apart).check_bytes(b"a1.x").ok
    assert lark.Lark(apart.read_text(), parser="lalr").parse("a1.x")


def test_contextual_build_never_unites_terminals_no_context_holds_together(tmp_path):
    """With the contextual lexer only the contexts' lexers are built: two terminals that never
    compete stay apart (their union, which the basic lexer needs, has the product of their states:
    a schema's hostname and duration fields took 314 s and 7.5 GB there, 5 s for every context)."""
    path = tmp_path / "apart.lark"
    path.write_text('start: "(" SEVENS ")" | "[" ELEVENS "]"\nSEVENS: /x(?:[ab]{7})+y/\nELEVENS: /x(?:[ab]{11})+y/\n')
    limits = BuildLimits(max_lexer_states=40)      # each terminal alone has 9 and 13 states, together 80
    with pytest.raises(LimitExceeded, match="max_lexer_states"):
        load_checker(path, lexer="basic", limits=limits)
    checker = load_checker(path, lexer="contextual", limits=limits)
    judge = lark.Lark(path.read_text(), parser="lalr")
    assert_lark_verdicts(judge, checker, ["(x" + "ab" * 7 + "y)", "[x" + "a" * 11 + "y]", "(x" + "a" * 11 + "y)",
                                          "[x" + "b" * 7 + "y]", "(xy)", "[x" + "a" * 22 + "y]"])


def test_contexts_built_on_several_processes_are_the_same_lexer(monkeypatch):
    """The contexts' lexers go to forked processes once building them here takes a while; the
    combined lexer must not depend on that (here every one goes there: no time in this process)."""
    grammar = LARK_GRAMMARS / "lark.lark"
    one = compile_front_end(grammar, contextual=True, jobs=1).contextual
    monkeypatch.setattr(contextual, "_SERIAL_SECONDS", -1.0)
    forked = []
    real_fork_map = contextual.fork_map
    monkeypatch.setattr(contextual, "fork_map", lambda *args: forked.append(len(args[1])) or real_fork_map(*args))
    two = compile_front_end(grammar, contextual=True, jobs=2).contextual
    assert forked == [one.n_contexts] and one.n_contexts > 2
    for a, b in [(one.tables.transitions, two.tables.transitions), (one.tables.close_sets, two.tables.close_sets),
                 (one.starts, two.starts), (one.start_of, two.start_of), (one.restart, two.restart)]:
        assert np.array_equal(a, b)
