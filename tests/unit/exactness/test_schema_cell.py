"""The schema cell's pieces that need no build: its report rows (merged after the grammar cells, an
error row replacing a measured one) and the departure classes of docs/json-schema.md that excuse a
verdict jsonschema does not share."""

from __future__ import annotations

from devtools.exactness import SCHEMA_COLUMNS, merged, summary_table
from devtools.schema_exactness import COUNTS, TARGETS, invalid_departure, valid_departure, validator


def schema_cell(**counts) -> dict:
    return {"grammar": "maskbench", "tokenizer": "llama3.tiktoken", "kind": "schema", **dict.fromkeys(COUNTS, 0),
            **counts, "departures": {"order": 3}, "refused_by": {"SchemaUnsupported: not": 7}, "seconds": 1.0,
            "measured": "2026-12-03 07:00 UTC", "commit": "abc1234"}


def test_schema_columns_and_targets_are_counts_of_the_cell():
    assert set(SCHEMA_COLUMNS) <= set(COUNTS) and set(TARGETS) <= set(COUNTS)


def test_schema_rows_follow_the_grammar_cells_and_an_error_row_replaces_the_cell():
    grammar = {"grammar": "json", "tokenizer": "gpt2", "error": "x"}
    error = {"grammar": "maskbench", "tokenizer": "llama3.tiktoken", "error": "stopped"}
    assert merged([schema_cell(), grammar], []) == [grammar, schema_cell()]
    assert merged([schema_cell()], [error]) == [error]


def test_the_schema_table_names_missed_targets_departures_and_refusals():
    table = summary_table([schema_cell(), schema_cell(mask_mismatches=6, walk_invalid=2),
                           {"grammar": "maskbench", "tokenizer": "gpt2", "error": "stopped"}])
    rows = [line for line in table.split("## JSON Schema cells")[1].splitlines()
            if line.startswith("| ") and "grammar" not in line]
    assert "| order 3 | SchemaUnsupported: not 7 | met |" in rows[0]
    assert "MISSED: mask_mismatches, walk_invalid" in rows[1]
    assert "ERROR: stopped" in rows[2]
    assert all(row.count("|") == rows[0].count("|") for row in rows)


def test_valid_departures():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"$ref": "#/$defs/b"}},
              "$defs": {"b": {"type": "object", "properties": {"x": {}, "y": {}}}}}
    assert valid_departure(schema, {"b": {}, "a": 1}) == "order"
    assert valid_departure(schema, {"a": 1, "b": {"y": 1, "x": 2}}) == "order"      # through $ref
    assert valid_departure(schema, {"a": 1, "b": {"x": 1e-05}}) == "exponent"
    assert valid_departure(schema, {"a": 1.0}) == "integer_spelling"
    assert valid_departure(schema, {"a": 1, "b": {"x": "\n"}}) is None          # no format/pattern: no excuse
    assert valid_departure({"type": "string", "format": "email"}, "a\n@b") == "escape"


def test_invalid_departures_are_the_cases_where_we_accept_more():
    check = validator({"properties": {"d": {"format": "date"}, "t": {"format": "date-time"},
                                      "m": {"multipleOf": 0.01}}})
    assert invalid_departure(check, {"d": "2023-02-30"}) == "date_day"
    assert invalid_departure(check, {"t": "2023-01-01T23:59:60Z"}) == "leap_second"
    assert invalid_departure(check, {"m": 0.07}) == "multiple_of_decimal"
    assert invalid_departure(check, {"d": "0000-01-01"}) is None       # not documented: counted as a miss
    assert invalid_departure(check, {"m": 0.071}) is None
    assert invalid_departure(check, {"d": "2023-02-30", "m": 0.071}) is None      # every error must be excused


def test_the_strict_schema_cell_is_a_row_of_its_own_in_the_schema_table():
    strict = schema_cell() | {"grammar": "maskbench-strict"}
    assert merged([strict], [schema_cell()]) == [schema_cell(), strict]
    assert merged([strict], [{"grammar": "maskbench-strict", "tokenizer": "llama3.tiktoken", "error": "x"}]) == [
        {"grammar": "maskbench-strict", "tokenizer": "llama3.tiktoken", "error": "x"}]
    table = summary_table([schema_cell(), strict])
    assert "| maskbench-strict | llama3.tiktoken |" in table.split("## JSON Schema cells")[1]
