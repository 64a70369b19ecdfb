"""The schema cell of `make exactness` (grammar name `maskbench`): the MaskBench sample x a real tokenizer.

Per schema of ../shared/corpora/json-schema/maskbench-sample (202 schemas with valid and invalid
instances), compiled with the public API (`compile_json_schema`, build cache off, flexible whitespace):
  1. instances: every instance, `json.dumps(instance, ensure_ascii=False)` encoded with the tokenizer's
     encoder, is replayed token by token through `Matcher.fill_bitmask` / `commit` (a token whose bit
     is 0 is a rejection; the instance completes iff EOS's bit is set after its last token, and EOS is
     then committed). The judge is the `jsonschema` package (formats asserted). A valid instance the
     masks refuse counts under its departure class of docs/json-schema.md if it has one (`order`,
     `exponent`, `integer_spelling`, `escape`), else as `valid_rejected`; an invalid one that completes
     counts under its departure class (`multiple_of_decimal`, `date_day`, `leap_second`: we accept
     more) or as `invalid_accepted`. Wherever EOS's bit is set before the last token, the prefix must
     be an instance `jsonschema` accepts (`early_eos_invalid`). Independently of `jsonschema`, the
     masks' verdict must be the recognizer's on the whole text (`unsound_steps`: the recognizer accepts
     but the masks refuse; `masks_beyond_recognizer`: the reverse), and `commit` must take every token
     whose bit is set (`commit_rejected`).
  2. brute force: at sampled states (`devtools.brute_force.sampled_states`: byte prefixes of the
     instances, then random walks) the mask equals feeding every token's bytes to the recognizer
     (`mask_mismatches`).
  3. random walks: `devtools.brute_force.random_walk` for the first STEER_AFTER tokens, then steered
     to a close by `_steer` (JSON-aware: single-byte tokens, closers first); outputs that end in EOS
     must be JSON that `jsonschema` accepts (`walk_invalid`; one it rejects only by a departure where
     we accept more counts under that class, `walk_departures`); `dead_ends` (no token, no EOS); walks
     that reach MAX_STEPS tokens are `capped` (no verdict).
Schemas the lowering refuses (SchemaUnsupported) or a build limit stops (LimitExceeded) are counted by
keyword / limit; any other exception is an `errors` entry. Every TARGETS count must be 0.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jsonschema
import numpy as np

import glrmask_runtime
from devtools.brute_force import TokenTrie, brute_force_mask, random_walk, sampled_states
from devtools.data import corpus_path
from devtools.schemastore import refused_keyword
from glrmask_cli.api import compile_json_schema, tokenizer_vocabulary
from glrmask_cli.errors import LimitExceeded
from glrmask_cli.json_schema import SchemaUnsupported, resolve_pointer
from glrmask_runtime.errors import InputRejected, TokenRejected

SCHEMA_GRAMMAR = "maskbench"
STRICT_SCHEMA_GRAMMAR = "maskbench-strict"     # the cell compiled with --strict
SAMPLE = "json-schema/maskbench-sample"
SCHEMA_TOKENIZERS = ["llama3.tiktoken"]     # the targets are x Llama-3


@dataclass(frozen=True)
class SchemaTier:
    every: int          # every k-th schema file (name order)
    states: int         # brute-force states per compiled schema (at most)
    walks: int          # random walks per compiled schema
    budget_s: float     # per schema: no new brute-force state or walk once this much time has passed


TIERS = {"full": SchemaTier(every=1, states=4, walks=4, budget_s=20.0),
         "quick": SchemaTier(every=4, states=2, walks=2, budget_s=10.0)}

VALID_DEPARTURES = ("order", "exponent", "integer_spelling", "escape")
INVALID_DEPARTURES = ("multiple_of_decimal", "date_day", "leap_second")
COUNTS = ["schemas", "compiled", "refused", "errors", "instances", "valid", "invalid", "unjudged",
          "label_disagreements", "steps", "valid_completed", "invalid_refused", "departures_valid",
          "departures_invalid", "valid_rejected", "invalid_accepted", "early_eos_checked", "early_eos_invalid",
          "unsound_steps", "masks_beyond_recognizer", "commit_rejected", "states", "mask_mismatches", "walks",
          "walks_completed", "capped", "walk_departures", "walk_invalid", "walk_unjudged", "dead_ends"]
TARGETS = ["errors", "valid_rejected", "invalid_accepted", "early_eos_invalid", "unsound_steps",
           "masks_beyond_recognizer", "commit_rejected", "mask_mismatches", "walk_invalid", "dead_ends"]
MAX_STEPS = 200         # a walk this many tokens long is capped
STEER_AFTER = 10        # random_walk's free steps; then _steer closes the output
MAX_EXAMPLES = 20


def schema_files(every: int = 1, names: list[str] | None = None) -> list[Path]:
    files = sorted(corpus_path(SAMPLE).glob("*.json"))
    return [f for f in files if f.name in names] if names is not None else files[::every]


# keywords whose value is one subschema, a list of them, or a map of names to them (the rest are data)
_ONE = ("additionalProperties", "additionalItems", "items", "not", "if", "then", "else", "contains",
        "propertyNames", "unevaluatedItems", "unevaluatedProperties")
_LIST = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


def closed(schema: Any) -> Any:
    """The schema `--strict` compiles, for jsonschema to judge it by (docs/json-schema.md, "Strict"),
    written out here apart from the lowering: every subschema that declares properties or
    patternProperties but no additionalProperties gets `"additionalProperties": false`, and every
    prefixItems (or draft-4 tuple `items`) without what follows it gets `false` there. It closes each
    `allOf` part alone, where the lowering closes their merge: the two differ only where several parts
    declare one object's members, which no sample schema does."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    for key in _ONE:
        if isinstance(out.get(key), dict):
            out[key] = closed(out[key])
    for key in _LIST:
        if isinstance(out.get(key), list):
            out[key] = [closed(part) for part in out[key]]
    for key in _MAP:
        if isinstance(out.get(key), dict):
            out[key] = {name: closed(part) for name, part in out[key].items()}
    if ("properties" in out or "patternProperties" in out) and "additionalProperties" not in out:
        out["additionalProperties"] = False
    if "prefixItems" in out and "items" not in out:
        out["items"] = False
    if isinstance(out.get("items"), list) and "additionalItems" not in out:
        out["additionalItems"] = False
    return out


