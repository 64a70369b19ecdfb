"""`glrmask inspect --why / --trace / --dot dwa --from-prefix` and `glrmask diff`.

Consistency with the runtime: the trace's walks and closes, combined as the matcher combines them,
give exactly `mask()` at every sampled state (json, and lark.lark in the grouped layout with runtime
closes and several groups, with either lexer); `--why` says allowed exactly when the mask does, names a walk or close
whose row has the token, lexes an allowed token's bytes without rejection, and for a masked token
names a place where the recognizer also rejects it."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from click.testing import CliRunner

from devtools.brute_force import sampled_states
from devtools.builds import JSON_GRAMMAR, LARK_GRAMMARS, built
from devtools.documents import json_documents, lark_documents
from glrmask_cli import explain
from glrmask_cli.cli import cli
from glrmask_cli.limits import BuildLimits
from glrmask_runtime.errors import InputRejected

UNMERGED = BuildLimits(max_merged_states=0)
EMITTING = BuildLimits(max_merged_states=0, max_cumulative_states=0)   # states emit from the first one on
CASES = {"json": (JSON_GRAMMAR, "auto", json_documents, "basic", UNMERGED),
         "json-emitting": (JSON_GRAMMAR, "auto", json_documents, "basic", EMITTING),
         "lark-grouped": (LARK_GRAMMARS / "lark.lark", "grouped", lark_documents, "basic", UNMERGED),
         "lark-runtime-close-emitting": (LARK_GRAMMARS / "lark.lark", "runtime-close", lark_documents, "basic",
                                         EMITTING),
         "lark-grouped-contextual": (LARK_GRAMMARS / "lark.lark", "grouped", lark_documents, "contextual", UNMERGED)}


def _mask_from_trace(art, walked) -> np.ndarray:
    rows = art.rows
    mask = np.zeros(rows.shape[1], rows.dtype)
    for walk in walked["walks"]:
        for row in walk["rows"]:
            mask |= rows[row]
    for close in walked["closes"]:
        after = np.zeros_like(mask)
        for walk in close["walks"]:
            for row in walk["rows"]:
                after |= rows[row]
        mask |= rows[close["closing_tokens_row"]] & after
    bits = np.unpackbits(mask.view(np.uint8), bitorder="little")[:art.vocab_size]
    return bits.view(bool)


@pytest.mark.parametrize("case", sorted(CASES))
def test_trace_and_why_agree_with_the_mask(case):
    grammar, layout, documents, lexer, limits = CASES[case]
    b = built(grammar, "small-gpt2", layout=layout, limits=limits, lexer=lexer)
    art = b.artifact
    assert bool(art.emitting) == (limits is EMITTING)
    rng = random.Random(3)
    checked = closes = 0
    for matcher in sampled_states(b, documents()[:12], 30, seed=5):
        walked = explain.trace(art, matcher)
        mask = matcher.mask()
        assert np.array_equal(_mask_from_trace(art, walked), mask)
        closes += len(walked["closes"])
        allowed = np.flatnonzero(mask)
        masked = np.flatnonzero(~mask)
        for token in [int(t) for t in rng.sample(list(allowed), min(3, len(allowed)))] + \
                     [int(t) for t in rng.sample(list(masked), min(3, len(masked)))]:
            answer = explain.why(art, matcher, token)
            assert answer["allowed"] == bool(mask[token])
            if token in art.eos_token_ids or not art.token_bytes(token):
                continue
            assert bool(answer["decided_by"]) == answer["allowed"], answer
            lexing = answer["lexing"]       # how the token's bytes lex from here
            if answer["allowed"]:
                assert "closes" in lexing and "rejected_at_byte" not in lexing, lexing
            if not answer["allowed"]:
                with pytest.raises(InputRejected) as info:
                    art.recognizer.feed(matcher.parse_state, art.token_bytes(token))
                assert answer["rejected_at_byte"] == info.value.position
                if lexer == "contextual" and "rejected_at_byte" in lexing:   # byte by byte: as soon as
                    assert lexing["rejected_at_byte"] <= info.value.position  # no thread is viable
            checked += 1
    assert checked > 20
    if layout != "one" and "json" not in case:
        assert closes > 0


@pytest.fixture(scope="module")
def json_artifact(tmp_path_factory):
    path = tmp_path_factory.mktemp("explain") / "json.glrm"
    result = CliRunner().invoke(cli, ["build", str(JSON_GRAMMAR), "-o", str(path), "-q"])
    assert result.exit_code == 0, result.output
    return path


def test_why_on_the_command_line(json_artifact):
    runner = CliRunner()
    out = runner.invoke(cli, ["inspect", str(json_artifact), "--prefix", '{"a"', "--why", ":"])
    assert out.exit_code == 0 and out.output.startswith("token #25 ':': allowed"), out.output
    assert "its bytes from lexer state" in out.output and "close STRING" in out.output, out.output  # contextual
    out = runner.invoke(cli, ["inspect", str(json_artifact), "--prefix", '{"a"', "--why", "}"])
    assert out.exit_code == 0 and "masked" in out.output and 'expected there: ":"' in out.output, out.output
    data = json.loads(runner.invoke(cli, ["inspect", str(json_artifact), "--prefix", "[1", "--why", "#87",
                                          "--json"]).output)           # 'x'
    assert data["token"] == 87 and data["allowed"] is False and data["rejected_at_byte"] == 0
    bad = runner.invoke(cli, ["inspect", str(json_artifact), "--why", "not one token at all"])
    assert bad.exit_code == 2 and "not a single token" in bad.output


def test_trace_and_reachable_dot_on_the_command_line(json_artifact):
    runner = CliRunner()
    out = runner.invoke(cli, ["inspect", str(json_artifact), "--prefix", '{"a": [1', "--trace"])
    assert out.exit_code == 0 and "walk root" in out.output and "compile-time worst case" in out.output
    whole = runner.invoke(cli, ["inspect", str(json_artifact), "--dot", "dwa"]).output
    part = runner.invoke(cli, ["inspect", str(json_artifact), "--dot", "dwa", "--from-prefix", '{"a": [1',
                               "--depth", "1"]).output
    assert part.startswith("digraph") and 0 < part.count(" -> ") < whole.count(" -> ")
    assert "style=bold" in part
    misuse = runner.invoke(cli, ["inspect", str(json_artifact), "--depth", "2"])
    assert misuse.exit_code == 2


def test_diff_names_what_changed(json_artifact, tmp_path):
    runner = CliRunner()
    other = tmp_path / "small.glrm"
    built_other = runner.invoke(cli, ["build", str(JSON_GRAMMAR), "-o", str(other), "-q", "--layout", "grouped"])
    assert built_other.exit_code == 0
    out = runner.invoke(cli, ["diff", str(json_artifact), str(other)])
    assert out.exit_code == 0 and "dwa.layout:" in out.output and "size.file_bytes:" in out.output, out.output
    same = runner.invoke(cli, ["diff", str(json_artifact), str(json_artifact)])
    assert "are the same artifact" in same.output
    data = json.loads(runner.invoke(cli, ["diff", str(json_artifact), str(other), "--json"]).output)
    assert data["changed"]["dwa.layout"]["b"] == "grouped"


def test_lr_state_cores_name_the_kernel_items():
    b = built(JSON_GRAMMAR, "small-gpt2")
    lr = b.artifact.lr
    cores = [b.artifact.lr_core(s) for s in range(lr.n_states)]
    assert cores[0] == "$start -> . start"
    assert all(core and "." in core for core in cores)
    assert any(core.startswith("object -> LBRACE . ") for core in cores)
