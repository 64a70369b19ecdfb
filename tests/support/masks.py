"""Test assertion: a Parser DWA's masks equal the brute-force masks (devtools/brute_force.py) at given states."""

from __future__ import annotations

import numpy as np
import pytest

from devtools.brute_force import TokenTrie, brute_force_mask


def assert_masks_equal(b, states) -> None:
    """At every state the DWA mask equals brute force, and is_accepting() agrees with EOS in it."""
    trie = TokenTrie(b.vocab.token_bytes, b.vocab.special_ids)
    for i, matcher in enumerate(states):
        expected = brute_force_mask(b.artifact.recognizer, matcher._state, trie, b.artifact.vocab_size,
                                    b.artifact.eos_token_ids)
        got = matcher.mask()
        if not np.array_equal(got, expected):
            missing = [b.vocab.token_bytes[t] for t in np.flatnonzero(expected & ~got)[:5]]
            extra = [b.vocab.token_bytes[t] for t in np.flatnonzero(got & ~expected)[:5]]
            pytest.fail(f"state {i}: DWA mask differs from brute force; missing {missing}, extra {extra}")
        assert matcher.is_accepting() == bool(expected[list(b.artifact.eos_token_ids)].any())
