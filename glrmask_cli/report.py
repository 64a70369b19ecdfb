"""`glrmask inspect`: what an artifact holds, as a dict (for --json) and as readable text.

Input: a loaded runtime `Artifact`. `prefix_report` commits a text's tokens and describes the mask.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from glrmask_runtime.artifact import Artifact


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
        "lexer": {"states": m["lexer"]["n_states"], "warnings": m["lexer"]["warnings"]},
        "parser": {"lr_states": m["parser"]["n_states"], "conflicts": m["parser"]["conflicts"],
                   "rules": m["parser"]["n_rules"], "max_read_depth": m["parser"]["max_read_depth"],
                   "normalization_rewrites": m["parser"]["rewrites"]},
        "dwa": {"layout": m["dwa"].get("layout", "one"), "groups": m["dwa"].get("n_groups", 1),
                "runtime_closes": sum(len(c) for c in art.closes),
                "states": m["dwa"]["n_states"], "transitions": m["dwa"]["n_transitions"],
                "depth": m["dwa"]["depth"], "outcomes": m["dwa"]["n_outcomes"],
                "token_classes": m["dwa"]["n_token_classes"], "row_pool_rows": m["dwa"]["n_rows"],
                "row_pool_bytes": int(art.rows.nbytes)},
        "size": {"file_bytes": art.container.compressed_size, "expanded_bytes": art.container.expanded_size,
                 "sections": sections},
    }


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
        f"lexer         {lx['states']} states, {len(lx['warnings'])} warnings",
        *[f"              warning: {w}" for w in lx["warnings"]],
        f"parser        {p['lr_states']} LR states, {p['conflicts']} conflicts, {p['rules']} rules, "
        f"max read depth {p['max_read_depth']}",
        f"normalization {len(p['normalization_rewrites'])} rewrites",
        *[f"              {r}" for r in p["normalization_rewrites"]],
        f"parser DWA    {d['states']} states, {d['transitions']} transitions, depth {d['depth']}, "
        f"{d['outcomes']} outcomes, {d['token_classes']} token classes",
        f"              layout {d['layout']}: {d['groups']} group(s), {d['runtime_closes']} runtime closes",
        f"row pool      {d['row_pool_rows']} rows, {d['row_pool_bytes']:,} bytes",
        f"size          {s['file_bytes']:,} bytes on disk, {s['expanded_bytes']:,} expanded",
        *[f"              {name:<24} {n:>12,}" for name, n in s["sections"].items()],
    ]
    return "\n".join(lines)


def prefix_report(art: Artifact, text: str, encode: Callable[[str], Sequence[int]] | None,
                  sample: int = 20) -> dict[str, Any]:
    """Commit `text` (as tokens if an encoder is given, else as raw bytes) and describe the mask."""
    matcher = art.matcher()
    if encode is not None:
        for token_id in encode(text):
            matcher.commit(token_id)
    else:
        matcher.commit_bytes(text.encode("utf-8"))
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
