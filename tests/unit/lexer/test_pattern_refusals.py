"""A terminal's pattern that a build limit refuses is refused again, with the same error, without
being built again: the refusal is kept with the process's pattern DFAs (`scanner._pattern_dfa`)."""

from __future__ import annotations

import dataclasses

import pytest

from glrmask_cli.errors import LimitExceeded
from glrmask_cli.grammar import TerminalSpec
from glrmask_cli.lexer import scanner
from glrmask_cli.limits import DEFAULTS


def test_a_refused_pattern_is_refused_again_without_determinizing(monkeypatch):
    built = []
    determinize = scanner.determinize

    def counted(*args, **kwargs):
        built.append(1)
        return determinize(*args, **kwargs)

    monkeypatch.setattr(scanner, "determinize", counted)
    # the n-th byte from the end is an `a`: 2^5 DFA states, past a limit of 16
    spec = TerminalSpec(name="A", value="[ab]*a[ab][ab][ab][ab]z", flags=frozenset(), priority=0,
                        is_literal=False, display="A")
    limits = dataclasses.replace(DEFAULTS, max_pattern_dfa_states=16)
    messages = []
    for _ in range(3):
        with pytest.raises(LimitExceeded) as caught:
            scanner.build_terminal_dfa(spec, "g.lark", limits)
        messages.append(str(caught.value))
        assert caught.value.limit == "max_pattern_dfa_states" and caught.value.value == 16
    assert len(built) == 1
    assert messages[0] == messages[1] == messages[2] and "terminal A" in messages[0]
    # with the limit raised it is built, and kept
    dfa = scanner.build_terminal_dfa(spec, "g.lark", DEFAULTS)
    assert dfa is scanner.build_terminal_dfa(spec, "g.lark", DEFAULTS) and len(built) == 2
