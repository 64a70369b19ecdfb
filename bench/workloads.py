"""Benchmark workloads: a grammar, the text each peer gets for it, and the documents to replay.

json: grammars/json.lark on JSONTestSuite documents (y_/i_ files that are UTF-8, that Python's json
accepts and that lark's example JSON grammar accepts, per lark_labels.csv) plus the MaskBench-sample
valid instances (json.dumps, ensure_ascii=False). sql: syncode 0.4.16 sql.lark on the Spider dev gold
queries it accepts (lark_labels.csv). verilog: lark's example verilog.lark on circuitgraph netlists
that lark itself parses (files up to 8 KB). python: lark's python.lark from `eval_input` on one-line
stdlib expressions. go / java: syncode 0.4.16 go.lark / java.lark on Go standard library functions
(Debian golang-1.19-src) / OpenJDK 17 java.base files (Debian openjdk-17-source), each kept only if
lark accepts it with syncode's options. latex: sympy 1.14.0 latex.lark on the sympy test strings its
own Earley parser accepts. keywords<N>: devtools/keyword_grammar.py's grammar of N keywords and its
generated sentences. Every grammar reaches GLRMask as written; peers get `peer_lark()`: the same
language in the dialect they read (devtools/peer_grammar.py), and `peer_changes()` says what changed.
"""

from __future__ import annotations

import csv
import functools
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from bench.errors import BenchError
from bench.tokenizers import REPO
from devtools import code_documents, keyword_grammar
from devtools.data import (
    DataError,
    DataUnavailable,
    lark_grammars_dir,
    sympy_latex_grammar,
    syncode_grammar,
)
from devtools.peer_grammar import (
    ESCAPED_STRING_PEER,
    GO_STRING_PEER,
    JAVA_PEER,
    PYTHON_PEER,
    SQL_STRING_PEER,
    VERILOG_COMMENT_PEER,
    PeerGrammarError,
    expand_templates,
    inline_common_imports,
    inline_relative_imports,
    prune_unreachable,
    strip_priorities,
)
from devtools.stress import stdlib_expressions

SHARED = REPO.parent / "shared" / "corpora"


def syncode_sql_grammar() -> Path:
    """syncode 0.4.16's sql.lark (devtools.data: the one pinned sdist download, shared with the tests)."""
    return _fetched(lambda: syncode_grammar("sql.lark"), "sql.lark")


def _fetched(get: Callable[[], Path], what: str) -> Path:
    try:
        path = get()
    except (DataUnavailable, DataError) as e:
        raise BenchError(f"{what}: {e}") from e
    if not path.is_file():
        raise BenchError(f"{what}: {path} missing")
    return path


VERILOG_MAX_BYTES = 8_000
# outlines-core has no grammar: JSON only fits as a regex with bounded nesting (its schema `{}`).
OUTLINES_JSON = {"schema": "{}", "whitespace": r"[ \t\n\r]*", "max_recursion_depth": 3}
# documents per code workload (the candidates are many more; a seeded shuffle picks which)
GO_DOCS, JAVA_DOCS, PYTHON_DOCS, KEYWORD_DOCS = 300, 300, 500, 300
SEED = 0
_DEFINED = re.compile(r"^[?!]?([A-Za-z_][A-Za-z0-9_]*)(?:\.-?\d+)?\s*:", re.MULTILINE)


@dataclass(frozen=True)
class Document:
    doc_id: str
    text: bytes


@dataclass(frozen=True)
class Workload:
    """One grammar and its documents. `grammar` is called when the file is needed (it may fetch)."""

    name: str
    grammar: Callable[[], Path]
    load_documents: Callable[[], list[Document]]
    start: str | None = None                              # the start rule, if not `start`
    xgrammar_builtin_json: bool = False
    outlines: dict | None = None
    notes: tuple[str, ...] = field(default=())
    peer_rewrites: tuple[tuple[str, str], ...] = ()      # (old, new): same language, peer-readable
    lexer: str = "contextual"     # GLRMask's --lexer: the lexer the grammar's owner gives lark

    @property
    def grammar_path(self) -> Path:
        return _fetched(self.grammar, f"workload {self.name}: grammar")

    def peer_form(self) -> tuple[str, list[str]]:
        """(the grammar for peers, what was changed to get it). Steps, each only where needed:
        `%import .module.X` inlined, rule templates written out, `%import common.X` inlined, priorities
        dropped, rules `start` cannot reach dropped, `peer_rewrites` applied, `start: <rule>` added."""
        path = self.grammar_path
        where = str(path)
        original = path.read_text(encoding="utf-8")
        changes = []
        try:
            text = original
            for label, step in (("relative imports inlined", lambda t: inline_relative_imports(t, path.parent, where)),
                                ("rule templates written out", lambda t: expand_templates(t, where)),
                                ("common imports inlined", lambda t: inline_common_imports(t, where)),
                                ("priorities dropped", strip_priorities),
                                (f"rules {self.start} cannot reach dropped",
                                 lambda t: prune_unreachable(t, self.start) if self.start else t)):
                new = step(text)
                if new != text:
                    changes.append(label)
                text = new
        except PeerGrammarError as e:
            raise BenchError(str(e)) from None
        names = []
        for old, new in self.peer_rewrites:
            at = text.find(old)
            if at < 0:
                raise BenchError(f"{where}: peer rewrite target {old!r} not found; has the grammar changed?")
            names.extend(_DEFINED.findall(text[:at] + old)[-1:])     # the definition the target sits in
            text = text.replace(old, new)
        if self.peer_rewrites:
            changes.append("same-language rewrites of " + ", ".join(dict.fromkeys(names)))
        if self.start:
            text += f"\nstart: {self.start}\n"
            changes.append(f"start: {self.start}")
        return text, changes

    def peer_lark(self) -> str:
        return self.peer_form()[0]

    def peer_grammar_kind(self) -> str:
        """`rewritten` (terminal rewrites), `inlined` (only mechanical steps) or `as written`."""
        return "rewritten" if self.peer_rewrites else "inlined" if self.peer_form()[1] else "as written"

    def documents(self) -> list[Document]:
        try:
            return self.load_documents()
        except (DataUnavailable, DataError) as e:
            raise BenchError(f"workload {self.name}: documents: {e}") from e


