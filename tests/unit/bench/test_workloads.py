"""bench.workloads and devtools.peer_grammar: the peer grammars keep the language (judge: lark), document selection."""

from __future__ import annotations

import csv

import lark
import pytest

from bench.__main__ import subset
from bench.errors import BenchError
from bench.workloads import SHARED, syncode_sql_grammar, workload
from devtools.lark_judge import lark_parses
from devtools.peer_grammar import PeerGrammarError, inline_common_imports

needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/corpora absent")


lark_accepts = lark_parses


def test_inlined_grammar_parses_like_the_original() -> None:
    source = 'start: CNAME ("," SIGNED_NUMBER)*\n%import common.CNAME\n%import common (SIGNED_NUMBER, WS)\n%ignore WS\n'
    inlined = inline_common_imports(source, "test.lark")
    assert "%import" not in inlined
    original, copy = lark.Lark(source, parser="lalr"), lark.Lark(inlined, parser="lalr")
    for text in ["a", "a, 1", "x_1 ,-2.5e3, +7", "1", "a,", "a, 1 2", "_ , .5"]:
        assert lark_accepts(copy, text) == lark_accepts(original, text), text


def test_renamed_import_is_an_error() -> None:
    with pytest.raises(PeerGrammarError, match="renaming imports"):
        inline_common_imports("start: N\n%import common.INT -> N\n", "g.lark")


def test_unknown_import_is_an_error() -> None:
    with pytest.raises(PeerGrammarError, match="not in lark's common.lark"):
        inline_common_imports("start: X\n%import common.NOPE\n", "g.lark")


@needs_shared
def test_sql_peer_grammar_accepts_what_lark_labels_say() -> None:
    try:
        syncode_sql_grammar()
    except BenchError as e:
        pytest.skip(str(e))
    w = workload("sql")
    docs = subset(w.documents(), 40)
    # Earley with its dynamic lexer: without priorities, keyword/name ties stay open, as in the peers
    parser = lark.Lark(w.peer_lark(), parser="earley")
    assert all(lark_accepts(parser, d.text.decode()) for d in docs)
    with open(SHARED / "sql" / "spider" / "lark_labels.csv", newline="") as f:
        rejected = [int(r["line"]) for r in csv.DictReader(f) if r["syncode_sql_lalr"] == "reject"]
    lines = (SHARED / "sql" / "spider" / "dev_gold.tsv").read_text().splitlines()
    assert not any(lark_accepts(parser, lines[n - 1].split("\t")[0]) for n in rejected)


@needs_shared
def test_json_documents_are_json_and_accepted_by_the_grammar() -> None:
    import json

    w = workload("json")
    docs = w.documents()
    parser = lark.Lark(w.grammar_path.read_text(), parser="lalr")
    assert {d.doc_id.split("/")[0] for d in docs} == {"jts", "maskbench"}
    for d in subset(docs, 60):
        json.loads(d.text)
        assert lark_accepts(parser, d.text.decode()), d.doc_id


def test_peer_lark_reports_a_grammar_it_cannot_rewrite_as_a_bench_error(tmp_path) -> None:
    from bench.workloads import Workload

    grammar = tmp_path / "renamed.lark"
    grammar.write_text("start: N\n%import common.INT -> N\n")
    with pytest.raises(BenchError, match="renamed.lark: .*renaming imports"):
        Workload("renamed", lambda: grammar, list).peer_lark()


def test_unknown_workload_lists_known() -> None:
    with pytest.raises(BenchError, match="known: json, sql, verilog, python, go, java, latex, keywords1000, "
                                         "keywords3000, sql-contextual, go-contextual, java-contextual, "
                                         "keywords<N>"):
        workload("yaml")
    assert workload("keywords100").name == "keywords100"
    with pytest.raises(BenchError):
        workload("keywords2")                                # fewer keywords than contexts


def test_subset_is_evenly_spaced_and_stable() -> None:
    items = list(range(100))
    assert subset(items, 4) == [0, 25, 50, 75]
    assert subset(items, None) == items and subset(items, 500) == items
    with pytest.raises(BenchError):
        subset(items, 0)


def test_verilog_comment_rewrite_is_the_same_language() -> None:
    import itertools
    import re

    from devtools.peer_grammar import VERILOG_COMMENT_PEER

    original = re.compile(r"\/\*(\*(?!\/)|[^*])*\*\/")
    rewritten = re.compile(VERILOG_COMMENT_PEER[1:-1])
    for n in range(9):
        for chars in itertools.product("/*a", repeat=n):
            text = "".join(chars)
            assert bool(original.fullmatch(text)) == bool(rewritten.fullmatch(text)), text


def test_strip_priorities_keeps_everything_else() -> None:
    from devtools.peer_grammar import strip_priorities

    text = 'start: a.2 | B\n?a.1: "x"\nB.-3: "y"\nC: "k.2:"\n'
    assert strip_priorities(text) == 'start: a.2 | B\n?a: "x"\nB: "y"\nC: "k.2:"\n'


@needs_shared
def test_verilog_peer_grammar_parses_the_documents() -> None:
    w = workload("verilog")
    parser = lark.Lark(w.peer_lark(), parser="lalr")
    docs = w.documents()
    assert docs and all(lark_accepts(parser, d.text.decode()) for d in docs)


def test_escaped_string_rewrite_is_the_lexeme_lark_would_cut() -> None:
    import itertools
    import re

    from devtools.peer_grammar import ESCAPED_STRING_REGEX

    larks = re.compile(lark.Lark("start: ESCAPED_STRING\n%import common.ESCAPED_STRING\n")
                       .get_terminal("ESCAPED_STRING").pattern.to_regexp())
    ours = re.compile(ESCAPED_STRING_REGEX)
    for n in range(8):
        for chars in itertools.product('"\\a\n', repeat=n):
            text = '"' + "".join(chars)
            cut = larks.match(text)                # lazy: where lark's lexer would end the lexeme
            assert (cut is not None and cut.end() == len(text)) == bool(ours.fullmatch(text)), repr(text)