def validator(schema: Any) -> Any:
    """jsonschema's validator for the draft the schema names (default 2020-12), every format asserted
    (as tests/json_schema/test_maskbench_sample.py)."""
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, format_checker=jsonschema.FormatChecker())


# ---- departure classes (docs/json-schema.md, "Departures from the specification") --------------------

def _in_schema_order(instance: dict, schema: dict) -> bool:
    """Declared properties in schema order, other keys after them (tests/json_schema/test_lowering.py)."""
    order = list(schema.get("properties", {}))
    keys = list(instance)
    declared = [k for k in keys if k in order]
    return declared == sorted(declared, key=order.index) and keys[:len(declared)] == declared


def out_of_order(schema: Any, instance: Any, root: Any, depth: int = 0) -> bool:
    """The order departure, anywhere an object of the instance meets a (sub)schema with `properties`,
    looked for through `$ref`, `anyOf`/`oneOf`/`allOf`, property values and array items."""
    if depth > 40 or not isinstance(schema, dict):
        return False
    ref = schema.get("$ref")
    if isinstance(ref, str) and out_of_order(resolve_pointer(root, ref), instance, root, depth + 1):
        return True
    for key in ("anyOf", "oneOf", "allOf"):
        if any(out_of_order(s, instance, root, depth + 1) for s in schema.get(key, []) if isinstance(s, dict)):
            return True
    if isinstance(instance, dict):
        if isinstance(schema.get("properties"), dict) and not _in_schema_order(instance, schema):
            return True
        props = schema.get("properties", {}) if isinstance(schema.get("properties"), dict) else {}
        extra = schema.get("additionalProperties")
        patterns = schema.get("patternProperties", {}) if isinstance(schema.get("patternProperties"), dict) else {}
        for k, v in instance.items():
            subs = [props[k]] if k in props else [*patterns.values(), extra]
            if any(out_of_order(s, v, root, depth + 1) for s in subs):
                return True
    if isinstance(instance, list):
        items = schema.get("items")
        prefix = schema.get("prefixItems", items if isinstance(items, list) else [])
        rest = items if isinstance(items, dict) else schema.get("additionalItems")
        for i, v in enumerate(instance):
            sub = prefix[i] if i < len(prefix) else rest
            if out_of_order(sub, v, root, depth + 1):
                return True
    return False