def subset(items: list, limit: int | None, option: str = "--max-docs") -> list:
    """`limit` evenly spaced items (all when limit is None or not smaller); `option` names the limit."""
    if limit is None or limit >= len(items):
        return list(items)
    if limit <= 0:
        raise BenchError(f"{option}: must be positive, got {limit}")
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


# ---- documents ----

def _json_test_suite() -> list[Document]:
    folder = REPO / "tests" / "data" / "JSONTestSuite"
    with open(folder / "lark_labels.csv", newline="") as f:
        rows = sorted(csv.DictReader(f), key=lambda r: r["file"])
    return [Document(f"jts/{r['file']}", (folder / "test_parsing" / r["file"]).read_bytes()) for r in rows
            if r["suite_label"] in ("y", "i") and r["utf8"] == "True" and r["python_json_loads"] == "True"
            and r["lark_examples_standalone_json_lalr"] == "accept"]


@dataclass(frozen=True)
class SchemaCase:
    """One MaskBench-sample schema (named after its file) and its valid instances, each serialized with
    json.dumps(data, ensure_ascii=False) and named `<schema>/<index in the file's tests>`."""

    name: str
    schema: object
    instances: tuple[Document, ...]


def maskbench_cases(workload: str = "maskbench") -> list[SchemaCase]:
    """The MaskBench sample (../shared/corpora/json-schema/maskbench-sample), files in name order."""
    folder = SHARED / "json-schema" / "maskbench-sample"
    if not folder.is_dir():
        raise BenchError(f"{workload} workload: {folder} missing; the MaskBench sample lives in ../shared/corpora")
    cases = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        instances = tuple(Document(f"{path.stem}/{i}", json.dumps(test["data"], ensure_ascii=False).encode("utf-8"))
                          for i, test in enumerate(data["tests"]) if test["valid"])
        cases.append(SchemaCase(path.stem, data["schema"], instances))
    return cases


def _maskbench() -> list[Document]:
    return [Document(f"maskbench/{d.doc_id}", d.text) for case in maskbench_cases("json") for d in case.instances]


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


def _accepts(parser) -> Callable[[str], bool]:
    from devtools.lark_judge import lark_parses

    return functools.partial(lark_parses, parser)


def _go() -> list[Document]:
    return [Document(i, text.encode("utf-8")) for i, text in code_documents.go_documents(GO_DOCS, SEED)]


def _java() -> list[Document]:
    return [Document(i, text.encode("utf-8")) for i, text in code_documents.java_documents(JAVA_DOCS, SEED)]


def _python() -> list[Document]:
    import lark

    parser = lark.Lark.open(str(lark_grammars_dir() / "python.lark"), parser="lalr", start="eval_input")
    accepts = _accepts(parser)
    docs = []
    for i, expr in enumerate(stdlib_expressions(10**9)):     # all of them, in the seeded order
        if len(docs) == PYTHON_DOCS:
            break
        if accepts(expr.decode("utf-8")):
            docs.append(Document(f"expr/{i}", expr))
    return docs


def _latex() -> list[Document]:
    path = SHARED / "latex" / "sympy_latex_strings.json"
    if not path.is_file():
        raise BenchError(f"latex workload: {path} missing; the sympy strings live in ../shared/corpora")
    items = json.loads(path.read_text(encoding="utf-8"))["items"]
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        if item["lark_earley_accepts"]:
            seen.setdefault(item["latex"], i)
    return [Document(f"latex/{i}", text.encode("utf-8")) for text, i in seen.items()]


def keyword_grammar_file(n: int) -> Path:
    """The generated grammar of n keywords (devtools.keyword_grammar.grammar_file, written once)."""
    return keyword_grammar.grammar_file(n, SEED)


