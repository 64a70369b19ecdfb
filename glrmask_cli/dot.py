"""Graphviz renderings of an artifact's automata for `glrmask inspect --dot {dwa,lexer}` (the DWA whole,
or with `--from-prefix` only what the current walks can reach).

The DWA: one node per state (labelled with its id and how many distinct rows it has over the lexer
states), edges labelled with the LR state read, `*` for the default edge. The lexer: one node per
state (accepting states double-circled, labelled with the terminals), edges labelled with byte ranges.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from glrmask_runtime.artifact import Artifact


def _byte(b: int) -> str:
    ch = chr(b)
    if ch.isprintable() and ch not in '"\\' and b < 128:
        return ch
    return f"\\\\x{b:02x}"


def _ranges(bytes_: list[int]) -> str:
    parts, start = [], None
    for i, b in enumerate(bytes_):
        if start is None:
            start = b
        if i + 1 == len(bytes_) or bytes_[i + 1] != b + 1:
            parts.append(_byte(start) if start == b else f"{_byte(start)}-{_byte(b)}")
            start = None
    return ",".join(parts)


def dwa_dot(art: Artifact) -> str:
    lines = ["digraph parser_dwa {", "  rankdir=LR;", "  node [shape=circle];"]
    for d in range(art.n_dwa_states):
        lines.append(f'  d{d} [label="{d}\\naccept {int(art.accept_of[d])}"];')
        for label, target in sorted(art.dwa_edge_map(d).items()):
            lines.append(f'  d{d} -> d{target} [label="{label}"];')
        if art.dwa_default[d] >= 0:
            lines.append(f'  d{d} -> d{art.dwa_default[d]} [label="*", style=dashed];')
    lines.append("}")
    return "\n".join(lines) + "\n"


MAX_EDGES_SHOWN = 8      # per state in a partial graph; the rest are counted on one "more" node


def reachable_dwa_dot(art: Artifact, trace: dict[str, Any], depth: int | None) -> str:
    """The DWA states the walks of `explain.trace` visit (bold), and the states within `depth`
    further steps of them (default 0: the walks alone). A state shows the row a walk stopping there
    takes (at the current lexer state; a walk's own stop, from START after a close) and how many
    tokens it allows, so an edge leads to a count; an edge is labelled with the LR state it reads, its kernel items
    as the tooltip. At most MAX_EDGES_SHOWN edges leave a state; the others are counted on a
    dotted "more" node, so a graph of 100k states stays readable."""
    walks = trace["walks"] + [w for close in trace["closes"] for w in close["walks"]]
    visited = {step["dwa"] for w in walks for step in w["steps"]} | {w["stopped_at"] for w in walks}
    walked_edges = {(step["dwa"], step["next"]) for w in walks for step in w["steps"] if step["next"] >= 0}
    keep, frontier = set(visited), sorted(visited)
    for _ in range(depth or 0):
        following = []
        for d in frontier:
            for target in _targets(art, d)[:MAX_EDGES_SHOWN]:
                if target not in keep:
                    keep.add(target)
                    following.append(target)
        frontier = sorted(following)
    stops = {w["stopped_at"]: w["row"] for w in walks}
    row_map = art.row_maps[trace["lexer_state"]]
    lines = ["digraph parser_dwa {", "  rankdir=LR;", "  node [shape=circle];"]
    for d in sorted(keep):
        style = ", style=bold" if d in visited else ""
        row = stops.get(d, row_map.get(int(art.accept_of[d]), 0))
        allowed = f"\\nrow {row}: {_count(art, row)} tokens" if row else ""
        emits = "\\nemits" if d in art.emitting else ""
        lines.append(f'  d{d} [label="{d}\\naccept {int(art.accept_of[d])}{emits}{allowed}"{style}];')
        edges = sorted(art.dwa_edge_map(d).items())
        shown = [(label, t) for label, t in edges if t in keep and ((d, t) in walked_edges or depth)]
        shown = shown[:MAX_EDGES_SHOWN] + [(label, t) for label, t in shown[MAX_EDGES_SHOWN:] if (d, t) in walked_edges]
        for label, target in shown:
            bold = ", style=bold" if (d, target) in walked_edges else ""
            core = art.lr_core(label)
            tooltip = f', tooltip="{_escape(core)}"' if core else ""
            lines.append(f'  d{d} -> d{target} [label="LR {label}"{tooltip}{bold}];')
        default = art.dwa_default[d]
        if default >= 0 and default in keep:
            lines.append(f'  d{d} -> d{default} [label="*", style=dashed];')
        hidden = len(edges) - len(shown)
        if hidden > 0:
            lines.append(f'  m{d} [shape=plaintext, label="+{hidden} edges"];')
            lines.append(f'  d{d} -> m{d} [style=dotted];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _count(art: Artifact, row: int) -> int:
    return int(np.unpackbits(art.rows[row].view(np.uint8)).sum()) if row else 0


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _targets(art: Artifact, d: int) -> list[int]:
    targets = sorted(set(art.dwa_edge_map(d).values()))
    default = art.dwa_default[d]
    return ([default] if default >= 0 else []) + [t for t in targets if t != default]


def lexer_dot(art: Artifact) -> str:
    names = art.metadata["grammar"]["terminals"]
    lexer = art.lexer
    lines = ["digraph lexer {", "  rankdir=LR;"]
    for state in range(1, lexer.n_states):
        accepted = lexer.term_set(int(lexer.close_sets[state, 256]))
        label = f"{state}" + ("\\n" + " ".join(names[t] for t in accepted) if accepted else "")
        shape = "doublecircle" if accepted else "circle"
        lines.append(f'  s{state} [shape={shape}, label="{label.replace(chr(34), chr(92) + chr(34))}"];')
        targets: dict[int, list[int]] = {}
        for byte, target in enumerate(lexer.transitions[state].tolist()):
            if target:
                targets.setdefault(target, []).append(byte)
        for target, bytes_ in sorted(targets.items()):
            lines.append(f'  s{state} -> s{target} [label="{_ranges(bytes_)}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"
