"""Graphviz renderings of an artifact's automata for `glrmask inspect --dot {dwa,lexer}` (the DWA whole,
or with `--from-prefix` only what the current walks can reach).

The DWA: one node per state (labelled with its id and how many distinct rows it has over the lexer
states), edges labelled with the LR state read, `*` for the default edge. The lexer: one node per
state (accepting states double-circled, labelled with the terminals), edges labelled with byte ranges.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

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
    return _dwa_graph(art, range(art.n_dwa_states), set())


def reachable_dwa_dot(art: Artifact, trace: dict[str, Any], depth: int | None) -> str:
    """Only the DWA states the walks of `explain.trace` start from and can reach (at most `depth`
    steps from a root); the states those walks actually visited are drawn bold."""
    walks = trace["walks"] + [w for close in trace["closes"] for w in close["walks"]]
    visited = {step["dwa"] for w in walks for step in w["steps"]} | {w["stopped_at"] for w in walks}
    frontier = sorted({w["root"] for w in walks})
    keep = set(frontier)
    level = 0
    while frontier and (depth is None or level < depth):
        following = []
        for d in frontier:
            targets = set(art.dwa_edges[d].values()) | ({art.dwa_default[d]} if art.dwa_default[d] >= 0 else set())
            following += [t for t in targets if t not in keep]
            keep.update(targets)
        frontier, level = sorted(set(following)), level + 1
    return _dwa_graph(art, sorted(keep), visited)


def _dwa_graph(art: Artifact, states: Iterable[int], bold: set[int]) -> str:
    shown = set(states)
    lines = ["digraph parser_dwa {", "  rankdir=LR;", "  node [shape=circle];"]
    for d in sorted(shown):
        style = ", style=bold" if d in bold else ""
        lines.append(f'  d{d} [label="{d}\\naccept {int(art.accept_of[d])}"{style}];')
        for label, target in sorted(art.dwa_edges[d].items()):
            if target in shown:
                lines.append(f'  d{d} -> d{target} [label="{label}"];')
        if art.dwa_default[d] >= 0 and art.dwa_default[d] in shown:
            lines.append(f'  d{d} -> d{art.dwa_default[d]} [label="*", style=dashed];')
    lines.append("}")
    return "\n".join(lines) + "\n"


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