def _values(instance: Any) -> Iterator[Any]:
    """Every value of the instance, keys included (as strings)."""
    yield instance
    if isinstance(instance, dict):
        for k, v in instance.items():
            yield k
            yield from _values(v)
    elif isinstance(instance, list):
        for v in instance:
            yield from _values(v)


def _mentions(schema: Any, keywords: tuple[str, ...]) -> bool:
    if isinstance(schema, dict):
        return any(k in schema for k in keywords) or any(_mentions(v, keywords) for v in schema.values())
    if isinstance(schema, list):
        return any(_mentions(v, keywords) for v in schema)
    return False


def valid_departure(schema: Any, instance: Any) -> str | None:
    """The documented departure a valid instance that we reject falls under, if any."""
    if out_of_order(schema, instance, schema):
        return "order"
    floats = [v for v in _values(instance) if isinstance(v, float)]
    if any("e" in json.dumps(v) for v in floats):          # json.dumps writes 1e-05, 1e+20
        return "exponent"
    if any(v.is_integer() for v in floats):                # 1.0 where the schema says integer
        return "integer_spelling"
    escaped = any(isinstance(v, str) and json.dumps(v, ensure_ascii=False)[1:-1] != v for v in _values(instance))
    if escaped and _mentions(schema, ("format", "pattern", "patternProperties")):
        return "escape"       # strings under format / pattern (and patternProperties keys) have no escapes
    return None


_FORMATS = jsonschema.FormatChecker()


def _decimal_multiple(value: Any, divisor: Any) -> bool:
    try:
        return Fraction(Decimal(json.dumps(value))) % Fraction(Decimal(json.dumps(divisor))) == 0
    except (ArithmeticError, ValueError, TypeError):
        return False


def _format_departure(value: str, fmt: str) -> str | None:
    """`date_day` (a day past the month's length: 2023-02-30) and/or `leap_second` (second 60), when
    that alone keeps `jsonschema`'s format checker from accepting `value`."""
    day = re.match(r"(\d{4}-\d\d-)(29|30|31)", value) if fmt in ("date", "date-time") else None
    leap = re.search(r"(?<=\d\d:\d\d:)60", value) if fmt in ("time", "date-time") else None
    fixes = []
    if day:
        fixes.append(("date_day", lambda v: v[:8] + "28" + v[10:]))
    if leap:
        fixes.append(("leap_second", lambda v: v[:leap.start()] + "59" + v[leap.end():]))
    for chosen in [[f] for f in fixes] + ([fixes] if len(fixes) > 1 else []):
        fixed = value
        for _, fix in chosen:
            fixed = fix(fixed)
        if _FORMATS.conforms(fixed, fmt):
            return "+".join(name for name, _ in chosen)
    return None


def _error_departure(error: Any) -> str | None:
    """The departure that explains one `jsonschema` error, looking into the options of anyOf/oneOf
    (one option whose every error a departure explains is enough)."""
    if error.validator in ("anyOf", "oneOf") and error.context:
        options: dict[Any, list[Any]] = {}
        for sub in error.context:
            options.setdefault(sub.relative_schema_path[0], []).append(sub)
        for errors in options.values():
            found = [_error_departure(sub) for sub in errors]
            if all(found):
                return "+".join(sorted({f for f in found if f}))
        return None
    if error.validator == "multipleOf" and _decimal_multiple(error.instance, error.validator_value):
        return "multiple_of_decimal"
    if error.validator == "format" and isinstance(error.instance, str):
        return _format_departure(error.instance, error.validator_value)
    return None


def invalid_departure(check: Any, instance: Any) -> str | None:
    """The documented departure (we accept more) that explains every error `jsonschema` reports on
    an instance we complete, if any."""
    found = [_error_departure(error) for error in check.iter_errors(instance)]
    if not found or not all(found):
        return None
    return "+".join(sorted({f for f in found if f}))


# ---- the oracles ------------------------------------------------------------------------------------

