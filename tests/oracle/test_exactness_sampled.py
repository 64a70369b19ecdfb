"""The sampled tier of `make exactness` (devtools/exactness.py) inside `make test`.

A few (grammar, tokenizer) cells that build today, every k-th document, few brute-force states and
walks; every target column must be 0 and semantic differences stay within the documented classes of
docs/semantics.md (csv: basic vs Earley lexing; lark.lark: no backtracking), each one re-derived here
by our checker's reason. Cells whose owner runs lark's LALR parser with its contextual lexer (json,
lark.lark, pep508) are built with that lexer. llguidance (oracle 4) is not part of this tier: it needs the bench venv.
"""

from __future__ import annotations

import pytest
from lark import Lark

from devtools.data import tokenizer_file
from devtools.exactness import CASES, run_cell
from devtools.lark_judge import lark_parses
from devtools.stress import STRESS
from glrmask_cli.check import load_checker

TARGETS = ("unsound_steps", "valid_rejected", "invalid_accepted", "mask_mismatches", "dead_ends",
           "walk_parse_failures")
SAMPLE = [  # grammar, tokenizer, every k-th document, brute-force states, walks
    ("json", "gpt2", 4, 4, 4),
    ("json", "cl100k_base.tiktoken", 6, 3, 3),
    ("lark.lark", "gpt2", 2, 3, 3),
    ("pep508", "gpt2", 3, 3, 3),
    ("lark-example-json", "cl100k_base.tiktoken", 8, 2, 2),
    ("csv", "gpt2", 2, 3, 3),
    *((f"stress-{name}", "gpt2", 1, 3, 4) for name in sorted(STRESS)),
]
def _case(name: str):
    return next(c for c in CASES if c.name == name)


@pytest.mark.parametrize("grammar, tokenizer, every, states, walks", SAMPLE,
                         ids=[f"{g}-{t.split('.')[0]}" for g, t, *_ in SAMPLE])
def test_sampled_cell_meets_every_target(grammar, tokenizer, every, states, walks):
    case = _case(grammar)
    cell = run_cell(case, tokenizer, states, walks, every=every)
    assert cell["documents"] > 0 and cell["states"] == states and cell["walks"] == walks
    assert {k: cell[k] for k in TARGETS} == dict.fromkeys(TARGETS, 0), cell["examples"]
    assert cell["semantic_differences"] == _documented_differences(case, every), cell["examples"]


def _documented_differences(case, every: int) -> int:
    """Documents lark accepts and our checker rejects, each required to be of a documented class."""
    if case.name not in ("lark.lark", "csv"):
        return 0          # no documented difference on these grammars: any is a failure
    judge: Lark = case.judge()
    # csv: lark's Earley lexes by what the parser expects; with its basic lexer, which we reproduce
    # there, lark rejects these documents too
    basic = Lark.open(str(case.path()), start=case.start or "start", parser="lalr", lexer="basic")
    checker = load_checker(str(case.path()), case.start, lexer=case.lexer)
    found = 0
    for name, text in case.documents()[::every]:
        result = checker.check_bytes(text.encode())
        if not result.ok and lark_parses(judge, text):
            if case.name == "csv":
                assert not lark_parses(basic, text), (name, text, result.reason)
            else:   # lark.lark: no backtracking; ` /` opens a COMMENT that the regexp's next byte ends
                assert text.encode()[:result.position].endswith(b" /"), (name, result.reason)
            found += 1
    return found


# Every class of llguidance disagreement on json that docs/semantics.md explains (all: ours allows more).
LLGUIDANCE_JSON_CLASSES = {"ours_only@start", "ours_only@complete", "ours_only@complete/forced",
                           "ours_only@inside", "ours_only@inside/forced"}


@pytest.mark.parametrize("tokenizer", ["gpt2", "cl100k_base.tiktoken"])
def test_llguidance_disagreements_on_json_are_the_documented_classes_and_lark_sides_with_us(tokenizer):
    from devtools import llguidance_oracle
    from devtools.builds import built

    case = _case("json")
    b = built(case.path(), tokenizer if tokenizer == "gpt2" else str(tokenizer_file(tokenizer)))
    documents = dict(case.documents()[::5])
    replayed = [(name, b.vocab.encode(text)) for name, text in documents.items()]
    try:
        out = llguidance_oracle.compare(b, case.llguidance_text(), replayed, max_examples=50)
    except llguidance_oracle.NotRun as err:
        pytest.skip(f"llguidance: {err}")
    assert out["llguidance_steps"] > 1000
    assert set(out["llguidance_classes"]) <= LLGUIDANCE_JSON_CLASSES, out["llguidance_classes"]
    judge = case.judge()
    tokens = dict(replayed)
    checked = 0
    for example in out["llguidance_examples"]:
        name, step = example["document"], example["step"]
        prefix = b.vocab.decode_bytes(tokens[name][:step])
        extra = [b.vocab.token_bytes[t] for t, _ in example["ours_only"] if t not in b.artifact.eos_token_ids]
        if example["class"] == "ours_only@start" and lark_parses(judge, documents[name]):
            assert all(lark_parses(judge, data + documents[name].encode()) for data in extra if not data.strip())
        elif example["class"] == "ours_only@complete/forced":   # llguidance: EOS only; lark: whitespace is fine
            assert lark_parses(judge, prefix) and all(lark_parses(judge, prefix + data) for data in extra)
        elif example["class"] == "ours_only@inside":    # a token that ends the value, then whitespace
            assert all(lark_parses(judge, prefix + data) for data in extra), example
        elif example["class"] == "ours_only@inside/forced":     # one spelling of the forced bytes
            (single,) = example["llguidance_allowed"]
            assert all(b.vocab.token_bytes[single].startswith(data) for data in extra), example
        checked += bool(extra)
    assert checked >= 10, out["llguidance_classes"]
