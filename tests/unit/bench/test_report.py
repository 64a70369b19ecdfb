"""bench.report: the single-pass, min-of-N and build tables, ratio cells, timeouts, failure lines, results
file names (synthetic results)."""

from __future__ import annotations

import json

from bench import report
from bench.stats import summarize


def engine(mask_ns: list[int], artifact: int | None, **extra) -> dict:
    least = [x // 2 for x in mask_ns]
    return {"version": "t", "docs_ok_text": "2/2", "mask": summarize(mask_ns), "commit": summarize(mask_ns),
            "mask_min": summarize(least), "commit_min": summarize(least), "replays": 3,
            "mask_bool": None, "grammar_form": "as written",
            "setup": {"compile_cold_s": 1.0, "compile_warm_s": 0.5, "artifact_bytes": artifact, "load_ms": 2.0,
                      "compile_memory": {"peak_rss_kb": 2048 * 1024}},
            "rejected": [], **extra}


def results() -> list[dict]:
    ours = engine([1000, 2000, 3000], 2048)
    peer = engine([4000, 8000, 12000], None, rejected=[{"id": "d1", "step": 3, "reason": "token 5 not in mask"}])
    slow = {"error": "timeout: not compiled after 900 s (--build-budget)", "timeout": "build", "limit_s": 900.0,
            "grammar_form": "rewritten", "process_peak_rss_kb": 3 << 20}
    runs = {"cl100k_base": {"glrmask": ours, "peer": peer, "broken": {"error": "venv missing"}, "slow": slow}}
    return [{"workload": "json", "runs": runs, "peer_grammar": ["common imports inlined"]},
            {"workload": "go", "runs": {}, "skipped": "workload go: documents: no apt-get"}]


def column(name: str, columns: tuple = report.COLUMNS) -> int:
    return [c[0] for c in columns].index(name) + 3


def test_rows_carry_ratios_to_glrmask() -> None:
    rows = report.table_rows(results())
    assert rows[0][:3] == ["workload", "tokenizer", "engine"]
    by_engine = {row[2]: row for row in rows[1:]}
    assert set(by_engine) == {"glrmask", "peer", "slow"}       # failed engines get no row, timed-out ones do
    ours_p50, peer_p50 = by_engine["glrmask"][column("mask p50")], by_engine["peer"][column("mask p50")]
    assert ours_p50 == "2.0" and peer_p50 == f"8.0 x{8.0 / 2.0:.1f}"
    assert by_engine["peer"][column("artifact KB")] == "-"     # a missing number prints as '-'
    assert by_engine["glrmask"][column("artifact KB")] == "2"


def test_render_lists_failures_and_rejections() -> None:
    text = report.render(results(), report.machine())
    assert "json x cl100k_base x broken: not run: venv missing" in text
    assert ("json x cl100k_base x peer: 1 documents rejected or skipped (not timed), "
            "e.g. d1 @3: token 5 not in mask") in text
    lines = text.splitlines()
    for title in ("single pass", "min of 3", "build and memory"):
        at = next(i for i, line in enumerate(lines) if line.startswith(title))
        table = lines[at + 1:lines.index("", at)]
        assert len(table) == 2 + 3 and len({len(line) for line in table}) == 1, title   # header, rule, 3 rows
    assert "json: peers get the grammar with: common imports inlined" in text
    assert "go: skipped: workload go: documents: no apt-get" in text


def test_min_table_reads_the_minimum_and_a_build_timeout_says_so() -> None:
    rows = {row[2]: row for row in report.table_rows(results(), report.MIN_COLUMNS)[1:]}
    assert rows["glrmask"][column("mask p50", report.MIN_COLUMNS)] == "1.0"
    assert rows["peer"][column("mask p50", report.MIN_COLUMNS)] == f"4.0 x{4.0 / 1.0:.1f}"
    assert rows["slow"][column("docs ok", report.MIN_COLUMNS)] == "timeout"
    build = {row[2]: row for row in report.table_rows(results(), report.BUILD_COLUMNS)[1:]}
    assert build["slow"][column("compile s", report.BUILD_COLUMNS)] == "timeout >900s"
    assert build["slow"][column("grammar", report.BUILD_COLUMNS)] == "rewritten"
    assert build["glrmask"][column("compile peak MB", report.BUILD_COLUMNS)] == "2048"
    assert build["slow"][column("artifact KB", report.BUILD_COLUMNS)] == "-"
    assert build["slow"][column("process peak MB", report.BUILD_COLUMNS)].startswith("3072")   # reached before the kill


def test_write_results_names_files_by_date_and_workload(tmp_path) -> None:
    paths = report.write_results(results()[:1], tmp_path)
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
    assert worst["mask_min"] == [] and worst["commit_min"] == []     # no replay minimum in these verdicts


def test_the_header_says_how_fast_the_machine_ran_at_the_start_and_the_end() -> None:
    info = report.machine()
    measured = info["speed_before"]
    assert measured["loop_us"] > 0 and measured["row_or_us"] > 0
    info["speed_after"] = {"loop_us": 2.5, "row_or_us": 4.25}
    header = report.render(results(), info).splitlines()[1]
    assert header.startswith("machine speed")
    assert f"at the start a Python loop (sum(range(100))) {measured['loop_us']:.2f} us" in header
    assert "at the end a Python loop (sum(range(100))) 2.50 us, a 12.5 KB row OR from memory 4.25 us" in header
