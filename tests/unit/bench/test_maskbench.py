"""bench.maskbench and bench.schema_report: which schemas a run takes, how a schema worker's lines are
condensed (counts, cold compile, samples pooled over schemas, rejections kept), and the report's tables
and notes (synthetic results; no timing is asserted)."""

from __future__ import annotations

import argparse
import json

import pytest

from bench import maskbench, schema_report
from bench.errors import BenchError
from bench.workloads import SHARED, Document, SchemaCase, maskbench_cases


def args(**given) -> argparse.Namespace:
    return argparse.Namespace(**{"quick": False, "max_schemas": None, **given})


@pytest.fixture
def cases(monkeypatch) -> list[SchemaCase]:
    made = [SchemaCase(f"s{i:03}", {"type": "integer"}, (Document(f"s{i:03}/0", b"1"),)) for i in range(100)]
    monkeypatch.setattr(maskbench, "maskbench_cases", lambda: made)
    return made


def test_selection_is_evenly_spaced_in_name_order(cases) -> None:
    assert [c.name for c in maskbench.selected_cases(args(max_schemas=4))] == ["s000", "s025", "s050", "s075"]
    assert len(maskbench.selected_cases(args())) == 100
    assert len(maskbench.selected_cases(args(quick=True))) == maskbench.QUICK_SCHEMAS
    assert len(maskbench.selected_cases(args(quick=True, max_schemas=7))) == 7
    with pytest.raises(BenchError, match="--max-schemas"):
        maskbench.selected_cases(args(max_schemas=0))


@pytest.mark.skipif(not (SHARED / "json-schema" / "maskbench-sample").is_dir(), reason="../shared corpora absent")
def test_cases_are_the_valid_instances_as_json_dumps() -> None:
    found = maskbench_cases()
    assert len(found) == len(list((SHARED / "json-schema" / "maskbench-sample").glob("*.json")))
    case = found[0]
    data = json.loads((SHARED / "json-schema" / "maskbench-sample" / f"{case.name}.json").read_text())
    valid = [(i, t["data"]) for i, t in enumerate(data["tests"]) if t["valid"]]
    assert case.schema == data["schema"]
    assert [(d.doc_id, d.text) for d in case.instances] == [
        (f"{case.name}/{i}", json.dumps(v, ensure_ascii=False).encode()) for i, v in valid]


