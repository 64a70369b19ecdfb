"""The sections of a Parser DWA artifact: names, dtypes and dimensions, written down once.

The compiler's writer (`glrmask_cli.pipeline.artifact_sections`) passes its arrays through
`conform_sections`, which casts each to the schema dtype and refuses unknown, missing, misshapen or
out-of-range ones; the loader (`glrmask_runtime.artifact`) checks a file against `sections_for` its
format version. What the sections mean: artifacts/FORMAT.md section 7 and `artifact.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from glrmask_runtime.format import FORMAT_VERSION

ARTIFACT_KIND = "glrmask.parser-dwa"


@dataclass(frozen=True)
class SectionSpec:
    """One section's little-endian dtype and number of dimensions."""

    dtype: np.dtype[np.generic]
    ndim: int

    def describe(self) -> str:
        return f"{self.dtype.str} {self.ndim}-D"


def _spec(dtype: str, ndim: int) -> SectionSpec:
    return SectionSpec(np.dtype(dtype), ndim)


# Sections every format version has.
SECTIONS: Mapping[str, SectionSpec] = MappingProxyType({
    "lexer.transitions": _spec("<i4", 2),
    "lexer.close_sets": _spec("<i4", 2),
    "lexer.viable_sets": _spec("<i4", 1),
    "lexer.term_set_offsets": _spec("<i4", 1),
    "lexer.term_set_items": _spec("<i4", 1),
    "lexer.ignored": _spec("<i4", 1),
    "lr.action_offsets": _spec("<i4", 1),
    "lr.actions": _spec("<i4", 1),
    "lr.goto": _spec("<i4", 2),
    "lr.rule_lhs": _spec("<i4", 1),
    "lr.rule_len": _spec("<i4", 1),
    "dwa.edge_offsets": _spec("<i4", 1),
    "dwa.edge_labels": _spec("<i4", 1),
    "dwa.edge_targets": _spec("<i4", 1),
    "dwa.default": _spec("<i4", 1),
    "rows.bits": _spec("<u4", 2),
    "vocab.token_offsets": _spec("<i8", 1),
    "vocab.token_data": _spec("|u1", 1),
})
# Format 2 and later: the roots of the DWA's groups a walk takes from a
# top in LR state p are dwa.roots[dwa.root_offsets[p]:dwa.root_offsets[p + 1]]; the row of (DWA state d,
# lexer state q) is rows.q_rows[i] where rows.q_accepts[i] == dwa.accept_of[d], i in [rows.q_offsets[q],
# rows.q_offsets[q + 1]), else row 0. At lexer state q, tokens rows.close_rows[j] close the open lexeme as
# term set rows.close_sets[j] (j in [rows.close_offsets[q], rows.close_offsets[q + 1])) and are then
# decided by the walks from START on the stacks after it. Format 1: one root (state 0), a dense
# (n_lexer_states, n_dwa_states) row table, no closes.
_GROUPED: Mapping[str, SectionSpec] = MappingProxyType({
    "dwa.root_offsets": _spec("<i4", 1), "dwa.roots": _spec("<i4", 1), "dwa.accept_of": _spec("<i4", 1),
    "rows.q_offsets": _spec("<i4", 1), "rows.q_accepts": _spec("<i4", 1), "rows.q_rows": _spec("<i4", 1),
    "rows.close_offsets": _spec("<i4", 1), "rows.close_sets": _spec("<i4", 1), "rows.close_rows": _spec("<i4", 1),
})
# Optional in format 2 and later (older runtimes ignore them; without them every root is walked): the
# roots whose walks can give a non-empty row at lexer state q are dwa.q_roots[dwa.q_root_offsets[q]:
# dwa.q_root_offsets[q + 1]], and those whose walks from START can accept a closing token of runtime
# close j are rows.close_roots[rows.close_root_offsets[j]:rows.close_root_offsets[j + 1]].
WALK_FILTERS: Mapping[str, SectionSpec] = MappingProxyType({
    "dwa.q_root_offsets": _spec("<i4", 1), "dwa.q_roots": _spec("<i4", 1),
    "rows.close_root_offsets": _spec("<i4", 1), "rows.close_roots": _spec("<i4", 1),
})
# Optional in format 2 and later, for `glrmask inspect` only (never read by masks): LR state s's
# kernel items as UTF-8 text, lr.core_text[lr.core_offsets[s]:lr.core_offsets[s + 1]].
_LR_CORES: Mapping[str, SectionSpec] = MappingProxyType({
    "lr.core_offsets": _spec("<i8", 1), "lr.core_text": _spec("|u1", 1),
})
# Optional in format 4 and later, both or neither (an artifact built with lark's contextual lexer,
# docs/semantics.md): lexer.restart[q], the lexer state (a context's START) that a lexeme closing
# at q as an ignored terminal hands over to; lr.lexer_start[p], the START of LR state p's context
# (after a lexeme, each stack lexes on from the START of its top's context). Without them the
# lexer has one context, and START is its START.
_CONTEXTUAL: Mapping[str, SectionSpec] = MappingProxyType({
    "lexer.restart": _spec("<i4", 1), "lr.lexer_start": _spec("<i4", 1),
})
# Optional in format 5 and later: dwa.emits[d] = 1 where DWA state d *emits*: a walk that passes it
# takes its row too, not only the row of the state where it stops (docs/ARCHITECTURE.md, "Parser
# DWA"). Without it no state emits.
_EMITS: Mapping[str, SectionSpec] = MappingProxyType({"dwa.emits": _spec("|u1", 1)})
_OPTIONAL_2 = MappingProxyType({**WALK_FILTERS, **_LR_CORES})
_OPTIONAL_4 = MappingProxyType({**_OPTIONAL_2, **_CONTEXTUAL})
OPTIONAL_BY_VERSION: Mapping[int, Mapping[str, SectionSpec]] = MappingProxyType({
    1: MappingProxyType({}), 2: _OPTIONAL_2, 3: _OPTIONAL_2, 4: _OPTIONAL_4,
    5: MappingProxyType({**_OPTIONAL_4, **_EMITS}),
})
SECTIONS_BY_VERSION: Mapping[int, Mapping[str, SectionSpec]] = MappingProxyType({
    1: MappingProxyType({"dwa.row_by_lexer_state": _spec("<i4", 2)}),
    2: _GROUPED,
    3: _GROUPED,   # format 3 changed the file header only
    4: _GROUPED,   # format 4 added optional sections only
    5: _GROUPED,   # format 5 too
})


