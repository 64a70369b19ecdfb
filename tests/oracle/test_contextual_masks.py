"""Masks of artifacts built with lark's contextual lexer (`glrmask build --lexer contextual`) equal
brute force over the contextual recognizer (which feeds bytes; `tests/unit/lexer/test_lark_contextual_lexer.py`
checks it against lark) in every layout, and differ from the basic lexer's where lark's lexers do."""

from __future__ import annotations

import lark
import numpy as np
import pytest

from devtools.brute_force import sampled_states
from devtools.builds import built
from devtools.data import DataUnavailable, corpus_path, poetry_grammar
from devtools.lark_judge import lark_parses
from glrmask_cli.limits import BuildLimits
from glrmask_runtime.errors import InputRejected
from tests.support.masks import assert_masks_equal
from tests.support.short_texts import short_texts
from tests.unit.lexer.test_lark_contextual_lexer import CASES

APART = BuildLimits(max_merged_states=0)    # several groups stay several automata


def _grammar(tmp_path_factory, name: str):
    path = tmp_path_factory.getbasetemp() / f"contextual-{name}.lark"
    path.write_text(CASES[name][0])
    return path


def _documents(name: str) -> list[bytes]:
    """The short texts lark (contextual lexer) accepts."""
    text, alphabet, max_length = CASES[name]
    judge = lark.Lark(text, parser="lalr")
    return [t.encode() for t in short_texts(alphabet, max_length) if lark_parses(judge, t)]


@pytest.mark.parametrize("layout", ["one", "runtime-close", "grouped"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_small_grammar_masks_equal_brute_force(name, layout, tmp_path_factory):
    b = built(_grammar(tmp_path_factory, name), "small-gpt2", layout=layout, limits=APART, lexer="contextual")
    assert b.artifact.contextual and b.artifact.metadata["lexer"]["kind"] == "contextual"
    assert b.artifact.metadata["dwa"]["layout"] == layout
    assert_masks_equal(b, sampled_states(b, _documents(name), 120, seed=3))


@pytest.mark.parametrize("name", sorted(CASES))
def test_contextual_masks_differ_from_basic_ones_where_lark_does(name, tmp_path_factory):
    path = _grammar(tmp_path_factory, name)
    contextual, basic = built(path, "small-gpt2", lexer="contextual"), built(path, "small-gpt2", lexer="basic")
    differ = 0
    for document in _documents(name):
        c, b = contextual.artifact.matcher(), basic.artifact.matcher()
        for cut in range(len(document) + 1):
            try:
                c2, b2 = c.copy(), b.copy()
                c2.commit_bytes(document[:cut])
                b2.commit_bytes(document[:cut])
            except InputRejected:
                break
            differ += not np.array_equal(c2.mask(), b2.mask())
    assert differ > 0


def test_pep508_masks_equal_brute_force():
    try:
        path = poetry_grammar("pep508.lark")
        lines = [line for line in corpus_path("pep508/requires_dist.txt").read_text().splitlines() if line]
    except DataUnavailable as e:
        pytest.skip(str(e))
    b = built(path, "small-gpt2", lexer="contextual")
    assert_masks_equal(b, sampled_states(b, [line.encode() for line in lines[::40]], 150, seed=5))


# A one-byte lexeme shifted into three contexts (each its own rule, so its own LALR states) that all
# read the next "-" alike: small-gpt2's run of 32 "-" would lex 3^32 ways if each hand-over stayed a
# path of its own (docs/ARCHITECTURE.md, "Contextual lexing"); syncode's sql.lark and java.lark have
# such terminals.
DASHES = ('start: (p | q | r)+\np: "(" pd ")"\npd: DASH | pd DASH\nq: "[" qd "]"\nqd: DASH | qd DASH\n'
          'r: "{" rd "}"\nrd: DASH | rd DASH\nDASH: "-"\n')


@pytest.mark.parametrize("layout", ["one", "grouped"])   # grouped: a first lexeme's contexts in one group
def test_runs_of_short_lexemes_handing_over_to_several_contexts_build_and_mask_exactly(tmp_path, layout):
    path = tmp_path / "dashes.lark"
    path.write_text(DASHES)
    b = built(path, "small-gpt2", lexer="contextual", layout=layout,
              limits=BuildLimits(max_token_paths=1000, max_merged_states=0))
    assert b.artifact.metadata["dwa"]["layout"] == layout
    judge = lark.Lark(DASHES, parser="lalr")
    documents = [f"{o}{'-' * n}{c}".encode() for n in (1, 5, 33, 70) for o, c in ("()", "[]", "{}")]
    documents.append(b"(---)[" + b"-" * 40 + b"]{-}")
    assert all(lark_parses(judge, d.decode()) for d in documents)
    assert_masks_equal(b, sampled_states(b, documents, 80, seed=2))
