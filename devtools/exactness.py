"""`make exactness`: the oracle matrix over grammars x real tokenizers (docs/ARCHITECTURE.md, "Exactness").

Per cell (grammar, tokenizer): build the artifact, then
  1. documents: replay every document's real tokens; lark's verdict on the whole text is the judge.
     A valid document the masks refuse (a token masked, or no EOS at its end) counts as
     `unsound_steps` / `valid_rejected` if our recognizer accepts the whole text (a mask bug) and
     as `semantic_differences` if the recognizer rejects it or finds it incomplete too (a documented
     difference, docs/semantics.md); an invalid document that reaches EOS is `invalid_accepted`.
  2. brute force: sampled states, DWA mask vs trying every token (`mask_mismatches`).
  3. random walks: outputs ending in EOS must parse with lark (`walk_parse_failures`), `dead_ends`;
     one lark rejects while its rules accept our lexemes of it is a `semantic_differences` (lexing).
  4. llguidance: its packed mask at every document step vs ours (`llguidance_disagreements`, by class).
Also `unsupported` rows: grammars `glrmask build` must refuse with a one-line message, and the schema
cell `maskbench` (devtools/schema_exactness.py: the MaskBench sample's 202 JSON Schemas compiled with
`compile_json_schema`, their valid and invalid instances replayed and judged by `jsonschema`, brute
force at sampled states, random walks judged by `jsonschema`; by default x Llama-3 only; --quick:
every 4th schema, fewer states and walks), and `maskbench-strict`, the same compiled with --strict and
judged by the closed schemas (`schema_exactness.closed`).
Writes reports/exactness.json (merged: a run replaces its own cells, each stamped with date and commit)
and the table reports/exactness.md. Usage: python -m devtools.exactness [--quick] [--grammars a,b] [--tokenizers x,y]
"""

from __future__ import annotations

import argparse
import functools
import json
import multiprocessing
import random
import re
import resource
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

from lark import Lark

from devtools import code_documents, keyword_grammar, llguidance_oracle, schema_exactness
from devtools.brute_force import TokenTrie, brute_force_mask, random_walk, sampled_states
from devtools.builds import JSON_GRAMMAR, LARK_GRAMMARS, REPO_ROOT, built
from devtools.data import (
    CACHE_DIR,
    DataUnavailable,
    corpus_path,
    poetry_grammar,
    sympy_latex_grammar,
    syncode_grammar,
    tokenizer_file,
)
from devtools.documents import csv_documents, maskbench_instances, suite_documents
from devtools.lark_judge import lark_parses, lexemes_parse
from devtools.peer_grammar import (
    ESCAPED_STRING_PEER,
    GO_STRING_PEER,
    JAVA_PEER,
    SQL_STRING_PEER,
    inline_common_imports,
    strip_priorities,
)
from devtools.stress import STRESS, stdlib_expressions, stress_sentences
from devtools.unsupported import UNSUPPORTED, build_outcome
from glrmask_cli.grammar import load_grammar_text
from glrmask_cli.output import write_output
from glrmask_runtime.errors import InputRejected
from glrmask_runtime.tables import START

TOKENIZERS = ["gpt2", "cl100k_base.tiktoken", "o200k_base.tiktoken.gz", "llama3.tiktoken",
              "qwen3.tokenizer.json", "deepseek-v4.tokenizer.json", "mistral-v1.model"]
LLGUIDANCE_TOKENIZERS = {"gpt2", "cl100k_base.tiktoken", "llama3.tiktoken"}