def _judged(check: Any, data: bytes) -> bool | None:
    """jsonschema's verdict on `data` (not JSON: False), None if jsonschema itself failed."""
    try:
        instance = json.loads(data)
    except ValueError:
        return False
    try:
        return bool(check.is_valid(instance))
    except Exception:
        return None


@dataclass
class Replay:
    refused: int | None         # the step of the first token whose bit is 0 (or that commit refused)
    complete: bool              # EOS's bit set after the last token
    early: list[int]            # steps before the last token at which EOS's bit was set
    commit_rejected: int        # tokens (EOS included) whose bit was set but that commit refused


def replay(artifact: glrmask_runtime.Artifact, ids: list[int]) -> Replay:
    """Feed `ids` through fill_bitmask / commit; after the last token, EOS is committed if its bit is set."""
    matcher = artifact.matcher()
    bitmask = glrmask_runtime.allocate_bitmask(1, artifact.vocab_size)
    eos = artifact.eos_token_ids
    row = bitmask[0]

    def allowed(token_id: int) -> bool:
        return (int(row[token_id >> 5]) >> (token_id & 31)) & 1 == 1

    early = []
    for step, token_id in enumerate(ids):
        matcher.fill_bitmask(bitmask)
        if step and any(allowed(e) for e in eos):
            early.append(step)
        if not allowed(token_id):
            return Replay(step, False, early, 0)
        try:
            matcher.commit(token_id)
        except TokenRejected:
            return Replay(step, False, early, 1)
    matcher.fill_bitmask(bitmask)
    ending = next((e for e in eos if allowed(e)), None)
    if ending is None:
        return Replay(None, False, early, 0)
    try:
        matcher.commit(ending)
    except TokenRejected:
        return Replay(None, True, early, 1)
    return Replay(None, True, early, 0)


def _recognizer_accepts(artifact: glrmask_runtime.Artifact, data: bytes) -> bool:
    matcher = artifact.matcher()
    try:
        matcher.commit_bytes(data)
    except InputRejected:
        return False
    return matcher.is_accepting()


# JSON-aware steering of a walk's end: one-byte tokens, closers and short values first, whitespace last
_PREFERRED = b'"}],:0123456789' + bytes(range(ord("a"), ord("z") + 1)) + bytes(range(ord("A"), ord("Z") + 1)) + b"-."
_RANK = {byte: i for i, byte in enumerate(_PREFERRED)} | {byte: 200 for byte in b" \t\r\n"}


def _steer(matcher: glrmask_runtime.Matcher, rng: random.Random, steps: int,
           single: dict[int, int]) -> tuple[list[int], str]:
    """Close a walk: take EOS when allowed, else a one-byte token: the most preferred byte (3 times in 4)
    or a random non-whitespace one (so that a loop such as `a*` before a required `b` is left)."""
    eos = set(matcher._art.eos_token_ids)
    tokens: list[int] = []
    for _ in range(steps):
        allowed = np.flatnonzero(matcher.mask()).tolist()
        if not allowed:
            return tokens, "dead"
        ending = next((t for t in allowed if t in eos), None)
        if ending is not None:
            matcher.commit(ending)
            return tokens, "eos"
        bytes_ = sorted((_RANK.get(single[t], 100), t) for t in allowed if t in single)
        if not bytes_:
            choice = allowed[rng.randrange(len(allowed))]
        elif rng.random() < 0.75:
            choice = bytes_[0][1]
        else:
            solid = [t for rank, t in bytes_ if rank < 200] or [t for _, t in bytes_]
            choice = solid[rng.randrange(len(solid))]
        matcher.commit(choice)
        tokens.append(choice)
    return tokens, "length"


def walk(artifact: glrmask_runtime.Artifact, rng: random.Random, single: dict[int, int]) -> tuple[bytes, str]:
    """A random walk (random_walk's free steps), closed by _steer: (output bytes, "eos" | "dead" | "length")."""
    matcher = artifact.matcher()
    tokens, ending = random_walk(matcher, rng, STEER_AFTER, STEER_AFTER, artifact.eos_token_ids)
    if ending == "length":
        more, ending = _steer(matcher, rng, MAX_STEPS - len(tokens), single)
        tokens += more
    return b"".join(artifact.token_bytes(t) for t in tokens), ending


