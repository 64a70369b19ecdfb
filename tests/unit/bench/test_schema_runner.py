"""bench.schema_runner: a schema over the build budget is a timeout and a crash an error, and a new worker
goes on from the next schema with what is left of the replay budget (a fake worker); then GLRMask's own
worker end to end on three tiny schemas (compiled, refused, a rejected instance)."""

from __future__ import annotations

import pytest

from bench import maskbench, runner
from bench.schema_runner import run_schema_worker
from bench.tokenizers import encode, tokenizer_spec
from bench.workloads import SHARED

FAKE = """import json, sys, time
job = json.load(open(sys.argv[1]))
out = open(sys.argv[2], "a")
out.write(json.dumps({"setup": {"version": "fake", "tokenizer_s": 0.1}}) + "\\n"); out.flush()
for case in job["schemas"]:
    print(f"[fake] compiling {case['name']}", file=sys.stderr, flush=True)
    if case["name"] == "slow":
        time.sleep(30)
    if case["name"] == "crash":
        print("boom", file=sys.stderr, flush=True)
        sys.exit(3)
    print("[fake] compiled in 0.0 s (compiled)", file=sys.stderr, flush=True)
    out.write(json.dumps({"name": case["name"], "status": "compiled", "replay_s": 1.0,
                          "budget_seen": job["budget_s"]}) + "\\n"); out.flush()
"""


def schemas(*names: str) -> list[dict]:
    return [{"name": n, "schema": {}, "documents": [{"id": f"{n}/0", "tokens": [1]}]} for n in names]


@pytest.fixture
def fake(tmp_path, monkeypatch) -> str:
    (tmp_path / "fake_worker.py").write_text(FAKE)
    monkeypatch.setattr(runner, "WORKERS", tmp_path)
    monkeypatch.setitem(runner.ENGINES, "fake", runner.EngineSpec("fake", None, "fake_worker.py"))
    return "fake"


def test_timeout_and_crash_are_recorded_and_the_run_goes_on(fake) -> None:
    out = run_schema_worker(fake, {"schemas": schemas("a", "slow", "b", "crash", "c"), "budget_s": 100.0},
                            timeout_s=60, build_budget_s=1)
    lines = out["schemas"]
    assert [(s["name"], s["status"]) for s in lines] == [
        ("a", "compiled"), ("slow", "timeout"), ("b", "compiled"), ("crash", "error"), ("c", "compiled")]
    assert "not compiled after 1 s" in lines[1]["error"] and lines[3]["error"] == "worker exit 3: boom"
    assert [s.get("budget_seen") for s in lines] == [100.0, None, 99.0, None, 98.0]    # the budget is shared
    assert out["restarts"] == 2 and out["setup"]["version"] == "fake"


def test_run_timeout_leaves_the_rest_not_reached(fake) -> None:
    out = run_schema_worker(fake, {"schemas": schemas("a", "slow", "b"), "budget_s": 100.0},
                            timeout_s=2, build_budget_s=60)
    assert [(s["name"], s["status"]) for s in out["schemas"]] == [
        ("a", "compiled"), ("slow", "not reached"), ("b", "not reached")]


def test_a_worker_that_never_starts_is_an_error(tmp_path, monkeypatch) -> None:
    (tmp_path / "fake_worker.py").write_text("import sys\nprint('no tokenizer', file=sys.stderr)\nsys.exit(2)\n")
    monkeypatch.setattr(runner, "WORKERS", tmp_path)
    monkeypatch.setitem(runner.ENGINES, "fake", runner.EngineSpec("fake", None, "fake_worker.py"))
    out = run_schema_worker("fake", {"schemas": schemas("a"), "budget_s": 1.0}, timeout_s=60, build_budget_s=60)
    assert out == {"error": "worker exit 2 before its first schema: no tokenizer"}


@pytest.mark.skipif(not (SHARED.parent / "tokenizers").is_dir(), reason="../shared/tokenizers absent")
def test_glrmask_worker_compiles_refuses_and_rejects(tmp_path) -> None:
    number = {"type": "integer", "minimum": 0, "maximum": 100}
    record = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"],
              "additionalProperties": False}
    cases = [("number", number, [b"42", b"142"]), ("record", record, [b'{"a": "x"}']), ("not", {"not": {}}, [b"1"])]
    job = {"workload": maskbench.NAME, "tokenizer": tokenizer_spec("cl100k_base").to_job(), "warmup_docs": 0,
           "replays": 2, "budget_s": 60.0, "warm_max_s": 60.0, "build_cache_dir": str(tmp_path / "cache"),
           "schemas": [{"name": name, "schema": schema, "documents": [
               {"id": f"{name}/{i}", "tokens": encode("cl100k_base", text)} for i, text in enumerate(texts)]}
               for name, schema, texts in cases]}
    entry = maskbench.engine_entry(run_schema_worker("glrmask", job, timeout_s=120, build_budget_s=60))
    by_name = {s["name"]: s for s in entry["schemas"]}
    assert [by_name[n]["status"] for n in ("number", "record", "not")] == ["compiled", "compiled", "refused"]
    assert by_name["not"]["error"].startswith("SchemaUnsatisfiable: ")     # `not: {}` admits no value
    assert by_name["number"]["cached_s"] is not None and by_name["record"]["artifact_bytes"] > 0
    assert [d["id"] for d in entry["rejected"]] == ["number/1"]          # 142 is over the maximum
    assert entry["instances_ok"] == 2 and entry["mask_min"]["count"] > 0 and entry["mask_bool"]["count"] > 0
