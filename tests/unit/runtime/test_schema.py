"""One section schema for the compiler's writer and the runtime's loader (glrmask_runtime.schema)."""

from __future__ import annotations

import numpy as np
import pytest

from devtools.builds import JSON_GRAMMAR, built
from glrmask_cli.limits import BuildLimits
from glrmask_cli.pipeline import artifact_sections
from glrmask_runtime.format import FORMAT_VERSION, READABLE_VERSIONS
from glrmask_runtime.schema import (
    OPTIONAL_BY_VERSION,
    SECTIONS_BY_VERSION,
    conform_sections,
    optional_sections_for,
    sections_for,
)

CONTEXTUAL_ONLY = ("lexer.restart", "lr.lexer_start")   # written for `--lexer contextual` only
EMITTING_ONLY = ("dwa.emits",)                           # written where some DWA state emits


@pytest.fixture(scope="module", params=["basic", "contextual"])
def lexer(request):
    return request.param


@pytest.fixture(scope="module")
def sections(lexer):
    return artifact_sections(built(JSON_GRAMMAR, "small-gpt2", lexer=lexer).compiled)


def test_emitting_states_are_written_where_there_are_some():
    compiled = built(JSON_GRAMMAR, "small-gpt2", layout="one", limits=BuildLimits(max_cumulative_states=0)).compiled
    assert any(compiled.parser_dwa.dwa.emits)
    emits = artifact_sections(compiled)["dwa.emits"]
    assert emits.tolist() == [int(e) for e in compiled.parser_dwa.dwa.emits]


def test_writer_output_is_exactly_the_schema_the_loader_checks(sections, lexer):
    """The compiler writes every section of its format, the optional walk filters included, the
    contextual lexer's sections exactly when it is built with that lexer, and the emitting states
    exactly when there are some."""
    every = {**sections_for(FORMAT_VERSION), **optional_sections_for(FORMAT_VERSION)}
    schema = {name: every[name] for name in sorted(every)
              if (lexer == "contextual" or name not in CONTEXTUAL_ONLY) and name not in EMITTING_ONLY}
    assert list(sections) == list(schema)
    for name, array in sections.items():
        assert (array.dtype, array.ndim) == (schema[name].dtype, schema[name].ndim), name
        assert array.flags.c_contiguous
    loaded = built(JSON_GRAMMAR, "small-gpt2", lexer=lexer).artifact.container.sections
    assert {name: (a.dtype, a.ndim) for name, a in loaded.items()} == {
        name: (spec.dtype, spec.ndim) for name, spec in schema.items()}


def test_every_readable_format_version_has_a_schema():
    assert set(SECTIONS_BY_VERSION) == set(READABLE_VERSIONS) == set(OPTIONAL_BY_VERSION)
    assert "dwa.row_by_lexer_state" in sections_for(1) and "dwa.roots" not in sections_for(1)


def test_optional_sections_may_be_left_out(sections):
    """An artifact without the walk filters is what older compilers wrote: conformed and loaded
    (every root is walked then)."""
    optional = optional_sections_for(FORMAT_VERSION)
    assert optional and not set(optional) & set(sections_for(FORMAT_VERSION))
    kept = conform_sections({name: a for name, a in sections.items() if name not in optional})
    assert not set(kept) & set(optional)


def test_conform_refuses_a_missing_or_unknown_section(sections):
    partial = dict(sections)
    del partial["lr.goto"]
    with pytest.raises(ValueError, match=r"missing \['lr.goto'\], unknown \[\]"):
        conform_sections(partial)
    with pytest.raises(ValueError, match=r"unknown \['lr.gotoo'\]"):
        conform_sections({**sections, "lr.gotoo": sections["lr.goto"]})


def test_conform_refuses_a_value_the_schema_dtype_cannot_hold(sections):
    """A state id past 2**31 would wrap silently in an int32 cast and point into the wrong table."""
    big = sections["dwa.default"].astype(np.int64)
    big[0] = 2**31
    with pytest.raises(ValueError, match="do not fit int32"):
        conform_sections({**sections, "dwa.default": big})
    with pytest.raises(ValueError, match="do not fit uint32"):
        conform_sections({**sections, "rows.bits": sections["rows.bits"].astype(np.int64) - 1})


def test_conform_refuses_wrong_dimensions_and_non_integers(sections):
    with pytest.raises(ValueError, match="expected 2 dimensions"):
        conform_sections({**sections, "lr.goto": sections["lr.goto"].reshape(-1)})
    with pytest.raises(TypeError, match="expected integers"):
        conform_sections({**sections, "lr.rule_len": sections["lr.rule_len"].astype(np.float64)})


def test_conform_casts_lists_and_other_integer_dtypes_without_changing_values(sections):
    wide = {name: a.astype(">i8") if a.dtype.kind == "i" else a for name, a in sections.items()}
    wide["dwa.edge_labels"] = sections["dwa.edge_labels"].tolist()
    wide["lexer.ignored"] = []
    out = conform_sections(wide)
    assert out["lexer.ignored"].dtype == np.dtype("<i4") and out["lexer.ignored"].shape == (0,)
    for name in sections:
        if name != "lexer.ignored":
            assert out[name].dtype == sections[name].dtype and out[name].tobytes() == sections[name].tobytes(), name
