"""Hand-made CFGs from a compact text form, plus random sentences and mutations (tests, stress documents).

`cfg_from_text("e: e + t | t\\nt: N")` -> CFG whose terminals are the names that never appear on a
left-hand side (sorted, then $END); the first rule's left-hand side is the start symbol.
`as_normalized` wraps a CFG like `NormalizedGrammar` (fields cfg, accepts_empty, rewrites).
"""

from __future__ import annotations

import random
from types import SimpleNamespace

from glrmask_cli.parser.cfg import CFG, Rule


def cfg_from_text(text: str) -> CFG:
    lines = [line.split(":", 1) for line in text.strip().splitlines() if line.strip()]
    lhs_names: list[str] = []
    for lhs, _ in lines:
        if lhs.strip() not in lhs_names:
            lhs_names.append(lhs.strip())
    alternatives = [(lhs.strip(), [alt.split() for alt in rhs.split("|")]) for lhs, rhs in lines]
    used = {s for _, alts in alternatives for alt in alts for s in alt}
    terminals = tuple(sorted(used - set(lhs_names))) + ("$END",)
    ids = {name: i for i, name in enumerate(terminals)}
    ids.update({name: len(terminals) + i for i, name in enumerate(lhs_names)})
    rules = tuple(Rule(ids[lhs], tuple(ids[s] for s in alt)) for lhs, alts in alternatives for alt in alts)
    return CFG(terminals, tuple(lhs_names), rules, ids[lhs_names[0]])


def as_normalized(cfg: CFG, accepts_empty: bool = False) -> SimpleNamespace:
    return SimpleNamespace(cfg=cfg, accepts_empty=accepts_empty, rewrites=())


def random_sentence(cfg: CFG, rng: random.Random, max_depth: int = 8) -> tuple[int, ...] | None:
    """A random terminal string derived from the start symbol (None if the depth bound is hit)."""
    by_lhs: dict[int, list[tuple[int, ...]]] = {}
    for r in cfg.rules:
        by_lhs.setdefault(r.lhs, []).append(r.rhs)
    out: list[int] = []

    def expand(symbol: int, depth: int) -> bool:
        if cfg.is_terminal(symbol):
            out.append(symbol)
            return True
        if depth > max_depth or len(out) > 60:
            return False
        alts = by_lhs[symbol]
        # past half depth prefer the shortest alternatives so that derivations end
        choice = rng.choice(sorted(alts, key=len)[:max(1, len(alts) // 2)] if depth > max_depth // 2 else alts)
        return all(expand(s, depth + 1) for s in choice)

    return tuple(out) if expand(cfg.start, 0) else None


def mutate(sentence: tuple[int, ...], n_terminals: int, rng: random.Random) -> tuple[int, ...]:
    """Truncate, delete, insert or swap one terminal (END excluded)."""
    s = list(sentence)
    kind = rng.choice(["truncate", "delete", "insert", "swap"])
    i = rng.randrange(len(s) + 1)
    if kind == "truncate":
        del s[i:]
    elif kind == "delete" and s:
        del s[min(i, len(s) - 1)]
    elif kind == "insert":
        s.insert(i, rng.randrange(n_terminals - 1))
    elif len(s) >= 2:
        j = min(i, len(s) - 2)
        s[j], s[j + 1] = s[j + 1], s[j]
    return tuple(s)


def sentences_and_mutations(cfg: CFG, seed: int, n: int) -> list[tuple[int, ...]]:
    """n random sentences and n mutations of them, deduplicated, in a deterministic order."""
    rng = random.Random(seed)
    found: dict[tuple[int, ...], None] = {}
    for _ in range(n * 4):
        if len(found) >= n:
            break
        s = random_sentence(cfg, rng)
        if s is not None:
            found[s] = None
    positives = list(found)
    for s in positives:
        found[mutate(s, cfg.n_terminals, rng)] = None
    found[()] = None
    return list(found)
