"""Benchmark workloads: a grammar, the text each peer gets for it, and the documents to replay.

json: grammars/json.lark on JSONTestSuite documents (y_/i_ files that are UTF-8, that Python's json
accepts and that lark's example JSON grammar accepts, per lark_labels.csv) plus the MaskBench-sample
valid instances (json.dumps, ensure_ascii=False). sql: syncode 0.4.16 sql.lark on the Spider dev gold
queries it accepts (lark_labels.csv). verilog: lark's example verilog.lark on circuitgraph netlists
that lark itself parses (files up to 8 KB). Peers get the grammar with `%import common.X` inlined
(devtools/peer_grammar.py).
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from bench.errors import BenchError
from bench.tokenizers import REPO
from devtools.peer_grammar import (
    ESCAPED_STRING_PEER,
    SQL_STRING_PEER,
    VERILOG_COMMENT_PEER,
    PeerGrammarError,
    inline_common_imports,
    strip_priorities,
)

SHARED = REPO.parent / "shared" / "corpora"
GRAMMAR_CACHE = REPO / ".cache" / "bench" / "grammars"
SYNCODE_SQL = GRAMMAR_CACHE / "syncode-0.4.16" / "sql.lark"


def syncode_sql_grammar() -> Path:
    """syncode 0.4.16's sql.lark, read from its PyPI sdist once and cached (never imported)."""
    if not SYNCODE_SQL.exists():
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-q",
                            "-d", tmp, "syncode==0.4.16"], check=True)
            with tarfile.open(Path(tmp) / "syncode-0.4.16.tar.gz") as tar:
                data = tar.extractfile("syncode-0.4.16/syncode/parsers/grammars/sql.lark").read()
        SYNCODE_SQL.parent.mkdir(parents=True, exist_ok=True)
        SYNCODE_SQL.write_bytes(data)
    return SYNCODE_SQL


VERILOG_MAX_BYTES = 8_000
# outlines-core has no grammar: JSON only fits as a regex with bounded nesting (its schema `{}`).
OUTLINES_JSON = {"schema": "{}", "whitespace": r"[ \t\n\r]*", "max_recursion_depth": 3}


@dataclass(frozen=True)
class Document:
    doc_id: str
    text: bytes


@dataclass(frozen=True)
class Workload:
    """One grammar and its documents. `peer_lark` is the grammar with common imports inlined."""

    name: str
    grammar_path: Path
    load_documents: Callable[[], list[Document]]
    xgrammar_builtin_json: bool = False
    outlines: dict | None = None
    notes: tuple[str, ...] = field(default=())
    peer_rewrites: tuple[tuple[str, str], ...] = ()      # (old, new): same language, peer-readable

    def peer_lark(self) -> str:
        """The grammar for peers: common imports inlined, priorities dropped, `peer_rewrites` applied."""
        where = str(self.grammar_path)
        try:
            text = strip_priorities(inline_common_imports(self.grammar_path.read_text(encoding="utf-8"), where))
        except PeerGrammarError as e:
            raise BenchError(str(e)) from None
        for old, new in self.peer_rewrites:
            if old not in text:
                raise BenchError(f"{where}: peer rewrite target {old!r} not found; has the grammar changed?")
            text = text.replace(old, new)
        return text

    def documents(self) -> list[Document]:
        return self.load_documents()


# ---- documents ----

def _json_test_suite() -> list[Document]:
    folder = REPO / "tests" / "data" / "JSONTestSuite"
    with open(folder / "lark_labels.csv", newline="") as f:
        rows = sorted(csv.DictReader(f), key=lambda r: r["file"])
    return [Document(f"jts/{r['file']}", (folder / "test_parsing" / r["file"]).read_bytes()) for r in rows
            if r["suite_label"] in ("y", "i") and r["utf8"] == "True" and r["python_json_loads"] == "True"
            and r["lark_examples_standalone_json_lalr"] == "accept"]


def _maskbench() -> list[Document]:
    folder = SHARED / "json-schema" / "maskbench-sample"
    if not folder.is_dir():
        raise BenchError(f"json workload: {folder} missing; the MaskBench sample lives in ../shared/corpora")
    docs = []
    for path in sorted(folder.glob("*.json")):
        tests = json.loads(path.read_text(encoding="utf-8"))["tests"]
        for i, test in enumerate(tests):
            if test["valid"]:
                text = json.dumps(test["data"], ensure_ascii=False).encode("utf-8")
                docs.append(Document(f"maskbench/{path.stem}/{i}", text))
    return docs


def _json_documents() -> list[Document]:
    return _json_test_suite() + _maskbench()


def _spider() -> list[Document]:
    folder = SHARED / "sql" / "spider"
    with open(folder / "lark_labels.csv", newline="") as f:
        accepted = {int(r["line"]) for r in csv.DictReader(f) if r["syncode_sql_lalr"] == "accept"}
    lines = (folder / "dev_gold.tsv").read_text(encoding="utf-8").splitlines()
    return [Document(f"spider/{n}", line.split("\t")[0].encode("utf-8"))
            for n, line in enumerate(lines, 1) if n in accepted]


def _verilog() -> list[Document]:
    import lark

    grammar = SHARED / "grammars" / "lark-1.3.1-sdist" / "verilog.lark"
    parser = lark.Lark(grammar.read_text(), parser="lalr")
    docs = []
    for path in sorted((SHARED / "verilog" / "circuitgraph-netlists").glob("*.v")):
        text = path.read_bytes()
        if len(text) > VERILOG_MAX_BYTES:
            continue
        try:
            parser.parse(text.decode("utf-8"))
        except lark.exceptions.LarkError:
            continue
        docs.append(Document(f"verilog/{path.name}", text))
    return docs


WORKLOADS: dict[str, Workload] = {
    "json": Workload("json", REPO / "grammars" / "json.lark", _json_documents, xgrammar_builtin_json=True,
                     outlines=OUTLINES_JSON),
    "sql": Workload("sql", SYNCODE_SQL, _spider,
                    notes=("grammar: syncode 0.4.16 sql.lark (fetched by bench/setup_peers.sh)",),
                    peer_rewrites=SQL_STRING_PEER),
    "verilog": Workload("verilog", SHARED / "grammars" / "lark-1.3.1-sdist" / "verilog.lark", _verilog,
                        notes=(f"netlists up to {VERILOG_MAX_BYTES} bytes that lark (LALR) parses",),
                        # a C comment without the lookahead (the classic form)
                        peer_rewrites=((r"/\/\*(\*(?!\/)|[^*])*\*\//", VERILOG_COMMENT_PEER),
                                       *ESCAPED_STRING_PEER)),
}


def workload(name: str) -> Workload:
    """The workload called `name`, checked for its grammar file."""
    if name not in WORKLOADS:
        raise BenchError(f"workload {name!r}: unknown; known: {', '.join(WORKLOADS)}")
    found = WORKLOADS[name]
    if not found.grammar_path.is_file():
        hint = "run bench/setup_peers.sh" if found.grammar_path == SYNCODE_SQL else "is ../shared present?"
        raise BenchError(f"workload {name}: grammar {found.grammar_path} missing; {hint}")
    return found