@dataclass
class _Cell:
    counts: Counter[str]
    refused_by: Counter[str]
    departures: Counter[str]
    examples: list[str]
    slowest: list[tuple[float, str]]

    def example(self, text: str) -> None:
        if len(self.examples) < MAX_EXAMPLES:
            self.examples.append(text[:240])


def run_schema_cell(tokenizer: str, spec: str, tier: SchemaTier, names: list[str] | None = None,
                    strict: bool = False) -> dict:
    """The cell over the sample (every `tier.every`-th schema, or the files `names`), x the tokenizer
    `spec` (a registry name or file; `tokenizer` is the name the report shows). `strict`: compiled
    with `--strict` and judged by the `closed` schema."""
    began = time.perf_counter()
    vocab = tokenizer_vocabulary(spec)
    trie = TokenTrie(vocab.token_bytes, vocab.special_ids)
    single = {t: data[0] for t, data in enumerate(vocab.token_bytes) if len(data) == 1 and t not in vocab.special_ids}
    cell = _Cell(Counter(dict.fromkeys(COUNTS, 0)), Counter(), Counter(), [], [])
    for path in schema_files(tier.every, names):
        start = time.perf_counter()
        _schema(path, spec, vocab, trie, single, tier, cell, strict)
        cell.slowest = sorted([*cell.slowest, (time.perf_counter() - start, path.name)], reverse=True)[:5]
    return {"grammar": STRICT_SCHEMA_GRAMMAR if strict else SCHEMA_GRAMMAR, "tokenizer": tokenizer, "kind": "schema",
            **cell.counts,
            "refused_by": dict(cell.refused_by.most_common()), "departures": dict(sorted(cell.departures.items())),
            "slowest": [f"{name} {seconds:.1f} s" for seconds, name in cell.slowest],
            "seconds": round(time.perf_counter() - began, 1), "examples": cell.examples}


def _schema(path: Path, spec: str, vocab: Any, trie: TokenTrie, single: dict[int, int], tier: SchemaTier,
            cell: _Cell, strict: bool = False) -> None:
    data = json.loads(path.read_text())
    schema, name, counts = data["schema"], path.name, cell.counts
    counts["schemas"] += 1
    try:
        artifact = compile_json_schema(schema, tokenizer=spec, use_cache=False, jobs=1, strict=strict).load()
    except SchemaUnsupported as err:
        counts["refused"] += 1
        cell.refused_by[f"SchemaUnsupported: {refused_keyword(err)}"] += 1
        return
    except LimitExceeded as err:
        counts["refused"] += 1
        cell.refused_by[f"LimitExceeded: {err.limit}"] += 1
        return
    except Exception as err:
        counts["errors"] += 1
        cell.example(f"errors: {name}: {type(err).__name__}: {err}")
        return
    counts["compiled"] += 1
    began = time.perf_counter()         # the budget is for the oracles, not the build
    check = validator(closed(schema) if strict else schema)
    texts = _instances(artifact, vocab, check, data["tests"], name, cell)
    _brute_force(artifact, name, texts, trie, tier.states, began + tier.budget_s, cell)
    rng = random.Random(name)
    for _ in range(tier.walks):
        if time.perf_counter() > began + tier.budget_s:
            break
        output, ending = walk(artifact, rng, single)
        counts["walks"] += 1
        if ending == "length":
            counts["capped"] += 1
        elif ending == "dead":
            counts["dead_ends"] += 1
            cell.example(f"dead_ends: {name}: {output[:160]!r}")
        else:
            counts["walks_completed"] += 1
            _judge_walk(check, name, output, cell)


def _judge_walk(check: Any, name: str, output: bytes, cell: _Cell) -> None:
    """A completed walk's output: JSON that `jsonschema` accepts, or rejects only by a departure."""
    instance = _loads(output)
    try:
        errors = [] if instance is _NOT_JSON else list(check.iter_errors(instance))
        departure = invalid_departure(check, instance) if errors else None
    except Exception as err:        # jsonschema itself failed on the output
        cell.counts["walk_unjudged"] += 1
        cell.example(f"walk_unjudged: {name}: {type(err).__name__}: {err}")
        return
    if departure is not None:
        cell.counts["walk_departures"] += 1
        cell.departures[f"{departure} (walks)"] += 1
    elif instance is _NOT_JSON or errors:
        why = "not JSON" if instance is _NOT_JSON else (
            f"{(e := jsonschema.exceptions.best_match(errors)).json_path}: {e.message[:100]}")
        cell.counts["walk_invalid"] += 1
        cell.example(f"walk_invalid: {name}: {why}; output ends {output[-100:]!r}")


