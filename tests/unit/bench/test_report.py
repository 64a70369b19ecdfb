"""bench.report: table rows, ratio cells, failure lines, results file names (synthetic results)."""

from __future__ import annotations

import json

from bench import report
from bench.stats import summarize


def engine(mask_ns: list[int], artifact: int | None, **extra) -> dict:
    return {"version": "t", "docs_ok_text": "2/2", "mask": summarize(mask_ns), "commit": summarize(mask_ns),
            "mask_bool": None, "setup": {"compile_cold_s": 1.0, "compile_warm_s": 0.5, "artifact_bytes": artifact,
                                         "load_ms": 2.0}, "rejected": [], **extra}


def results() -> list[dict]:
    ours = engine([1000, 2000, 3000], 2048)
    peer = engine([4000, 8000, 12000], None, rejected=[{"id": "d1", "step": 3, "reason": "token 5 not in mask"}])
    runs = {"cl100k_base": {"glrmask": ours, "peer": peer, "broken": {"error": "venv missing"}}}
    return [{"workload": "json", "runs": runs}]


def column(name: str) -> int:
    return [c[0] for c in report.COLUMNS].index(name) + 3


def test_rows_carry_ratios_to_glrmask() -> None:
    rows = report.table_rows(results())
    assert rows[0][:3] == ["workload", "tokenizer", "engine"]
    by_engine = {row[2]: row for row in rows[1:]}
    assert set(by_engine) == {"glrmask", "peer"}               # failed engines get no row
    ours_p50, peer_p50 = by_engine["glrmask"][column("mask p50")], by_engine["peer"][column("mask p50")]
    assert ours_p50 == "2.0" and peer_p50 == f"8.0 x{8.0 / 2.0:.1f}"
    assert by_engine["peer"][column("artifact KB")] == "-"     # a missing number prints as '-'
    assert by_engine["glrmask"][column("artifact KB")] == "2"


def test_render_lists_failures_and_rejections() -> None:
    text = report.render(results(), report.machine())
    assert "json x cl100k_base x broken: not run: venv missing" in text
    assert ("json x cl100k_base x peer: 1 documents rejected or skipped (not timed), "
            "e.g. d1 @3: token 5 not in mask") in text
    widths = {len(line) for line in text.splitlines()[3:6]}
    assert len(widths) == 1                                      # header, rule and rows line up


def test_write_results_names_files_by_date_and_workload(tmp_path) -> None:
    paths = report.write_results(results(), tmp_path)
    assert len(paths) == 1 and paths[0].name.endswith("-json.json")
    assert json.loads(paths[0].read_text())["runs"]["cl100k_base"]["broken"]["error"] == "venv missing"


def test_slowest_steps_ranks_documents_by_their_worst_step() -> None:
    from bench.__main__ import slowest_steps

    docs = [{"id": "a", "slowest_mask": [4, 9000], "slowest_commit": [2, 500, 77]},
            {"id": "b", "slowest_mask": [0, 12000], "slowest_commit": None},
            {"id": "c", "slowest_mask": [1, 3000], "slowest_commit": [0, 800, 5]}]
    worst = slowest_steps(docs, keep=2)
    assert [(w["doc"], w["step"], w["us"]) for w in worst["mask"]] == [("b", 0, 12.0), ("a", 4, 9.0)]
    assert worst["commit"] == [{"us": 0.8, "doc": "c", "step": 0, "token": 5},
                               {"us": 0.5, "doc": "a", "step": 2, "token": 77}]
