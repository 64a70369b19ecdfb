"""Artifacts written by earlier compilers keep loading and give the masks today's compiler gives.

The fixtures are json.lark (grammars/) with the 4,001-token `small-gpt2` vocabulary of
devtools/builds.py:
- `json-small-gpt2.format1.glrm`: glrmask 0.1.0 at commit c50abc2 (the first canonical-LR(1) build);
  format 1 is read as one group rooted at state 0 with a dense row table.
- `json-small-gpt2.format2.glrm`: glrmask 0.1.0 at commit 82a3838, `--layout grouped` (13 group
  roots, the sparse row table, runtime closes), so every format-2 section is exercised.
- `json-small-gpt2.format3.glrm`: glrmask 0.1.0 at commit 188daf2, `--layout grouped` (the small
  groups merged into one; runtime closes): the 104-byte header with its own crc32 and the image's
  sha256.
- `json-small-gpt2.format4.glrm`: glrmask 0.1.0 at commit 8fb35f5, `--layout grouped` with lark's
  contextual lexer (its two sections), no emitting DWA states (format 5 added them).
Remove a fixture only when its version stops being readable (READABLE_VERSIONS), never to make this
pass.
"""

from __future__ import annotations

import random
import struct

import numpy as np
import pytest

import glrmask_runtime
from devtools.brute_force import random_walk
from devtools.builds import JSON_GRAMMAR, REPO_ROOT, built
from glrmask_runtime.format import MAGIC, READABLE_VERSIONS

FIXTURES = {version: REPO_ROOT / "tests" / "data" / "compat" / f"json-small-gpt2.format{version}.glrm"
            for version in (1, 2, 3, 4)}


@pytest.mark.parametrize("version", sorted(FIXTURES))
def test_fixture_has_its_format_version_which_stays_readable(version):
    data = FIXTURES[version].read_bytes()
    assert data.startswith(MAGIC)
    assert struct.unpack_from("<I", data, len(MAGIC))[0] == version and version in READABLE_VERSIONS


@pytest.mark.parametrize("version", sorted(FIXTURES))
def test_fixture_masks_equal_a_fresh_build_on_random_walks(version):
    old = glrmask_runtime.load(FIXTURES[version])
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