def compiled(name: str, compile_s: float, masks: list[int], statuses: list[str], **extra) -> dict:
    docs = [{"id": f"{name}/{i}", "status": s, "step": 2, **({"reason": "token 7 not in mask"} if s != "ok" else {})}
            for i, s in enumerate(statuses)]
    return {"name": name, "status": "compiled", "instances": len(statuses), "compile_s": compile_s,
            "compile_peak_rss_kb": 1024, "artifact_bytes": 2048, "documents": docs, "replays": 3,
            "mask_ns": masks, "mask_min_ns": [m // 2 for m in masks], "commit_ns": masks, "commit_min_ns": masks,
            "extra_ns": [], "extra_min_ns": [], "floor_ns": [50], "floor_min_ns": [40], "short_of_replays": 0,
            **extra}


def raw_result() -> dict:
    return {"setup": {"version": "t", "tokenizer_s": 0.5}, "restarts": 1, "wall_s": 9.0,
            "schemas": [{"name": "a", "status": "refused", "instances": 2, "error": "SchemaUnsupported: #/not"},
                        compiled("b", 0.5, [1000, 3000], ["ok"], cached_s=0.002, first_in_process=True),
                        compiled("c", 0.75, [2000, 4000, 9000], ["ok", "rejected"], cached_s=0.004),
                        compiled("e", 0.25, [], [], cached_s=0.001),
                        {"name": "d", "status": "timeout", "instances": 1, "error": "not compiled after 9 s"}]}


def test_entry_counts_schemas_and_instances() -> None:
    entry = maskbench.engine_entry(raw_result())
    assert (entry["schemas_total"], entry["compiled"], entry["refused"], entry["failed"]) == (5, 3, 1, 1)
    assert (entry["instances_total"], entry["instances_replayed"], entry["instances_ok"],
            entry["instances_rejected"]) == (6, 3, 2, 1)
    assert entry["docs_ok_text"] == "2/6"
    assert [d["id"] for d in entry["rejected"]] == ["c/1"]
    assert entry["setup"]["compile_cold_s"] == 0.5 + 0.5 and entry["setup"]["cold_schema"] == "b"


def test_entry_pools_samples_and_summarizes_compiles() -> None:
    entry = maskbench.engine_entry(raw_result())
    assert entry["mask"]["count"] == 5 and entry["mask"]["max"] == 9.0     # microseconds
    assert entry["mask_min"]["max"] == 4.5
    assert entry["compile_warm"]["count"] == 2                       # the first in the process is the cold one
    assert entry["compile_warm"]["p50"] == 250.0 and entry["compile_warm"]["max"] == 750.0    # milliseconds
    assert entry["compile_cached"]["max"] == 4.0 and entry["artifact"]["p50"] == 2.0        # KB
    assert entry["slowest_compiles"] == [[0.75, "c"], [0.5, "b"], [0.25, "e"]]
    by_name = {s["name"]: s for s in entry["schemas"]}
    assert by_name["c"]["instances_ok"] == 1 and by_name["c"]["mask_min_max_us"] == 4.5
    assert "mask_ns" not in by_name["c"]


def test_entry_keeps_a_worker_error() -> None:
    assert maskbench.engine_entry({"error": "venv missing"}) == {"error": "venv missing"}


def result() -> dict:
    ours = {**maskbench.engine_entry(raw_result()), "grammar_form": "flexible ws"}
    peer_raw = raw_result()
    peer_raw["schemas"][3] = compiled("e", 0.5, [4000, 12000], [])
    peer = {**maskbench.engine_entry(peer_raw), "grammar_form": "any ws"}
    return {"workload": "maskbench", "schemas": ["a", "b", "c", "d"], "instances": 6,
            "runs": {"llama3": {"glrmask": ours, "peer": peer, "outlines": {"error": "no JSON Schema mode"}}}}


def test_report_tables_carry_ratios_to_glrmask() -> None:
    text = schema_report.render([result()], {"date": "today", "cpu": "cpu", "cores": 2, "python": "3.11"})
    lines = text.splitlines()
    for title in ("schemas (", "compile (", "single pass", "min of 3"):
        at = next(i for i, line in enumerate(lines) if line.startswith(title))
        table = lines[at + 1:lines.index("", at)]
        assert len(table) == 2 + 2, title              # header, rule, ours and the peer (not the failed engine)
    at = next(i for i, line in enumerate(lines) if line.startswith("compile ("))
    peer_row = lines[at + 4].split()
    assert peer_row[2] == "peer" and peer_row[5:7] == ["500", "x2.0"]       # compile p50: 500 ms, twice ours
    assert "maskbench x llama3 x outlines: not run: no JSON Schema mode" in text


def test_report_lists_refusals_failures_and_rejections() -> None:
    text = schema_report.render([result()], {"date": "today", "cpu": "cpu", "cores": 2, "python": "3.11"})
    assert "maskbench x llama3 x glrmask: refused a: SchemaUnsupported: #/not" in text
    assert "maskbench x llama3 x glrmask: timeout d: not compiled after 9 s" in text
    assert "maskbench x llama3 x peer: instance c/1 rejected @2: token 7 not in mask" in text
    assert "maskbench x llama3 x glrmask: slowest compiles: c 0.75 s; b 0.50 s; e 0.25 s" in text


def test_skipped_workload_is_one_line() -> None:
    text = schema_report.render([{"workload": "maskbench", "runs": {}, "skipped": "no corpus"}],
                                {"date": "d", "cpu": "c", "cores": 1, "python": "3"})
    assert "maskbench: skipped: no corpus" in text


class _Spec:
    def to_job(self) -> dict:
        return {"name": "tok"}


@pytest.mark.parametrize("name", maskbench.NAMES)
def test_strict_workload_asks_each_engine_for_its_strict_mode(cases, monkeypatch, name) -> None:
    jobs: dict[str, dict] = {}
    monkeypatch.setattr(maskbench, "tokenizer_spec", lambda tokenizer: _Spec())
    monkeypatch.setattr(maskbench, "encode", lambda tokenizer, text: list(text))
    monkeypatch.setattr(maskbench, "run_schema_worker",
                        lambda engine, job, timeout, budget: jobs.setdefault(engine, job) and {"error": "not run"})
    run_args = args(max_schemas=2, warmup=0, replays=1, budget=1.0, warm_max=1.0, timeout=1.0, build_budget=1.0)
    out = maskbench.run(name, ["llama3"], ["glrmask", "llguidance", "xgrammar"], run_args, {})
    assert out["workload"] == name
    runs = out["runs"]["llama3"]
    strict = name == maskbench.STRICT
    assert set(jobs) == ({"glrmask", "xgrammar"} if strict else {"glrmask", "llguidance", "xgrammar"})
    assert all(job["strict"] is strict and job["workload"] == name for job in jobs.values())
    if strict:
        assert runs["llguidance"] == {"error": "no strict JSON Schema mode in this bench"}
    assert runs["glrmask"]["grammar_form"] == maskbench.SCHEMA_FORMS[name]["glrmask"]
