"""The SGLang-shaped request grammar (`glrmask_runtime.sglang`) in a simulated decoding loop with
jump-forward: forced text is appended, the output re-tokenized, the grammar moved to the new tokens.
Judges: `json.loads` on finished outputs, and a fresh matcher replaying the final token ids."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import glrmask_runtime
from devtools.builds import JSON_GRAMMAR, built
from glrmask_runtime.bitmask import bitmask_to_bool
from glrmask_runtime.sglang import GLRMaskSGLangGrammar

# A record with fixed keys: the keys and punctuation between the values are forced text.
RECORD = ('start: "{\\"name\\": " STRING ", \\"tags\\": [" (STRING (", " STRING)*)? "]}"\n'
          'STRING: /"[a-z ]{0,12}"/\n')


def test_decoding_loop_with_jump_forward_and_retokenization(tmp_path):
    grammar_file = tmp_path / "record.lark"
    grammar_file.write_text(RECORD)
    b = built(grammar_file, "gpt2")
    art, vocab = b.artifact, b.vocab
    eos = art.eos_token_ids[0]
    rng = random.Random(11)
    template = GLRMaskSGLangGrammar(art.matcher())
    jumps = finished = 0
    for _request in range(6):
        grammar = template.copy()
        ids: list[int] = []
        bitmask = glrmask_runtime.allocate_bitmask(1, art.vocab_size)
        for _step in range(80):
            if grammar.is_terminated():
                break
            helper = grammar.try_jump_forward(None)
            if helper is not None:
                text, _state = grammar.jump_forward_str_state(helper)
                new_ids = vocab.encode(vocab.decode_bytes(ids).decode() + text)
                grammar.jump_and_retokenize(ids, new_ids, _state)
                ids, jumps = new_ids, jumps + 1
            grammar.fill_vocab_mask(bitmask, 0)
            allowed = np.flatnonzero(bitmask_to_bool(bitmask[0], art.vocab_size))
            token = eos if eos in allowed and rng.random() < 0.3 else int(allowed[rng.randrange(len(allowed))])
            grammar.accept_token(token)
            ids.append(token)
        replay = art.matcher()
        for token in ids:
            replay.commit(token)
        assert np.array_equal(replay.mask(), grammar.matcher.mask())
        if grammar.is_terminated():
            json.loads(vocab.decode_bytes(ids).decode())
            finished += 1
    assert jumps > 0 and finished > 0


def test_a_rejected_token_raises_and_the_copy_starts_over():
    b = built(JSON_GRAMMAR, "gpt2")
    grammar = GLRMaskSGLangGrammar(b.artifact.matcher())
    grammar.accept_token(b.vocab.encode("[")[0])
    with pytest.raises(glrmask_runtime.TokenRejected):
        grammar.accept_token(b.vocab.encode("}")[0])
    assert grammar.matcher.steps == 1 and grammar.copy().matcher.steps == 0
    grammar.rollback(1)
    assert grammar.matcher.steps == 0
