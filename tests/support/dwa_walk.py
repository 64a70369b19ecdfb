"""Test helper: walk a ParserDWA down a concrete stack (top first) and return its outcome bitset."""

from glrmask_cli.parser_dwa.determinize import NO_STATE


def walk(dwa, stack, root=0):
    d = root
    for symbol in stack:
        nxt = dwa.step(d, symbol)
        if nxt == NO_STATE:
            break
        d = nxt
    return dwa.outcomes[d]
