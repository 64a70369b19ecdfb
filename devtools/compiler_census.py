"""`python -m devtools.compiler_census GRAMMAR [--start RULE] [--tokenizer NAME]`: the sizes that
decide how the compiler scales, for choosing (and re-checking) the quotients of the compiler rework.

LR side: canonical LR(1) states and their bisimulation quotient (states with equal action rows and
gotos up to equivalence), the compiler's LR quotient (parser/quotient.py: reductions compared by
left-hand side and length; its states and terminal classes), terminals, terminals with identical
action columns, terminals with the same *presence* (the states where they have any action: what
the depth-one test "the top state has an action on t" sees), and the distinct action-terminal sets
over states. Token side (with a tokenizer): token classes, outcomes, live (lexer state, class) pairs
and the share of them whose token stays inside one lexeme (decidable from the top state alone).
docs/ARCHITECTURE.md ("Known limits") quotes its output.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from glrmask_cli.grammar import load_grammar
from glrmask_cli.lexer.scanner import build_lexer
from glrmask_cli.parser.cfg import build_cfg
from glrmask_cli.parser.lr import build_lr
from glrmask_cli.parser.normalize import normalize
from glrmask_cli.parser.quotient import quotient
from glrmask_cli.terminal_dwa import NO_OUTCOME, TerminalDWA, build_terminal_dwa, spell_out_closes
from glrmask_cli.vocab.registry import load_vocabulary
from glrmask_runtime.tables import SHIFT, LRTables


@dataclass(frozen=True)
class LRCensus:
    states: int
    bisimulation_classes: int
    quotient_states: int
    quotient_terminals: int
    terminals: int
    column_classes: int
    presence_classes: int
    action_sets: int


@dataclass(frozen=True)
class OutcomeCensus:
    token_classes: int
    outcomes: int
    live_pairs: int
    single_lexeme_share: float


def lr_census(lr: LRTables, ignored: Sequence[int] = ()) -> LRCensus:
    n, n_t = lr.n_states, lr.n_terminals
    counts = np.diff(lr.action_offsets)
    cell = np.repeat(np.arange(counts.size), counts)
    rows: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    columns: dict[int, list[tuple[int, int]]] = {t: [] for t in range(n_t)}
    for c, action in zip(cell.tolist(), lr.actions.tolist()):
        rows[c // n_t].append((c % n_t, action))
        columns[c % n_t].append((c // n_t, action))
    has_action = (counts > 0).reshape(n, n_t)
    folded = quotient(lr, ignored)
    return LRCensus(
        states=n,
        bisimulation_classes=len(set(_bisimulation(rows, lr.goto).tolist())),
        quotient_states=folded.n_state_classes,
        quotient_terminals=int(folded.terminal_class.max()) + 1,
        terminals=n_t,
        column_classes=len({tuple(col) for col in columns.values()}),
        presence_classes=len({has_action[:, t].tobytes() for t in range(n_t)}),
        action_sets=len({has_action[s].tobytes() for s in range(n)}),
    )


def _bisimulation(rows: list[list[tuple[int, int]]], goto: np.ndarray) -> np.ndarray:
    """Moore refinement: states are equal iff their actions (shift targets up to the partition) and
    gotos (likewise) are."""
    n = len(rows)
    block = np.zeros(n, dtype=np.int64)
    n_blocks = 1
    while True:
        signatures: dict[tuple, int] = {}
        refined = np.empty(n, dtype=np.int64)
        for s in range(n):
            actions = tuple((t, a & 3, int(block[a >> 2]) if a & 3 == SHIFT else a >> 2) for t, a in rows[s])
            gotos = tuple(int(block[g]) if g >= 0 else -1 for g in goto[s].tolist())
            refined[s] = signatures.setdefault((int(block[s]), actions, gotos), len(signatures))
        if len(signatures) == n_blocks:
            return block
        block, n_blocks = refined, len(signatures)


def outcome_census(tdwa: TerminalDWA) -> OutcomeCensus:
    outcome = np.stack([tdwa.outcome_row(q)[:tdwa.n_classes] for q in range(tdwa.n_lexer_states)])
    live = outcome != NO_OUTCOME
    node_of = np.array([o.node for o in tdwa.outcomes] + [0])
    single = live & (node_of[outcome] == 0)
    return OutcomeCensus(tdwa.n_classes, len(tdwa.outcomes), int(live.sum()),
                         float(single.sum() / max(int(live.sum()), 1)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("grammar")
    parser.add_argument("--start", default=None)
    parser.add_argument("--tokenizer", default=None, help="also count token outcomes (e.g. gpt2)")
    args = parser.parse_args(argv)
    began = time.perf_counter()
    spec = load_grammar(args.grammar, start=args.start)
    lexer = build_lexer(spec.terminals, spec.ignore, args.grammar).tables
    lr = build_lr(normalize(build_cfg(spec), where=args.grammar)).tables
    census = lr_census(lr, lexer.ignored.tolist())
    print(f"{args.grammar} (start {spec.start}): {census}, lexer states {lexer.n_states}, "
          f"{time.perf_counter() - began:.1f} s")
    if args.tokenizer:
        vocab = load_vocabulary(args.tokenizer)
        began = time.perf_counter()
        tdwa = spell_out_closes(build_terminal_dwa(lexer, vocab),
                                lexer)
        print(f"  x {args.tokenizer}: {outcome_census(tdwa)}, terminal DWA {time.perf_counter() - began:.1f} s")


if __name__ == "__main__":
    main()
