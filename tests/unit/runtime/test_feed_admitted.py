"""`commit` advances through `Recognizer.feed_admitted`, which skips the checks the mask has already
made: on every admitted token it must reach the state `feed` (the full recognizer) reaches."""

from __future__ import annotations

import random

import numpy as np
import pytest

import glrmask_runtime
from devtools.brute_force import random_walk
from devtools.builds import JSON_GRAMMAR, LARK_GRAMMARS, built
from glrmask_runtime.errors import InputRejected


def same_state(art, a, b) -> bool:
    if [t.lexer_state for t in art.threads(a)] != [t.lexer_state for t in art.threads(b)]:
        return False
    ma, mb = glrmask_runtime.Matcher(art, a), glrmask_runtime.Matcher(art, b)
    return bool(np.array_equal(ma.mask(), mb.mask())) and ma.is_accepting() == mb.is_accepting()


@pytest.mark.parametrize("grammar, layout", [(JSON_GRAMMAR, "auto"), (LARK_GRAMMARS / "lark.lark", "grouped")])
def test_feed_admitted_reaches_the_state_feed_reaches_on_every_admitted_token(grammar, layout):
    b = built(grammar, "small-gpt2", layout=layout)
    art, recognizer = b.artifact, b.artifact.recognizer
    rng = random.Random(11)
    checked = 0
    for _ in range(6):
        tokens, _ = random_walk(art.matcher(), rng, 30, 15, art.eos_token_ids)
        m = art.matcher()
        for token in tokens:
            allowed = [t for t in np.flatnonzero(m.mask()).tolist() if t not in art.eos_token_ids]
            for t in rng.sample(allowed, min(12, len(allowed))):
                data = art.token_bytes(t)
                assert same_state(art, recognizer.feed(m._state, data), recognizer.feed_admitted(m._state, data))
                checked += 1
            m.commit(token)
    assert checked > 200


def test_feed_admitted_of_bytes_no_stack_can_shift_raises_what_feed_raises():
    """`] ` closes a `]` lexeme at the start of a JSON text: no stack shifts it."""
    art = built(JSON_GRAMMAR, "small-gpt2").artifact
    state = art.recognizer.initial()
    with pytest.raises(InputRejected) as full:
        art.recognizer.feed(state, b"] ")
    with pytest.raises(InputRejected) as admitted:
        art.recognizer.feed_admitted(state, b"] ")
    assert (admitted.value.position, str(admitted.value)) == (full.value.position, str(full.value))
