"""Document sets the exactness oracles replay: JSONTestSuite, MaskBench instances, lark's own grammars, csv.

`suite_documents` and `maskbench_instances` are (name, text) pairs (lark reads text: JSONTestSuite files
that are not UTF-8 are left out); `json_documents`, `lark_documents` and `csv_documents` are bytes.
MaskBench and the csv example come from ../shared/corpora (DataUnavailable without it).
"""

from __future__ import annotations

import json

from devtools.data import REPO_ROOT, corpus_path, lark_grammars_dir

SUITE = REPO_ROOT / "tests" / "data" / "JSONTestSuite" / "test_parsing"


def suite_documents() -> list[tuple[str, str]]:
    """Every JSONTestSuite file (valid, invalid and implementation-defined) that is UTF-8."""
    docs = []
    for path in sorted(SUITE.glob("*.json")):
        try:
            docs.append((path.name, path.read_bytes().decode("utf-8")))
        except UnicodeDecodeError:
            continue   # lark reads text; invalid UTF-8 files are covered by the bytes tests
    return docs


def json_documents() -> list[bytes]:
    """The JSONTestSuite files every parser must accept (`y_*.json`)."""
    return [p.read_bytes() for p in sorted(SUITE.glob("y_*.json"))]


def maskbench_instances() -> list[tuple[str, str]]:
    """The valid instances of the MaskBench sample, serialized with json.dumps(ensure_ascii=False)."""
    folder = corpus_path("json-schema/maskbench-sample")
    out = []
    for path in sorted(folder.glob("*.json")):
        for i, test in enumerate(json.loads(path.read_text())["tests"]):
            if test["valid"]:
                out.append((f"{path.name}#{i}", json.dumps(test["data"], ensure_ascii=False)))
    return out


def lark_documents() -> list[bytes]:
    """lark's own grammar files (documents for lark.lark)."""
    return [p.read_bytes() for p in sorted(lark_grammars_dir().glob("*.lark"))]


def csv_documents() -> list[bytes]:
    """The csv block of lark's composition example (a header and three rows, CRLF as shipped), the
    same with LF line ends, and the header with each row alone."""
    folder = corpus_path("grammars/lark-1.3.1-sdist/composition")
    lines = [line for line in (folder / "combined_csv_and_json.txt").read_bytes().splitlines(keepends=True)
             if line.strip() and not line.startswith(b"{")]
    header, rows = lines[0], lines[1:]
    documents = [b"".join(lines), b"".join(line.rstrip(b"\r\n") + b"\n" for line in lines)]
    return documents + [header + row for row in rows]