def _keyword_documents(n: int) -> list[Document]:
    import lark

    parser = lark.Lark(keyword_grammar.grammar_text(n, SEED), parser="lalr", lexer="basic")
    accepts = _accepts(parser)
    texts = keyword_grammar.documents(KEYWORD_DOCS, n, SEED)
    refused = [t for t in texts if not accepts(t)]
    if refused:      # the generator writes sentences by construction; lark is the judge
        raise BenchError(f"keywords{n}: lark rejects {len(refused)} generated sentences, e.g. {refused[0][:80]!r}")
    return [Document(f"keywords{n}/{i}", t.encode("utf-8")) for i, t in enumerate(texts)]


def keyword_workload(n: int) -> Workload:
    return Workload(f"keywords{n}", functools.partial(keyword_grammar_file, n),
                    functools.partial(_keyword_documents, n),
                    notes=(f"grammar: devtools/keyword_grammar.py, {n} keywords in 4 contexts, seed {SEED}; "
                           f"{KEYWORD_DOCS} generated sentences lark (LALR, basic lexer) accepts",), lexer="basic")


def _shared_file(*parts: str) -> Callable[[], Path]:
    return lambda: SHARED.joinpath(*parts)


WORKLOADS: dict[str, Workload] = {
    "json": Workload("json", lambda: REPO / "grammars" / "json.lark", _json_documents, xgrammar_builtin_json=True,
                     outlines=OUTLINES_JSON),
    "sql": Workload("sql", syncode_sql_grammar, _spider,
                    notes=("grammar: syncode 0.4.16 sql.lark (PyPI sdist, devtools.data)",),
                    peer_rewrites=SQL_STRING_PEER, lexer="basic"),   # syncode: lalr, basic lexer
    "verilog": Workload("verilog", _shared_file("grammars", "lark-1.3.1-sdist", "verilog.lark"), _verilog,
                        notes=(f"netlists up to {VERILOG_MAX_BYTES} bytes that lark (LALR) parses",),
                        # a C comment without the lookahead (the classic form)
                        peer_rewrites=((r"/\/\*(\*(?!\/)|[^*])*\*\//", VERILOG_COMMENT_PEER),
                                       *ESCAPED_STRING_PEER)),
    "python": Workload("python", lambda: lark_grammars_dir() / "python.lark", _python, start="eval_input",
                       notes=(f"grammar: lark's python.lark from eval_input; {PYTHON_DOCS} one-line expressions of "
                              "the first 30 stdlib modules (this Python) that lark (LALR) accepts",),
                       peer_rewrites=PYTHON_PEER),
    "go": Workload("go", lambda: syncode_grammar("go.lark"), _go,
                   notes=(f"grammar: syncode 0.4.16 go.lark; {GO_DOCS} top-level functions of Debian "
                          "golang-1.19-src 1.19.8-2 (`package p` + the function) that lark accepts with syncode's "
                          "options (LALR, basic lexer)",),
                   peer_rewrites=GO_STRING_PEER, lexer="basic"),
    "java": Workload("java", lambda: syncode_grammar("java.lark"), _java,
                     notes=(f"grammar: syncode 0.4.16 java.lark; {JAVA_DOCS} java.base files of Debian "
                            "openjdk-17-source 17.0.19+10-1~deb12u2 (license comment removed, up to "
                            f"{code_documents.JAVA_MAX_BYTES} bytes) that lark accepts with syncode's options",),
                     peer_rewrites=JAVA_PEER, lexer="basic"),
    "latex": Workload("latex", sympy_latex_grammar, _latex, start="latex_string",
                      notes=("grammar: sympy 1.14.0 latex.lark from latex_string; the sympy test strings its own "
                             "Earley parser accepts (../shared/corpora/latex)",), lexer="basic"),   # Earley
    "keywords1000": keyword_workload(1000),
    "keywords3000": keyword_workload(3000),
}
# syncode's grammars with the contextual lexer, `glrmask build`'s default (not in the default run: what
# the contextual lexer costs GLRMask on grammars written for the basic one; peers lex as for the base)
WORKLOADS.update({f"{name}-contextual": replace(WORKLOADS[name], name=f"{name}-contextual", lexer="contextual")
                  for name in ("sql", "go", "java")})
DEFAULT_WORKLOADS = ("json", "sql", "verilog", "python", "go", "java", "latex", "keywords1000", "keywords3000")
_KEYWORDS = re.compile(r"keywords([1-9][0-9]*)")


def known(name: str) -> bool:
    """A registered workload, or keywords<N> for any N >= 4 (keywords100: a small, quick grammar)."""
    found = _KEYWORDS.fullmatch(name)
    return name in WORKLOADS or (found is not None and int(found.group(1)) >= len(keyword_grammar.CONTEXTS))


def workload(name: str) -> Workload:
    """The workload called `name` (its grammar is fetched when first needed)."""
    if name in WORKLOADS:
        return WORKLOADS[name]
    if known(name):
        return keyword_workload(int(name.removeprefix("keywords")))
    raise BenchError(f"workload {name!r}: unknown; known: {', '.join(WORKLOADS)}, keywords<N>")
