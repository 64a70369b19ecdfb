"""Regex IR -> prioritized byte NFA (Thompson construction over UTF-8 byte ranges).

Epsilon edges are ordered (earlier = higher priority), which is what lazy quantifiers need:
greedy repeats prefer the body, lazy ones the exit. Lookaheads become LOOK states that spawn an
obligation (a sub-NFA run on the following bytes); lookbehinds become BEHIND states checked against
a monitor sub-NFA for `any* B` run from the lexeme start. Limits: no nested lookarounds, a lookbehind
must not reach before the lexeme start, at most `max_states` states (limit max_pattern_nfa_states).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from glrmask_cli.errors import LimitExceeded
from glrmask_cli.lexer.syntax import Alt, Chars, Look, Repeat, Seq, SyntaxUnsupported, width
from glrmask_cli.lexer.utf8 import utf8_sequences
from glrmask_cli.limits import DEFAULTS


@dataclass
class NFA:
    eps: list[list[int]] = field(default_factory=list)                 # ordered epsilon targets
    edges: list[list[tuple[int, int, int]]] = field(default_factory=list)  # (lo, hi, target)
    look: dict[int, tuple[bool, int, int, int]] = field(default_factory=dict)  # negate, start, accept, next
    behind: dict[int, tuple[bool, int, int]] = field(default_factory=dict)     # negate, monitor, next
    monitors: list[tuple[int, int]] = field(default_factory=list)      # (start, accept) of `B` sub-NFAs
    start: int = 0
    accept: int = 0
    max_states: int = DEFAULTS.max_pattern_nfa_states

    def add_state(self) -> int:
        if len(self.eps) >= self.max_states:
            raise LimitExceeded("max_pattern_nfa_states", self.max_states, "lexer (pattern NFA)",
                                "the pattern is too large (bounded repeats multiply its states)")
        self.eps.append([])
        self.edges.append([])
        return len(self.eps) - 1


def build_nfa(node, max_states: int = DEFAULTS.max_pattern_nfa_states) -> NFA:
    """The NFA of one terminal's IR; `accept` is the single match state. LimitExceeded past
    `max_states` states."""
    nfa = NFA(max_states=max_states)
    builder = _Builder(nfa, in_look=False)
    nfa.start = nfa.add_state()
    nfa.accept = nfa.add_state()
    builder.fragment(node, nfa.start, nfa.accept, before=0)
    return nfa


class _Builder:
    def __init__(self, nfa: NFA, in_look: bool):
        self.nfa = nfa
        self.in_look = in_look

    def fragment(self, node, entry: int, exit_: int, before: int) -> None:
        """Add states so that paths entry -> exit_ spell `node`. `before`: min chars read before it."""
        nfa = self.nfa
        if isinstance(node, Chars):
            self._chars(node, entry, exit_)
        elif isinstance(node, Seq):
            cur = entry
            for i, item in enumerate(node.items):
                nxt = exit_ if i == len(node.items) - 1 else nfa.add_state()
                self.fragment(item, cur, nxt, before)
                before += width(item)[0]
                cur = nxt
            if not node.items:
                nfa.eps[entry].append(exit_)
        elif isinstance(node, Alt):
            for item in node.items:
                a, b = nfa.add_state(), nfa.add_state()
                nfa.eps[entry].append(a)
                self.fragment(item, a, b, before)
                nfa.eps[b].append(exit_)
        elif isinstance(node, Repeat):
            self._repeat(node, entry, exit_, before)
        elif isinstance(node, Look):
            self._look(node, entry, exit_, before)
        else:
            raise TypeError(f"unknown IR node {node!r}")

    def _chars(self, node: Chars, entry: int, exit_: int) -> None:
        trie: dict[tuple[int, tuple[int, int]], int] = {}
        for seq in utf8_sequences(node.ranges):
            cur = entry
            for k, rng in enumerate(seq):
                if k == len(seq) - 1:
                    self.nfa.edges[cur].append((rng[0], rng[1], exit_))
                else:
                    key = (cur, rng)
                    if key not in trie:
                        trie[key] = self.nfa.add_state()
                        self.nfa.edges[cur].append((rng[0], rng[1], trie[key]))
                    cur = trie[key]

    def _repeat(self, node: Repeat, entry: int, exit_: int, before: int) -> None:
        nfa = self.nfa
        step = width(node.item)[0]
        cur = entry
        for _ in range(node.min):
            nxt = nfa.add_state()
            self.fragment(node.item, cur, nxt, before)
            before += step
            cur = nxt
        if node.max is None:
            loop, body_end = nfa.add_state(), nfa.add_state()
            nfa.eps[cur].append(loop)
            self.fragment(node.item, body_end, loop, before)
            nfa.eps[loop].extend([exit_, body_end] if node.lazy else [body_end, exit_])
            return
        for _ in range(node.max - node.min):
            body, nxt = nfa.add_state(), nfa.add_state()
            nfa.eps[cur].extend([exit_, body] if node.lazy else [body, exit_])
            self.fragment(node.item, body, nxt, before)
            before += step
            cur = nxt
        nfa.eps[cur].append(exit_)

    def _look(self, node: Look, entry: int, exit_: int, before: int) -> None:
        nfa = self.nfa
        if self.in_look:
            raise SyntaxUnsupported("nested lookarounds are not supported")
        gate = nfa.add_state()              # a fresh state: gates carry no other edges
        nfa.eps[entry].append(gate)
        sub_start, sub_accept = nfa.add_state(), nfa.add_state()
        _Builder(nfa, in_look=True).fragment(node.item, sub_start, sub_accept, 0)
        if node.ahead:
            nfa.look[gate] = (node.negate, sub_start, sub_accept, exit_)
            return
        lo, hi = width(node.item)
        if hi is None or hi > before:
            raise SyntaxUnsupported("lookbehind may look before the start of the lexeme "
                                    "(it would depend on the previous lexeme)")
        nfa.monitors.append((sub_start, sub_accept))
        nfa.behind[gate] = (node.negate, len(nfa.monitors) - 1, exit_)