_RENAMED_IMPORT = re.compile(r"^%import common\.(\w+)\s*->\s*(\w+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class GrammarCase:
    name: str
    path: Callable[[], Path]
    documents: Callable[[], list[tuple[str, str]]]
    lark_options: dict                      # the grammar owner's Lark(...) options: the judge
    start: str | None = None
    peer_rewrites: tuple[tuple[str, str], ...] = ()     # same language, text llguidance reads

    def judge(self) -> Lark:
        return Lark.open(str(self.path()), start=self.start or "start", **self.lark_options)

    @property
    def lexer(self) -> str:
        """The lexer our artifact follows: lark's contextual one where the owner's LALR parser uses it
        (lark's default for parser="lalr"), else the basic one (Earley cells: their dynamic lexer
        is neither; docs/semantics.md counts what differs)."""
        options = self.lark_options
        return "contextual" if options.get("parser") == "lalr" and options.get("lexer", "contextual") == "contextual" \
            else "basic"

    def llguidance_text(self) -> str:
        """The grammar for llguidance: common imports inlined, priorities dropped, `start` named."""
        text = _RENAMED_IMPORT.sub(r"%import common.\1\n\2: \1", self.path().read_text())
        text = strip_priorities(inline_common_imports(text, str(self.path())))
        for old, new in self.peer_rewrites:
            if old not in text:
                raise ValueError(f"{self.name}: llguidance rewrite target {old!r} not found; has the grammar changed?")
            text = text.replace(old, new)
        return text + (f"\nstart: {self.start}\n" if self.start else "")


def _files(folder: Path, pattern: str, max_bytes: int) -> list[tuple[str, str]]:
    return [(p.name, p.read_text()) for p in sorted(folder.glob(pattern)) if p.stat().st_size <= max_bytes]


def _lines(path: Path) -> list[tuple[str, str]]:
    return [(f"line{n}", line) for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if line]


def _spider() -> list[tuple[str, str]]:
    lines = corpus_path("sql/spider/dev_gold.tsv").read_text(encoding="utf-8").splitlines()
    return [(f"spider{n}", line.split("\t")[0]) for n, line in enumerate(lines, 1)]


def _latex_strings() -> list[tuple[str, str]]:
    items = json.loads(corpus_path("latex/sympy_latex_strings.json").read_text())["items"]
    return [(f"latex{i}", item["latex"]) for i, item in enumerate(items)]


def _stress_file(name: str) -> Path:
    path = CACHE_DIR / "stress-grammars" / f"stress-{name}.lark"
    if not path.is_file() or path.read_text() != STRESS[name]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(STRESS[name])
    return path


def _stress_documents(name: str) -> list[tuple[str, str]]:
    spec = load_grammar_text(STRESS[name], name=name)
    return [(f"s{i}", s.decode()) for i, s in enumerate(stress_sentences(spec, 60, seed=len(name)))]


CASES = [
    GrammarCase("json", lambda: JSON_GRAMMAR, lambda: suite_documents() + maskbench_instances(), {"parser": "lalr"}),
    GrammarCase("lark-example-json", lambda: corpus_path("grammars/lark-1.3.1-sdist/composition/json.lark"),
                suite_documents, {"parser": "lalr"}, peer_rewrites=ESCAPED_STRING_PEER),
    GrammarCase("lark.lark", lambda: LARK_GRAMMARS / "lark.lark",
                lambda: _files(LARK_GRAMMARS, "*.lark", 20_000), {"parser": "lalr"}),
    GrammarCase("verilog", lambda: corpus_path("grammars/lark-1.3.1-sdist/verilog.lark"),
                lambda: _files(corpus_path("verilog/circuitgraph-netlists"), "*.v", 8_000), {"parser": "lalr"}),
    GrammarCase("csv", lambda: corpus_path("grammars/lark-1.3.1-sdist/composition/csv.lark"),
                lambda: [(f"csv{i}", d.decode()) for i, d in enumerate(csv_documents())], {"parser": "earley"}),
    # syncode's create_base_parser (as for go and java below): Lark(grammar, parser="lalr", lexer="basic")
    GrammarCase("sql", lambda: syncode_grammar("sql.lark"), lambda: _spider(), {"parser": "lalr", "lexer": "basic"},
                peer_rewrites=SQL_STRING_PEER),
    GrammarCase("python-eval", lambda: LARK_GRAMMARS / "python.lark",
                lambda: [(f"expr{i}", e.decode()) for i, e in enumerate(stdlib_expressions(300))],
                {"parser": "lalr"}, start="eval_input"),
    # poetry/core/version/requirements.py: Parser(GRAMMAR_PEP_508_CONSTRAINTS, "lalr") -> Lark.open(parser="lalr")
    GrammarCase("pep508", lambda: poetry_grammar("pep508.lark"),
                lambda: _lines(corpus_path("pep508/requires_dist.txt")), {"parser": "lalr"}),
    # sympy/parsing/latex/lark/latex_parser.py: Lark.open(..., parser="earley", lexer="auto",
    # ambiguity="explicit", start="latex_string")
    GrammarCase("latex", sympy_latex_grammar, lambda: _latex_strings(),
                {"parser": "earley", "lexer": "auto", "ambiguity": "explicit"}, start="latex_string"),
    # syncode/parsers/__init__.py create_base_parser: Lark(grammar, parser="lalr", lexer="basic"); documents:
    # Go standard-library functions and OpenJDK files that parser accepts (devtools/code_documents.py)
    GrammarCase("go", lambda: syncode_grammar("go.lark"), lambda: code_documents.go_documents(40),
                {"parser": "lalr", "lexer": "basic"}, peer_rewrites=GO_STRING_PEER),
    GrammarCase("java", lambda: syncode_grammar("java.lark"), lambda: code_documents.java_documents(20),
                {"parser": "lalr", "lexer": "basic"}, peer_rewrites=JAVA_PEER),
    # devtools/keyword_grammar.py: 100 keywords, each also an IDENT lexeme (keyword/identifier ties); its
    # sentences, judged by lark with its standard (global) lexer, as GLRMask scans
    GrammarCase("keywords100", lambda: keyword_grammar.grammar_file(100),
                lambda: [(f"k{i}", t) for i, t in enumerate(keyword_grammar.documents(100, 100))],
                {"parser": "lalr", "lexer": "basic"}),
    *(GrammarCase(f"stress-{name}", functools.partial(_stress_file, name), functools.partial(_stress_documents, name),
                  {"parser": "earley"}) for name in sorted(STRESS)),
]
# The grammars whose owners use lark's contextual lexer, also with lark's basic lexer (judged by lark with
# lexer="basic"): GLRMask follows either of lark's LALR lexers (`glrmask build --lexer`).
CASES += [GrammarCase(f"{case.name}-basic", case.path, case.documents, {**case.lark_options, "lexer": "basic"},
                      case.start, case.peer_rewrites)
          for case in CASES if case.name in ("json", "lark.lark", "python-eval", "pep508")]
# syncode's grammars (written for lark's basic lexer) also with the contextual one, `glrmask build`'s
# default, judged by lark with lexer="contextual"
CASES += [GrammarCase(f"{case.name}-contextual", case.path, case.documents,
                      {**case.lark_options, "lexer": "contextual"}, case.start, case.peer_rewrites)
          for case in CASES if case.name in ("sql", "go", "java")]


_lark_accepts = lark_parses


def _documents_oracle(b, judge: Lark, documents: list[tuple[str, str]], counts: dict,
                      examples: list) -> list[tuple[str, list[int]]]:
    """Replay every document token by token; returns (name, token ids) for the llguidance oracle."""
    replayed = []
    for name, text in documents:
        valid = _lark_accepts(judge, text)
        matcher = b.artifact.matcher()
        refused = None
        ids = b.vocab.encode(text)
        replayed.append((name, ids))
        for step, token_id in enumerate(ids):
            counts["steps"] += 1
            if not matcher.mask()[token_id]:
                refused = step
                break
            matcher.commit(token_id)
        complete = refused is None and matcher.is_accepting()
        counts["documents"] += 1
        if valid and not complete:
            # our own semantics (the recognizer on the whole text) decide whether the masks erred
            ours = b.artifact.matcher()
            try:
                ours.commit_bytes(text.encode())
                accepted = ours.is_accepting()
            except InputRejected:
                accepted = False
            if accepted:
                key = "unsound_steps" if refused is not None else "valid_rejected"
            else:
                key = "semantic_differences"
            counts[key] += 1
            examples.append(f"{key}: {name} at token {refused}: {text[:80]!r}")
        elif not valid and complete:
            counts["invalid_accepted"] += 1
            examples.append(f"invalid_accepted: {name}: {text[:80]!r}")
    return replayed


def _spec(tokenizer: str) -> str:
    return tokenizer if tokenizer == "gpt2" else str(tokenizer_file(tokenizer))


def run_cell(case: GrammarCase, tokenizer: str, n_states: int, n_walks: int, llguidance: bool = False,
             every: int = 1) -> dict:
    """One (grammar, tokenizer) cell: counts per oracle, a few examples; raises if the build fails.

    `every` > 1 keeps every k-th document only (the sampled tier in `make test`)."""
    counts = dict(documents=0, steps=0, unsound_steps=0, valid_rejected=0, invalid_accepted=0,
                  semantic_differences=0, states=0, mask_mismatches=0, walks=0, dead_ends=0,
                  walk_parse_failures=0)
    examples: list[str] = []
    began = time.perf_counter()
    b = built(case.path(), _spec(tokenizer), case.start, lexer=case.lexer)
    judge = case.judge()
    documents = case.documents()[::every]
    replayed = _documents_oracle(b, judge, documents, counts, examples)
    _brute_force_oracle(b, documents, n_states, counts)
    _walk_oracle(b, judge, n_walks, counts, examples)
    cell = {"grammar": case.name, "tokenizer": tokenizer, "lexer": case.lexer, **counts}
    cell["llguidance"] = _llguidance_oracle(case, tokenizer, b, replayed) if llguidance else {"not_run": "disabled"}
    examples.sort(key=lambda example: example.startswith("semantic_differences"))   # misses first
    return {**cell, "seconds": round(time.perf_counter() - began, 1), "examples": examples[:10]}


def _brute_force_oracle(b, documents: list[tuple[str, str]], n_states: int, counts: dict) -> None:
    trie = TokenTrie(b.vocab.token_bytes, b.vocab.special_ids)
    for matcher in sampled_states(b, [t.encode() for _, t in documents], n_states, seed=11):
        counts["states"] += 1
        expected = brute_force_mask(b.artifact.recognizer, matcher._state, trie, b.artifact.vocab_size,
                                    b.artifact.eos_token_ids)
        counts["mask_mismatches"] += int((matcher.mask() != expected).any())


def _walk_oracle(b, judge: Lark, n_walks: int, counts: dict, examples: list) -> None:
    """Walks that end in EOS must parse with lark; one lark rejects counts as a semantic difference if
    lark's rules accept our lexemes of it (the split into lexemes differs: docs/semantics.md) and as a
    `walk_parse_failure` otherwise."""
    rng = random.Random(12)
    for _ in range(n_walks):
        tokens, ending = random_walk(b.artifact.matcher(), rng, 60, 10, b.artifact.eos_token_ids)
        counts["walks"] += 1
        counts["dead_ends"] += ending == "dead"
        output = b.vocab.decode_bytes(tokens)
        if ending != "eos" or _lark_accepts(judge, output):
            continue
        # with the contextual lexer, lark lexes as we do: no lexing difference excuses a failure
        differs = not b.artifact.contextual and lexemes_parse(judge, our_lexemes(b, output))
        key = "semantic_differences" if differs else "walk_parse_failures"
        counts[key] += 1
        examples.append(f"{key}: walk {output[:80]!r}")


def our_lexemes(b, output: bytes) -> list[tuple[str, tuple[str, ...]]]:
    """How our scanner splits `output` (a complete document): (text, names of the terminals it may be)
    per lexeme, %ignore'd-only lexemes left out. Text that is not UTF-8 is decoded with replacement."""
    scanner = b.artifact.recognizer.scanner
    names = [t.name for t in b.compiled.grammar.terminals]
    ignored = set(b.artifact.lexer.ignored.tolist())
    spans, state, start = [], START, 0
    for pos in range(len(output)):
        closed, state = scanner.scan(state, output[pos:pos + 1])
        if closed:
            spans.append((start, pos, closed[0]))
            start = pos
    if state != START:
        spans.append((start, len(output), scanner.close(state)))
    lexemes = []
    for begin, end, set_id in spans:
        terms = [t for t in scanner.term_set(set_id) if t not in ignored]
        if terms:
            lexemes.append((output[begin:end].decode("utf-8", "replace"), tuple(names[t] for t in terms)))
    return lexemes


def _llguidance_oracle(case: GrammarCase, tokenizer: str, b, replayed: list[tuple[str, list[int]]]) -> dict:
    if tokenizer not in LLGUIDANCE_TOKENIZERS:
        return {"not_run": f"llguidance is run on {', '.join(sorted(LLGUIDANCE_TOKENIZERS))} only"}
    try:
        return llguidance_oracle.compare(b, case.llguidance_text(), replayed)
    except llguidance_oracle.NotRun as err:
        return {"not_run": str(err)}
    except Exception as err:
        return {"not_run": f"{type(err).__name__}: {err}"}


def unsupported_rows() -> list[dict]:
    """`glrmask build` on each grammar GLRMask refuses: did it exit 1 with the expected one-line message?"""
    rows = []
    for case in UNSUPPORTED:
        try:
            outcome = build_outcome(case)
        except DataUnavailable as err:
            rows.append({"grammar": case.name, "kind": "unsupported", "skipped": str(err)})
            continue
        rows.append({"grammar": case.name, "kind": "unsupported", "expected_error_seen": outcome.as_expected(case),
                     "exit_code": outcome.exit_code, "message": outcome.message})
    return rows


COLUMNS = ["documents", "steps", "unsound_steps", "valid_rejected", "invalid_accepted", "semantic_differences",
           "states", "mask_mismatches", "walks", "dead_ends", "walk_parse_failures"]


REPORT = REPO_ROOT / "reports" / "exactness.json"
TARGETS = ["unsound_steps", "valid_rejected", "invalid_accepted", "mask_mismatches", "dead_ends",
           "walk_parse_failures"]          # each must be 0 (semantic differences are documented instead)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m devtools.exactness")
    parser.add_argument("--quick", action="store_true", help="gpt2 and cl100k only, fewer states and walks; "
                        f"{SCHEMA} and {SCHEMA_STRICT}: every 4th schema")
    parser.add_argument("--grammars", default=",".join([*(c.name for c in CASES), *SCHEMAS]),
                        help=f"comma-separated cell names, `{SCHEMA}` for the schema cell (`{SCHEMA_STRICT}`: "
                             "compiled with --strict), or `unsupported` for the refused grammars")
    parser.add_argument("--tokenizers", default=None, help="comma-separated tokenizer files (default: all; --quick: "
                                                          f"the first two; {SCHEMA}: "
                                                          f"{', '.join(schema_exactness.SCHEMA_TOKENIZERS)}): "
                                                          f"{', '.join(TOKENIZERS)}")
    parser.add_argument("--no-llguidance", action="store_true", help="skip oracle 4")
    # latex.lark needs the most: up to 6.4 GB of address space and 35 CPU minutes (o200k, Llama-3)
    parser.add_argument("--max-gb", type=float, default=12.0, help="address-space cap per cell process")
    parser.add_argument("--max-minutes", type=float, default=120.0, help="CPU-time cap per cell process")
    args = parser.parse_args()
    tokenizers = args.tokenizers.split(",") if args.tokenizers else TOKENIZERS[:2] if args.quick else TOKENIZERS
    n_states, n_walks = (10, 10) if args.quick else (40, 30)
    wanted = set(args.grammars.split(","))
    unknown = wanted - {c.name for c in CASES} - {*SCHEMAS, "unsupported"}
    if unknown:
        parser.error(f"unknown grammars {sorted(unknown)}; known: {', '.join(c.name for c in CASES)}, "
                     f"{', '.join(SCHEMAS)}, unsupported")
    if set(tokenizers) - set(TOKENIZERS):
        parser.error(f"unknown tokenizers {sorted(set(tokenizers) - set(TOKENIZERS))}; known: {', '.join(TOKENIZERS)}")
    provenance = {"commit": _commit(), "tier": "quick" if args.quick else "full"}
    for case in (c for c in CASES if c.name in wanted):
        too_large = None     # a grammar whose automaton exceeded a limit is not retried per tokenizer
        for tokenizer in tokenizers:
            if too_large:
                cell = {"grammar": case.name, "tokenizer": tokenizer, "error": f"not attempted: {too_large}"}
            else:
                cell = _run_isolated(case.name, tokenizer, n_states, n_walks, not args.no_llguidance,
                                     args.max_gb, args.max_minutes)
                if cell.get("error", "").startswith(("LimitExceeded", "MemoryError", "stopped")):
                    too_large = f"x {tokenizer}: {cell['error']}"
            print(_row(cell), flush=True)
            save([cell | provenance])     # after each cell: a long run that stops keeps what it measured
    for name in [schema for schema in SCHEMAS if schema in wanted]:
        tier = "quick" if args.quick else "full"
        for tokenizer in args.tokenizers.split(",") if args.tokenizers else schema_exactness.SCHEMA_TOKENIZERS:
            cell = _isolated(_run_schema_reported, (tokenizer, tier, name == SCHEMA_STRICT), name, tokenizer,
                             args.max_gb, args.max_minutes)
            print(_row(cell), flush=True)
            save([cell | provenance])
    if "unsupported" in wanted or args.grammars == parser.get_default("grammars"):
        rows = unsupported_rows()
        for row in rows:
            print(_row(row), flush=True)
        save([row | provenance for row in rows])
    print(f"wrote {REPORT} and {REPORT.with_suffix('.md')}")


def save(cells: list[dict]) -> None:
    """Merge cells, stamped with the time, into reports/exactness.json and rewrite reports/exactness.md."""
    now = {"measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    report = merged(json.loads(REPORT.read_text())["cells"] if REPORT.exists() else [], [c | now for c in cells])
    REPORT.parent.mkdir(exist_ok=True)
    write_output(REPORT, json.dumps({"cells": report}, indent=2).encode("utf-8"))
    write_output(REPORT.with_suffix(".md"), summary_table(report).encode("utf-8"))


def _commit() -> str:
    """The checkout's commit, "+changes" when the tree differs from it outside reports/ (which this
    runner writes); "unknown" outside git."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!reports"],
                               cwd=REPO_ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+changes" if dirty else "")


SCHEMA = schema_exactness.SCHEMA_GRAMMAR
SCHEMA_STRICT = schema_exactness.STRICT_SCHEMA_GRAMMAR
SCHEMAS = (SCHEMA, SCHEMA_STRICT)


def _key(cell: dict) -> tuple[str, str, str]:
    kind = cell.get("kind", "schema" if cell["grammar"] in SCHEMAS else "cell")    # a schema error row has none
    return cell["grammar"], cell.get("tokenizer", ""), kind


def merged(old: list[dict], new: list[dict]) -> list[dict]:
    """The report after a run: the new cells replace those of the same grammar and tokenizer, the
    others stay (the full matrix takes hours, so it is run in parts; each cell says when and at
    which commit it was measured). Ordered as CASES x TOKENIZERS, then the unsupported rows."""
    by_key = {_key(cell): cell for cell in old} | {_key(cell): cell for cell in new}
    case_order = {c.name: i for i, c in enumerate(CASES)}
    tokenizer_order = {t: i for i, t in enumerate(TOKENIZERS)}
    return sorted(by_key.values(), key=lambda c: (c.get("kind") == "unsupported", c["grammar"] in SCHEMAS,
                                                 case_order.get(c["grammar"], 99), c["grammar"],
                                                 tokenizer_order.get(c.get("tokenizer"), 99)))


def summary_table(cells: list[dict]) -> str:
    """reports/exactness.md: one line per cell; `targets` says whether every TARGETS count is 0."""
    head = (["grammar", "tokenizer"] + [c.replace("_", " ") for c in COLUMNS] +
            ["llguidance steps / disagreements", "targets", "measured"])
    lines = ["# Exactness matrix (`make exactness`)", "",
             "Columns: devtools/exactness.py; semantic differences and llguidance classes: docs/semantics.md.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for cell in cells:
        when = _when(cell)
        if cell["grammar"] in SCHEMAS:
            continue
        if cell.get("kind") == "unsupported":
            seen = cell.get("expected_error_seen")
            verdict = "skipped" if seen is None else "refused as expected" if seen else "NOT refused as expected"
            lines.append(f"| {cell['grammar']} | (unsupported) |" + " |" * (len(COLUMNS) + 1) +
                         f" {verdict} | {when} |")
            continue
        if "skipped" in cell or "error" in cell:
            what = "skipped" if "skipped" in cell else "ERROR"
            reason = (cell.get("skipped") or cell.get("error", ""))[:160].replace("|", "/")
            lines.append(f"| {cell['grammar']} | {cell['tokenizer']} |" + " |" * len(COLUMNS) +
                         f" | {what}: {reason} | {when} |")
            continue
        llg = cell.get("llguidance", {})
        llg_text = ("not run" if "not_run" in llg or not llg else
                    f"{llg['llguidance_steps']} / {llg['llguidance_disagreements']}")
        met = "met" if all(cell[k] == 0 for k in TARGETS) else "MISSED: " + ", ".join(k for k in TARGETS if cell[k])
        lines.append(f"| {cell['grammar']} | {cell['tokenizer']} | " + " | ".join(str(cell[k]) for k in COLUMNS) +
                     f" | {llg_text} | {met} | {when} |")
    schema_cells = [cell for cell in cells if cell["grammar"] in SCHEMAS]
    if schema_cells:
        lines += ["", schema_table(schema_cells)]
    return "\n".join(lines) + "\n"


def _when(cell: dict) -> str:
    return f"{cell.get('measured', '?')} {cell.get('commit', '')} {cell.get('tier', '')}".strip()


SCHEMA_COLUMNS = ["schemas", "compiled", "refused", "errors", "valid", "invalid", "steps", "valid_completed",
                  "invalid_refused", "valid_rejected", "invalid_accepted", "early_eos_invalid", "unsound_steps",
                  "masks_beyond_recognizer", "commit_rejected", "states", "mask_mismatches", "walks",
                  "walks_completed", "capped", "walk_invalid", "dead_ends"]


def schema_table(cells: list[dict]) -> str:
    """The schema cells' table of reports/exactness.md (columns: devtools/schema_exactness.py)."""
    head = ["grammar", "tokenizer", *(c.replace("_", " ") for c in SCHEMA_COLUMNS), "departures", "refused by",
            "targets", "seconds", "measured"]
    lines = ["## JSON Schema cells", "",
             "Columns and departure classes: devtools/schema_exactness.py, docs/json-schema.md (\"Departures\").", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for cell in cells:
        if "skipped" in cell or "error" in cell:
            what = "skipped" if "skipped" in cell else "ERROR"
            reason = (cell.get("skipped") or cell.get("error", ""))[:160].replace("|", "/")
            lines.append(f"| {cell['grammar']} | {cell['tokenizer']} |" + " |" * (len(SCHEMA_COLUMNS) + 2) +
                         f" {what}: {reason} | | {_when(cell)} |")
            continue
        targets = schema_exactness.TARGETS
        met = "met" if all(cell[k] == 0 for k in targets) else "MISSED: " + ", ".join(k for k in targets if cell[k])
        departures = ", ".join(f"{k} {v}" for k, v in cell["departures"].items()) or "none"
        refused = ", ".join(f"{k} {v}" for k, v in cell["refused_by"].items()) or "none"
        lines.append(f"| {cell['grammar']} | {cell['tokenizer']} | " +
                     " | ".join(str(cell[k]) for k in SCHEMA_COLUMNS) +
                     f" | {departures} | {refused} | {met} | {cell['seconds']} | {_when(cell)} |")
    return "\n".join(lines)


def _run_isolated(case_name: str, tokenizer: str, n_states: int, n_walks: int, llguidance: bool,
                  max_gb: float, max_minutes: float) -> dict:
    return _isolated(_run_reported, (case_name, tokenizer, n_states, n_walks, llguidance), case_name, tokenizer,
                     max_gb, max_minutes)


def _isolated(function: Callable[..., dict], args: tuple, case_name: str, tokenizer: str, max_gb: float,
              max_minutes: float) -> dict:
    """One cell in a fresh process under a memory and a CPU-time cap: a cell that blows up or runs
    away is an error row and the matrix goes on (an 8-cell run in one process once reached 12.6 GB
    and met the OOM killer; sympy's latex.lark once built for over 25 CPU minutes at 6.5 GB)."""
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_limit_resources, initargs=(max_gb, max_minutes)) as pool:
        try:
            return pool.submit(function, *args).result()
        except BrokenProcessPool:
            return {"grammar": case_name, "tokenizer": tokenizer,
                    "error": f"stopped: the cell's process died (caps: {max_gb} GB, {max_minutes} CPU minutes)"}


def _limit_resources(max_gb: float, max_minutes: float) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (int(max_gb * 2**30), resource.RLIM_INFINITY))
    resource.setrlimit(resource.RLIMIT_CPU, (int(max_minutes * 60), resource.RLIM_INFINITY))


def _run_reported(case_name: str, tokenizer: str, n_states: int, n_walks: int, llguidance: bool) -> dict:
    """run_cell, with a cell that cannot run (missing data: skipped; a failed build or MemoryError:
    error) reported."""
    case = next(c for c in CASES if c.name == case_name)
    try:
        return run_cell(case, tokenizer, n_states, n_walks, llguidance)
    except DataUnavailable as err:
        return {"grammar": case.name, "tokenizer": tokenizer, "skipped": str(err)}
    except Exception as err:
        return {"grammar": case.name, "tokenizer": tokenizer, "error": f"{type(err).__name__}: {err}"}


def _run_schema_reported(tokenizer: str, tier: str, strict: bool = False) -> dict:
    """The schema cell (devtools/schema_exactness.py; `strict`: compiled with --strict), missing data
    or an exception reported."""
    name = SCHEMA_STRICT if strict else SCHEMA
    try:
        return schema_exactness.run_schema_cell(tokenizer, _spec(tokenizer), schema_exactness.TIERS[tier],
                                                strict=strict)
    except DataUnavailable as err:
        return {"grammar": name, "tokenizer": tokenizer, "skipped": str(err)}
    except Exception as err:
        return {"grammar": name, "tokenizer": tokenizer, "error": f"{type(err).__name__}: {err}"}


def _row(cell: dict) -> str:
    if cell.get("kind") == "unsupported":
        seen = cell.get("expected_error_seen")
        return (f"{cell['grammar']:<26} unsupported: " + (f"skipped {cell['skipped']}" if seen is None else
                f"expected error seen={'yes' if seen else 'no'} exit={cell['exit_code']}: {cell['message'][:110]}"))
    head = f"{cell['grammar']:<26} {cell['tokenizer']:<28}"
    for key in ("skipped", "error"):
        if key in cell:
            return head + f" {key.upper()} " + cell[key][:120]
    if cell["grammar"] in SCHEMAS:
        return (head + " " + " ".join(f"{k}={cell[k]}" for k in SCHEMA_COLUMNS) + f" departures={cell['departures']}"
                f" refused_by={cell['refused_by']} ({cell['seconds']} s)")
    llg = cell.get("llguidance", {})
    llg_text = (f"llguidance: not run ({llg['not_run'][:60]})" if "not_run" in llg else
                f"llguidance_steps={llg['llguidance_steps']} llguidance_disagreements={llg['llguidance_disagreements']}"
                f" {llg['llguidance_classes']}")
    return head + " " + " ".join(f"{k}={cell[k]}" for k in COLUMNS) + f" {llg_text} ({cell['seconds']} s)"


if __name__ == "__main__":
    main()
