"""The exactness report is built up over several runs (the full matrix takes hours): a run replaces
only its own cells, and the summary table says per cell whether the targets are met."""

from __future__ import annotations

from devtools.exactness import COLUMNS, TOKENIZERS, merged, summary_table


def cell(grammar: str, tokenizer: str, **counts) -> dict:
    return {"grammar": grammar, "tokenizer": tokenizer, **{k: 0 for k in COLUMNS}, **counts,
            "llguidance": {"not_run": "disabled"}, "measured": "2026-11-30 18:00 UTC", "commit": "abc1234"}


def test_a_run_replaces_its_own_cells_and_keeps_the_others_in_matrix_order():
    old = [cell("sql", TOKENIZERS[1], steps=5), cell("json", TOKENIZERS[0], steps=7), cell("sql", TOKENIZERS[0])]
    new = [cell("sql", TOKENIZERS[1], steps=9)]
    report = merged(old, new)
    assert [(c["grammar"], c["tokenizer"], c["steps"]) for c in report] == [
        ("json", TOKENIZERS[0], 7), ("sql", TOKENIZERS[0], 0), ("sql", TOKENIZERS[1], 9)]


def test_the_summary_names_the_missed_targets_and_the_errors():
    table = summary_table([cell("json", "gpt2"), cell("sql", "gpt2", unsound_steps=2, dead_ends=1),
                           {"grammar": "latex", "tokenizer": "gpt2", "error": "stopped: the cell's process died"}])
    rows = [line for line in table.splitlines() if line.startswith("| ") and "grammar" not in line]
    assert "| met |" in rows[0]
    assert "MISSED: unsound_steps, dead_ends" in rows[1]
    assert "ERROR: stopped" in rows[2]
    assert all(row.count("|") == rows[0].count("|") for row in rows)     # a well-formed table