def _instances(artifact: glrmask_runtime.Artifact, vocab: Any, check: Any, tests: list[dict], name: str,
               cell: _Cell) -> list[bytes]:
    """Oracle 1 on every instance of one schema; returns the instances' texts (bytes)."""
    counts, texts = cell.counts, []
    for i, test in enumerate(tests):
        instance = test["data"]
        text = json.dumps(instance, ensure_ascii=False)
        texts.append(text.encode())
        counts["instances"] += 1
        try:
            expected = bool(check.is_valid(instance))
        except Exception as err:
            counts["unjudged"] += 1
            cell.example(f"unjudged: {name}#{i}: {type(err).__name__}: {err}")
            continue
        counts["valid" if expected else "invalid"] += 1
        counts["label_disagreements"] += expected != bool(test.get("valid", expected))
        ids = vocab.encode(text)
        result = replay(artifact, ids)
        refused, complete = result.refused, result.complete
        counts["steps"] += len(ids) + 1 if refused is None else refused + 1
        if result.commit_rejected:
            counts["commit_rejected"] += 1
            cell.example(f"commit_rejected: {name}#{i} at token {refused}: {text[:120]!r}")
        if complete != _recognizer_accepts(artifact, text.encode()):
            key = "masks_beyond_recognizer" if complete else "unsound_steps"
            counts[key] += 1
            cell.example(f"{key}: {name}#{i} at token {refused}: {text[:120]!r}")
        for step in result.early:
            counts["early_eos_checked"] += 1
            prefix = vocab.decode_bytes(ids[:step])
            verdict = _judged(check, prefix)
            if verdict is False and (_loads(prefix) is _NOT_JSON or invalid_departure(check, _loads(prefix)) is None):
                counts["early_eos_invalid"] += 1
                cell.example(f"early_eos_invalid: {name}#{i} EOS allowed after {prefix[:120]!r}")
        if expected and complete:
            counts["valid_completed"] += 1
        elif not expected and not complete:
            counts["invalid_refused"] += 1
        else:               # a verdict that is not jsonschema's: a documented departure, or a miss
            departure = valid_departure(check.schema, instance) if expected else invalid_departure(check, instance)
            if departure is None:
                miss = "valid_rejected" if expected else "invalid_accepted"
                counts[miss] += 1
                where = f" at token {refused}" if expected else ""
                cell.example(f"{miss}: {name}#{i}{where}: {text[:120]!r}")
            else:
                counts["departures_valid" if expected else "departures_invalid"] += 1
                cell.departures[departure] += 1
    return texts


_NOT_JSON = object()


def _loads(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return _NOT_JSON


def _brute_force(artifact: glrmask_runtime.Artifact, name: str, texts: list[bytes], trie: TokenTrie,
                 n_states: int, deadline: float, cell: _Cell) -> None:
    """Oracle 2: the mask at sampled states equals brute force (new states until `deadline`)."""
    if n_states <= 0:
        return
    for matcher in sampled_states(SimpleNamespace(artifact=artifact), texts, n_states, seed=11):
        if time.perf_counter() > deadline:
            break
        cell.counts["states"] += 1
        expected = brute_force_mask(artifact.recognizer, matcher._state, trie, artifact.vocab_size,
                                    artifact.eos_token_ids)
        differ = np.flatnonzero(matcher.mask() != expected)
        if len(differ):
            cell.counts["mask_mismatches"] += 1
            prefix = b"".join(step if isinstance(step, bytes) else artifact.token_bytes(step)
                              for _, _, step in matcher._history)
            sides = [f"{artifact.token_bytes(int(t))!r}:{'mask' if expected[t] == 0 else 'brute'}-only"
                     for t in differ[:4]]
            cell.example(f"mask_mismatches: {name} after {prefix[-100:]!r} ({len(differ)} tokens, e.g. {sides})")
