"""devtools.exactness as a program: no pytest, missing data is a skipped row, --help works."""

from __future__ import annotations

import subprocess
import sys

from devtools import exactness
from devtools.builds import REPO_ROOT
from devtools.data import DataUnavailable


def test_runner_and_its_helpers_do_not_import_pytest():
    code = ("import sys, devtools.exactness\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pytest', '_pytest', 'tests')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_help_runs():
    out = subprocess.run([sys.executable, "-m", "devtools.exactness", "--help"], cwd=REPO_ROOT, capture_output=True,
                         text=True, check=True)
    assert out.stdout.startswith("usage: python -m devtools.exactness")


def test_a_cell_without_its_data_is_skipped_with_the_reason(monkeypatch):
    reason = "corpus sql/spider needs ../shared/corpora beside the repository"

    def missing(*args, **kwargs):
        raise DataUnavailable(reason)

    monkeypatch.setattr(exactness, "run_cell", missing)
    assert exactness._run_reported("sql", "gpt2", 1, 1, False) == {"grammar": "sql", "tokenizer": "gpt2",
                                                                   "skipped": reason}


def test_an_unsupported_grammar_without_its_data_is_skipped_with_the_reason(monkeypatch):
    def offline(case):
        raise DataUnavailable("cannot `pip download python-hcl2==8.1.4` (offline?)")

    monkeypatch.setattr(exactness, "build_outcome", offline)
    rows = exactness.unsupported_rows()
    assert [row["grammar"] for row in rows] == [case.name for case in exactness.UNSUPPORTED]
    assert all(row == {"grammar": row["grammar"], "kind": "unsupported",
                       "skipped": "cannot `pip download python-hcl2==8.1.4` (offline?)"} for row in rows)
