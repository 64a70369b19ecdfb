"""`glrmask inspect`: what an artifact holds, as a dict (for --json) and as readable text.

Input: a loaded runtime `Artifact`. `prefix_report` commits a text's tokens and describes the mask.
`mask_cost` is the worst case a mask can cost, read off the artifact's tables (see its docstring).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from glrmask_runtime.artifact import Artifact
from glrmask_runtime.matcher import Matcher
from glrmask_runtime.tables import START


def artifact_report(art: Artifact) -> dict[str, Any]:
    """Everything inspect prints, JSON-serializable."""
    m = art.metadata
    sections = {name: int(a.nbytes) for name, a in sorted(art.container.sections.items())}
    return {
        "file": art.path,
        "format_version": art.container.format_version,
        "compiler": m["compiler"],
        "grammar": {k: m["grammar"][k] for k in ("name", "sha256", "start")}
        | {"terminals": len(m["grammar"]["terminals"]), "ignore": m["grammar"]["ignore"]},
        "tokenizer": m["tokenizer"] | {"eos_ids": list(art.eos_token_ids)},
        "lexer": {"kind": m["lexer"].get("kind", "basic"), "states": m["lexer"]["n_states"],
                  "contexts": m["lexer"].get("n_contexts", 1), "warnings": m["lexer"]["warnings"]},
        "parser": {"lr_states": m["parser"]["n_states"], "conflicts": m["parser"]["conflicts"],
                   "rules": m["parser"]["n_rules"], "max_read_depth": m["parser"]["max_read_depth"],
                   "normalization_rewrites": m["parser"]["rewrites"],
                   "warnings": m["parser"].get("warnings", [])},
        "dwa": {"layout": m["dwa"].get("layout", "one"), "groups": m["dwa"].get("n_groups", 1),
                "runtime_closes": art.n_runtime_closes,
                "states": m["dwa"]["n_states"], "transitions": m["dwa"]["n_transitions"],
                "depth": m["dwa"]["depth"], "outcomes": m["dwa"]["n_outcomes"],
                "token_classes": m["dwa"]["n_token_classes"], "row_pool_rows": m["dwa"]["n_rows"],
                "row_pool_bytes": int(art.rows.nbytes)},
        "build": m.get("build", {}),
        "mask_cost": mask_cost(art),
        "size": {"file_bytes": art.container.compressed_size, "expanded_bytes": art.container.expanded_size,
                 "sections": sections},
    }


def diff_report(a: Artifact, b: Artifact) -> dict[str, Any]:
    """What differs between two artifacts' reports (`glrmask diff`): every changed field of
    `artifact_report` (section sizes included) as {"a": ..., "b": ...}, and the sections only one has."""
    left, right = _flatten(artifact_report(a)), _flatten(artifact_report(b))
    changed = {key: {"a": left.get(key), "b": right.get(key)} for key in sorted(set(left) | set(right))
               if key != "file" and left.get(key) != right.get(key)}
    return {"a": a.path, "b": b.path, "same_file": a.fingerprint == b.fingerprint, "changed": changed}


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


def format_diff(report: dict[str, Any]) -> str:
    if report["same_file"]:
        return f"{report['a']} and {report['b']} are the same artifact"
    lines = [f"--- {report['a']}", f"+++ {report['b']}"]
    for key, change in report["changed"].items():
        a, b = change["a"], change["b"]
        counts = isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool) and a != 0
        ratio = f"  ({b / a:.2f}x)" if counts else ""
        lines.append(f"{key}: {_short(a)} -> {_short(b)}{ratio}")
    return "\n".join(lines)


def _short(value: Any) -> str:
    text = "(none)" if value is None else str(value)
    return text if len(text) <= 80 else text[:77] + "..."


def mask_cost(art: Artifact) -> dict[str, Any]:
    """The worst case of one mask (runtime/glrmask_runtime/matcher.py), per path of the GLR stack.

    A mask walks the Parser DWA down the stack once per root the top's LR state lists (`dwa.roots`)
    that can give a row at the lexer state (`dwa.q_roots`); at a lexer state with runtime closes it
    then, per close, closes the open lexeme on the stacks and walks again from START (from the START
    of the new top's context with the contextual lexer; once per root of each new top that can accept
    one of the closing tokens, `rows.close_roots`), and ANDs those rows with the closing tokens' row.
    So, per stack path (of each contextual thread):
    - max_walk_depth: the longest path from a walk root in the (acyclic) DWA: the most DWA steps,
      i.e. stack states consumed, of one walk (a walk reads at most one state more, where it stops);
    - max_roots_per_lr_state: walks from one top at one lexer state; max_runtime_closes: closes at
      one lexer state;
    - max_emits_per_walk: the most emitting states on such a path (a walk takes the row of each
      one it passes, besides the row where it stops; 0 where the DWA has none);
    - max_walks_per_mask: over lexer states, the walks from the top plus each close's walks;
      max_rows_ored: those walks' rows (1 + max_emits_per_walk each) plus one closing row per
      close (1 with one walk, no emitting state and no closes: the mask is one row).
    `one_stack_path` is true when the stacks never branch (no LR conflicts, no tied terminals); else
    every count is multiplied by the number of paths of the graph-structured stack."""
    sections = art.container.sections
    n_states = int(sections["dwa.default"].shape[0])
    # the artifact's per-state views, built on first use, read whole here
    dwa_roots = [art.dwa_roots[p] for p in range(art.lr.n_states)]
    q_roots = [art.q_roots[q] for q in range(art.lexer.n_states)]
    all_closes = [art.closes[q] for q in range(art.lexer.n_states)]
    roots = sorted({int(r) for per_state in dwa_roots for r in per_state})
    column = {root: i for i, root in enumerate(roots)}

    def members(sets: Sequence[Any]) -> np.ndarray:
        """One row per set of roots, a column per root: 1.0 where it is in the set."""
        table = np.zeros((len(sets), len(roots)), dtype=np.float32)
        for i, found in enumerate(sets):
            table[i, [column[r] for r in found if r in column]] = 1.0
        return table

    listed = members(dwa_roots)                         # LR state x root
    at_lexer_state = (members(q_roots) @ listed.T).max(axis=1, initial=0)   # lexer state -> most walks from a top
    # after a close, a path's top p walks from its context's START (START with the basic lexer)
    start_of = art.lexer_start if art.lexer_start is not None else np.full(art.lr.n_states, START)
    walkable = listed * members(q_roots)[np.asarray(start_of)]        # LR state x root
    close_sets = [allowed for closes in all_closes for _, _, allowed in closes]
    per_close = (members(close_sets) @ walkable.T).max(axis=1, initial=0) if close_sets else np.zeros(0)
    edges = (n_states, sections["dwa.edge_offsets"], sections["dwa.edge_targets"], sections["dwa.default"], roots)
    emitting = np.zeros(n_states, dtype=np.int64)
    emitting[sorted(art.emitting)] = 1
    emits = _longest_path(*edges, weight=emitting) if art.emitting else 0
    per_walk = 1 + (emits or 0)
    walks, rows = [], []
    j = 0
    for q, closes in enumerate(all_closes):
        after = per_close[j:j + len(closes)]
        j += len(closes)
        walks.append(at_lexer_state[q] + after.sum())
        rows.append((at_lexer_state[q] + after.sum()) * per_walk + len(closes))
    ties = any(len(art.lexer.term_set(int(i))) > 1 for i in np.unique(art.lexer.close_sets))
    return {
        "max_walk_depth": _longest_path(*edges),
        "max_emits_per_walk": emits,
        "max_roots_per_lr_state": int(max(at_lexer_state.max(initial=0), per_close.max(initial=0))),
        "max_runtime_closes": max((len(c) for c in all_closes), default=0),
        "max_walks_per_mask": int(max(walks, default=0)),
        "max_rows_ored": max(1, int(max(rows, default=0))),
        "one_stack_path": art.metadata["parser"]["conflicts"] == 0 and not ties,
    }


def _longest_path(n_states: int, edge_offsets: np.ndarray, edge_targets: np.ndarray, default: np.ndarray,
                  roots: Sequence[int], weight: np.ndarray | None = None) -> int | None:
    """The most edges on a path from one of `roots` (labelled and default edges alike), or with
    `weight` the largest sum of the weights of the states a path leaves; None if a cycle is
    reachable (a valid artifact's DWA is acyclic). Relaxes all edges at once per round: as many
    rounds as the longest path, each vectorized over the edges."""
    if not roots:
        return 0
    default = np.asarray(default, dtype=np.int64)
    counts = np.diff(np.asarray(edge_offsets, dtype=np.int64)).astype(np.int64)
    src = np.repeat(np.arange(n_states, dtype=np.int64), counts)
    dst = np.asarray(edge_targets, dtype=np.int64)
    with_default = np.flatnonzero(default >= 0)
    src, dst = np.concatenate([src, with_default]), np.concatenate([dst, default[with_default]])
    order = np.argsort(dst, kind="stable")
    src, dst = src[order], dst[order]
    step = 1 if weight is None else np.asarray(weight, dtype=np.int64)[src]
    targets, starts = np.unique(dst, return_index=True)
    unreached = np.int64(-(1 << 40))
    dist = np.full(n_states, unreached, dtype=np.int64)
    dist[list(roots)] = 0
    for _ in range(n_states + 1):
        if not len(dst):
            break
        best = np.maximum.reduceat(dist[src] + step, starts)
        new = dist.copy()
        new[targets] = np.maximum(dist[targets], best)
        if np.array_equal(new, dist):
            return int(dist.max())
        dist = new
    return None if len(dst) else 0


def format_report(report: dict[str, Any]) -> str:
    """The human-readable form of `artifact_report`."""
    g, t, lx, p, d, s = (report[k] for k in ("grammar", "tokenizer", "lexer", "parser", "dwa", "size"))
    lines = [
        f"artifact      {report['file']} (format {report['format_version']}, "
        f"glrmask {report['compiler']['version']})",
        f"grammar       {g['name']} start={g['start']} sha256={g['sha256']}",
        f"              {g['terminals']} terminals, ignoring {', '.join(g['ignore']) or 'nothing'}",
        f"tokenizer     {t['name']} vocab={t['vocab_size']} eos={t['eos_ids'] or 'none'} "
        f"fingerprint={t['fingerprint']}",
        f"lexer         lark's {lx['kind']} lexer, {lx['states']} states"
        + (f" ({lx['contexts']} contexts)" if lx["contexts"] > 1 else "") + f", {len(lx['warnings'])} warnings",
        *[f"              warning: {w}" for w in lx["warnings"]],
        f"parser        {p['lr_states']} LR states, {p['conflicts']} conflicts, {p['rules']} rules, "
        f"max read depth {p['max_read_depth']}, {len(p['warnings'])} warnings",
        *[f"              warning: {w}" for w in p["warnings"]],
        f"normalization {len(p['normalization_rewrites'])} rewrites",
        *[f"              {r}" for r in p["normalization_rewrites"]],
        f"parser DWA    {d['states']} states, {d['transitions']} transitions, depth {d['depth']}, "
        f"{d['outcomes']} outcomes, {d['token_classes']} token classes",
        f"              layout {d['layout']}: {d['groups']} group(s), {d['runtime_closes']} runtime closes",
        f"row pool      {d['row_pool_rows']} rows, {d['row_pool_bytes']:,} bytes",
        *_mask_cost_lines(report["mask_cost"]),
        f"size          {s['file_bytes']:,} bytes on disk, {s['expanded_bytes']:,} expanded",
        *[f"              {name:<24} {n:>12,}" for name, n in s["sections"].items()],
    ]
    return "\n".join(lines)


def _mask_cost_lines(cost: dict[str, Any]) -> list[str]:
    depth = "unbounded (cyclic DWA)" if cost["max_walk_depth"] is None else cost["max_walk_depth"]
    paths = "stacks have one path" if cost["one_stack_path"] else "times the paths of the GLR stack"
    emits = (f", passing at most {cost['max_emits_per_walk']} emitting state(s)" if cost["max_emits_per_walk"]
             else "")
    return [f"mask cost     at most {cost['max_walks_per_mask']} walk(s) of at most {depth} steps{emits}, "
            f"{cost['max_rows_ored']} row(s) OR-ed ({paths})",
            f"              most roots of an LR state {cost['max_roots_per_lr_state']}, most runtime closes "
            f"at a lexer state {cost['max_runtime_closes']}"]


def matcher_after(art: Artifact, text: str, encode: Callable[[str], Sequence[int]] | None) -> Matcher:
    """A matcher that has committed `text`: as tokens if an encoder is given, else as raw bytes."""
    matcher = art.matcher()
    if encode is not None:
        for token_id in encode(text):
            matcher.commit(token_id)
    else:
        matcher.commit_bytes(text.encode("utf-8"))
    return matcher


def prefix_report(art: Artifact, text: str, encode: Callable[[str], Sequence[int]] | None,
                  sample: int = 20) -> dict[str, Any]:
    """Commit `text` (as tokens if an encoder is given, else as raw bytes) and describe the mask."""
    matcher = matcher_after(art, text, encode)
    allowed = np.flatnonzero(matcher.mask())
    shown = [art.token_bytes(int(t)) for t in allowed[:sample] if int(t) not in art.eos_token_ids]
    return {
        "prefix": text,
        "committed_as": "tokens" if encode is not None else "bytes",
        "allowed_tokens": int(len(allowed)),
        "sample": [b.decode("utf-8", "backslashreplace") for b in shown],
        "complete": matcher.is_accepting(),
        "eos_allowed": matcher.is_accepting() and bool(art.eos_token_ids),
    }


def format_prefix_report(report: dict[str, Any]) -> str:
    """The human-readable form of `prefix_report`."""
    sample = " ".join(repr(s) for s in report["sample"])
    if report["eos_allowed"]:
        eos = "EOS allowed"
    elif report["complete"]:
        eos = "the output is complete, but the artifact has no EOS token"
    else:
        eos = "EOS not allowed"
    return (f"after {report['prefix']!r} (committed as {report['committed_as']}): "
            f"{report['allowed_tokens']} tokens allowed, {eos}\n"
            f"sample: {sample}")
