"""An artifact written by an earlier compiler keeps loading and gives the masks today's compiler gives.

`tests/data/compat/json-small-gpt2.format1.glrm` was written by glrmask 0.1.0 at commit c50abc2 (the
first canonical-LR(1) build) from grammars/json.lark and the 4,001-token `small-gpt2` vocabulary of
tests/support/builds.py. Format 2 (group roots) reads it as one group rooted at state 0. Remove it only when format 1 stops
being readable (READABLE_VERSIONS), never to make this pass.
"""

from __future__ import annotations

import random
import struct

import numpy as np

import glrmask_runtime
from glrmask_runtime.format import READABLE_VERSIONS, MAGIC
from tests.support.brute_force import random_walk
from tests.support.builds import JSON_GRAMMAR, REPO_ROOT, built

FIXTURE = REPO_ROOT / "tests" / "data" / "compat" / "json-small-gpt2.format1.glrm"


def test_fixture_is_format_1_which_stays_readable():
    data = FIXTURE.read_bytes()
    assert data.startswith(MAGIC)
    assert struct.unpack_from("<I", data, len(MAGIC))[0] == 1 and 1 in READABLE_VERSIONS


def test_fixture_masks_equal_a_fresh_build_on_random_walks():
    old = glrmask_runtime.load(FIXTURE)
    new = built(JSON_GRAMMAR, "small-gpt2").artifact
    assert (old.vocab_size, old.eos_token_ids) == (new.vocab_size, new.eos_token_ids)
    rng = random.Random(5)
    endings = []
    for _ in range(25):
        tokens, ending = random_walk(old.matcher(), rng, 60, 20, old.eos_token_ids)
        endings.append(ending)
        a, b = old.matcher(), new.matcher()
        for token in tokens:
            assert np.array_equal(a.mask(), b.mask()), tokens
            a.commit(token)
            b.commit(token)
        assert np.array_equal(a.mask(), b.mask()) and a.is_accepting() == b.is_accepting()
    assert "eos" in endings and "dead" not in endings
