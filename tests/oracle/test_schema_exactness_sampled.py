"""The sampled tier of the schema cell of `make exactness` (devtools/schema_exactness.py) inside `make test`.

A handful of MaskBench schemas x Llama-3: every instance replayed through fill_bitmask / commit and
judged by `jsonschema`, brute force at sampled states, random walks judged by `jsonschema`; every
target count must be 0 and the departures exactly the documented ones these schemas have; the same
with `--strict`, judged by the closed schemas. The last test breaks the masks on purpose (EOS never
allowed; EOS always allowed) and requires the judges to see it.
"""

from __future__ import annotations

import numpy as np
import pytest

import glrmask_runtime
from devtools.data import tokenizer_file
from devtools.schema_exactness import TARGETS, SchemaTier, run_schema_cell

LLAMA3 = "llama3.tiktoken"
# a function call's nested required object (BFCL), optional properties, enums and arrays (Github),
# additionalProperties schemas (Kubernetes), string-valued properties (WashingtonPost, Glaiveai2K)
SCHEMAS = ["BFCL_simple_0.json", "Github_easy---o53703.json", "Github_trivial---o21731.json",
           "Kubernetes---kb_937_Normalized.json", "WashingtonPost---wp_76_Normalized.json",
           "Glaiveai2K---search_jobs_f078e469.json"]
# no time budget: the counts below are fixed, so a slow or busy machine takes longer instead of
# checking fewer states and walks (an 8 s budget failed the count assertions under load)
TIER = SchemaTier(every=1, states=2, walks=3, budget_s=float("inf"))


def _cell(names: list[str], tier: SchemaTier = TIER, strict: bool = False) -> dict:
    return run_schema_cell(LLAMA3, str(tokenizer_file(LLAMA3)), tier, names=names, strict=strict)


def test_sampled_schemas_meet_every_target():
    cell = _cell(SCHEMAS)
    assert cell["schemas"] == len(SCHEMAS) and cell["compiled"] == len(SCHEMAS), cell["refused_by"]
    assert {k: cell[k] for k in TARGETS} == dict.fromkeys(TARGETS, 0), cell["examples"]
    assert cell["valid"] > 0 and cell["invalid"] > 0 and cell["valid_completed"] == cell["valid"]
    assert cell["invalid_refused"] == cell["invalid"] and cell["departures"] == {}
    assert cell["states"] >= len(SCHEMAS) and cell["walks"] == 3 * len(SCHEMAS)
    assert cell["walks_completed"] >= 2 * len(SCHEMAS), cell      # the rest capped (no verdict)


def test_strict_schemas_meet_every_target_judged_closed():
    """--strict, judged by the schemas with what they leave out written false (`closed`): o25979 has
    an instance with an undeclared key, valid as written and invalid closed."""
    names = [*SCHEMAS, "Github_medium---o25979.json"]
    cell = _cell(names, strict=True)
    assert cell["grammar"] == "maskbench-strict" and cell["compiled"] == len(names), cell["refused_by"]
    assert {k: cell[k] for k in TARGETS} == dict.fromkeys(TARGETS, 0), cell["examples"]
    assert cell["label_disagreements"] >= 1 and cell["invalid_refused"] == cell["invalid"]
    assert cell["valid_completed"] == cell["valid"] > 0 and cell["departures"] == {}
    assert cell["walks_completed"] >= 2 * len(names), cell


def _broken(monkeypatch, how: str) -> None:
    original = glrmask_runtime.Matcher.fill_bitmask
    mask = glrmask_runtime.Matcher.mask

    def fill_bitmask(self, bitmask, index=0):
        original(self, bitmask, index)
        for eos in self._art.eos_token_ids:
            bit = np.int32(-(1 << 31)) if eos & 31 == 31 else np.int32(1 << (eos & 31))
            if how == "no-eos":
                bitmask[index, eos >> 5] &= ~bit
            else:
                bitmask[index, eos >> 5] |= bit

    def flipped_mask(self):
        out = np.array(mask(self))
        out[self._art.eos_token_ids[0]] ^= True
        return out

    monkeypatch.setattr(glrmask_runtime.Matcher, "fill_bitmask", fill_bitmask)
    monkeypatch.setattr(glrmask_runtime.Matcher, "mask", flipped_mask)


@pytest.mark.parametrize("how", ["no-eos", "eos-always"])
def test_the_judges_see_a_broken_mask(monkeypatch, how):
    _broken(monkeypatch, how)
    cell = _cell(SCHEMAS[1:2], SchemaTier(every=1, states=2, walks=0, budget_s=float("inf")))
    assert cell["mask_mismatches"] == cell["states"] > 0
    if how == "no-eos":          # every valid instance refused where the recognizer accepts it
        assert cell["unsound_steps"] == cell["valid_rejected"] == cell["valid"] > 0, cell
    else:                        # EOS after prefixes that are no instance (most are not JSON)
        assert cell["early_eos_invalid"] > 0, cell
