"""`make exactness`: the oracle matrix (DESIGN 6) over grammars x real tokenizers.

Per cell (grammar, tokenizer): build the artifact, then
  1. documents: replay every document's real tokens; lark's verdict on the whole text is the judge.
     A valid document refused by the mask counts as `unsound_steps` if our recognizer accepts its
     bytes (a mask bug) and as `semantic_differences` if the recognizer rejects them too (a documented
     scanner difference, docs/semantics.md); an invalid document that reaches EOS is `invalid_accepted`.
  2. brute force: sampled states, DWA mask vs trying every token (`mask_mismatches`).
  3. random walks: outputs ending in EOS must parse with lark (`walk_parse_failures`), `dead_ends`.
Writes reports/exactness.json and prints a table. Usage: python -m tests.exactness [--quick]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from glrmask_runtime.errors import InputRejected
from lark import Lark

from tests.oracle.test_brute_force import csv_documents, sampled_states
from tests.oracle.test_documents import maskbench_instances, suite_documents
from tests.support.brute_force import TokenTrie, brute_force_mask, random_walk
from tests.support.builds import JSON_GRAMMAR, LARK_GRAMMARS, REPO_ROOT, built
from tests.support.data import corpus_path, tokenizer_file
from tests.support.lark_judge import lark_parses

TOKENIZERS = ["gpt2", "cl100k_base.tiktoken", "o200k_base.tiktoken.gz", "llama3.tiktoken",
              "qwen3.tokenizer.json", "deepseek-v4.tokenizer.json", "mistral-v1.model"]


@dataclass(frozen=True)
class GrammarCase:
    name: str
    path: Callable[[], Path]
    documents: Callable[[], list[tuple[str, str]]]
    lark_options: dict


def _files(folder: Path, pattern: str, max_bytes: int) -> list[tuple[str, str]]:
    return [(p.name, p.read_text()) for p in sorted(folder.glob(pattern)) if p.stat().st_size <= max_bytes]


CASES = [
    GrammarCase("json", lambda: JSON_GRAMMAR, lambda: suite_documents() + maskbench_instances(), {"parser": "lalr"}),
    GrammarCase("lark-example-json", lambda: corpus_path("grammars/lark-1.3.1-sdist/composition/json.lark"),
                suite_documents, {"parser": "lalr"}),
    GrammarCase("lark.lark", lambda: LARK_GRAMMARS / "lark.lark",
                lambda: _files(LARK_GRAMMARS, "*.lark", 20_000), {"parser": "lalr"}),
    GrammarCase("verilog", lambda: corpus_path("grammars/lark-1.3.1-sdist/verilog.lark"),
                lambda: _files(corpus_path("verilog/circuitgraph-netlists"), "*.v", 8_000), {"parser": "lalr"}),
    GrammarCase("csv", lambda: corpus_path("grammars/lark-1.3.1-sdist/composition/csv.lark"),
                lambda: [(f"line{i}", d.decode()) for i, d in enumerate(csv_documents())], {"parser": "earley"}),
]


_lark_accepts = lark_parses


def _documents_oracle(b, judge: Lark, documents: list[tuple[str, str]], counts: dict, examples: list) -> None:
    for name, text in documents:
        valid = _lark_accepts(judge, text)
        matcher = b.artifact.matcher()
        refused = None
        ids = b.vocab.encode(text)
        for step, token_id in enumerate(ids):
            counts["steps"] += 1
            if not matcher.mask()[token_id]:
                refused = step
                break
            matcher.commit(token_id)
        complete = refused is None and matcher.is_accepting()
        counts["documents"] += 1
        if valid and not complete:
            try:
                b.artifact.matcher().commit_bytes(text.encode())
                key = "unsound_steps" if refused is not None else "valid_rejected"
            except InputRejected:
                key = "semantic_differences"
            counts[key] += 1
            examples.append(f"{key}: {name} at token {refused}")
        elif not valid and complete:
            counts["invalid_accepted"] += 1
            examples.append(f"invalid_accepted: {name}")


def run_cell(case: GrammarCase, tokenizer: str, n_states: int, n_walks: int) -> dict:
    spec = tokenizer if tokenizer == "gpt2" else str(tokenizer_file(tokenizer))
    counts = dict(documents=0, steps=0, unsound_steps=0, valid_rejected=0, invalid_accepted=0,
                  semantic_differences=0, states=0, mask_mismatches=0, walks=0, dead_ends=0,
                  walk_parse_failures=0)
    examples: list[str] = []
    began = time.perf_counter()
    b = built(case.path(), spec)
    grammar_text = case.path().read_text()
    judge = Lark(grammar_text, import_paths=[case.path().parent], **case.lark_options)
    documents = case.documents()
    _documents_oracle(b, judge, documents, counts, examples)
    trie = TokenTrie(b.vocab.token_bytes, b.vocab.special_ids)
    for matcher in sampled_states(b, [t.encode() for _, t in documents], n_states, seed=11):
        counts["states"] += 1
        expected = brute_force_mask(b.artifact.recognizer, matcher._state, trie, b.artifact.vocab_size,
                                    b.artifact.eos_token_ids)
        counts["mask_mismatches"] += int((matcher.mask() != expected).any())
    rng = random.Random(12)
    for _ in range(n_walks):
        tokens, ending = random_walk(b.artifact.matcher(), rng, 60, 10, b.artifact.eos_token_ids)
        counts["walks"] += 1
        counts["dead_ends"] += ending == "dead"
        if ending == "eos" and not _lark_accepts(judge, b.vocab.decode_bytes(tokens).decode("utf-8", "replace")):
            counts["walk_parse_failures"] += 1
            examples.append(f"walk_parse_failure: {b.vocab.decode_bytes(tokens)[:80]!r}")
    return {"grammar": case.name, "tokenizer": tokenizer, "seconds": round(time.perf_counter() - began, 1),
            **counts, "examples": examples[:10]}


COLUMNS = ["documents", "steps", "unsound_steps", "valid_rejected", "invalid_accepted", "semantic_differences",
           "states", "mask_mismatches", "walks", "dead_ends", "walk_parse_failures"]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.exactness")
    parser.add_argument("--quick", action="store_true", help="gpt2 and cl100k only, fewer states and walks")
    parser.add_argument("--grammars", default=",".join(c.name for c in CASES))
    args = parser.parse_args()
    tokenizers = TOKENIZERS[:2] if args.quick else TOKENIZERS
    n_states, n_walks = (10, 10) if args.quick else (40, 30)
    wanted = set(args.grammars.split(","))
    cells = []
    for case in (c for c in CASES if c.name in wanted):
        for tokenizer in tokenizers:
            try:
                cell = run_cell(case, tokenizer, n_states, n_walks)
            except Exception as err:   # noqa: BLE001 - a cell that cannot run is reported, not fatal
                cell = {"grammar": case.name, "tokenizer": tokenizer, "error": f"{type(err).__name__}: {err}"}
            cells.append(cell)
            print(_row(cell), flush=True)
    out = REPO_ROOT / "reports" / "exactness.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"cells": cells}, indent=2))
    print(f"wrote {out}")


def _row(cell: dict) -> str:
    head = f"{cell['grammar']:<18} {cell['tokenizer']:<28}"
    if "error" in cell:
        return head + " ERROR " + cell["error"][:120]
    return head + " " + " ".join(f"{k}={cell[k]}" for k in COLUMNS) + f" ({cell['seconds']} s)"


if __name__ == "__main__":
    main()