def sections_for(version: int) -> dict[str, SectionSpec]:
    """Every section an artifact of container format `version` has, by name (sorted)."""
    extra = SECTIONS_BY_VERSION.get(version)
    if extra is None:
        raise ValueError(f"format version: expected one of {sorted(SECTIONS_BY_VERSION)}, got {version}")
    both = {**SECTIONS, **extra}
    return {name: both[name] for name in sorted(both)}


def optional_sections_for(version: int) -> dict[str, SectionSpec]:
    """The sections an artifact of `version` may have, by name (sorted); checked when present."""
    sections_for(version)      # the version check
    extra = OPTIONAL_BY_VERSION[version]
    return {name: extra[name] for name in sorted(extra)}


def conform_sections(arrays: Mapping[str, object], version: int = FORMAT_VERSION) -> dict[str, np.ndarray]:
    """`arrays` (numpy arrays or lists) as the schema's dtypes, C-contiguous, sorted by name.

    Raises ValueError for names that are missing (optional ones may be) or not in the schema of
    `version`, for the wrong number of dimensions and for values the schema dtype cannot hold;
    TypeError for non-integers. The cast never changes a value, so equal inputs give equal bytes.
    """
    schema, optional = sections_for(version), optional_sections_for(version)
    missing = sorted(set(schema) - set(arrays))
    unknown = sorted(set(arrays) - set(schema) - set(optional))
    if missing or unknown:
        raise ValueError(f"sections do not match the format-{version} schema: missing {missing}, unknown {unknown}")
    every = {**schema, **optional}
    return {name: _conform(name, arrays[name], every[name]) for name in sorted(arrays)}


def _conform(name: str, value: object, spec: SectionSpec) -> np.ndarray:
    array = np.asarray(value)
    if array.ndim != spec.ndim:
        raise ValueError(f"section {name!r}: expected {spec.ndim} dimensions, got shape {array.shape}")
    if array.size == 0:   # an empty list is float64 to numpy; there is no value to lose
        return np.ascontiguousarray(array, dtype=spec.dtype)
    if array.dtype.kind not in "biu":
        raise TypeError(f"section {name!r}: expected integers ({spec.dtype}), got {array.dtype}")
    if array.dtype != spec.dtype and not np.can_cast(array.dtype, spec.dtype, "safe"):
        info = np.iinfo(spec.dtype.str)
        low, high = int(array.min()), int(array.max())
        if low < info.min or high > info.max:
            raise ValueError(f"section {name!r}: values in [{low}, {high}] do not fit {spec.dtype} "
                             f"[{info.min}, {info.max}]")
    return np.ascontiguousarray(array, dtype=spec.dtype)
