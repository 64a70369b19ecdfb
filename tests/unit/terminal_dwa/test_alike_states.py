"""`_alike_for`: lexer states put in one group for width w do the same to every byte string of at
most w bytes, so the Terminal DWA scans one of them and shares its row. Checked by scanning each
state of a group on its own against strings up to w bytes over the bytes that matter."""

import itertools

import numpy as np
import pytest

from glrmask_cli.lexer import build_lexer
from glrmask_cli.pipeline import load_grammar_stage
from glrmask_cli.terminal_dwa import _alike_for, _ignored_only, _Rests, _scan, _TrieBuilder, basic_contexts
from glrmask_runtime.tables import DEAD

GRAMMAR = 'start: STR ("," STR)*\nSTR: /"(?:[a\\\\]|\\\\u[0-9]{2}){0,9}"/\n%ignore " "\n'


@pytest.mark.parametrize("width", [1, 2, 3, 4])
def test_states_of_one_group_scan_alike(tmp_path, width):
    path = tmp_path / "g.lark"
    path.write_text(GRAMMAR)
    grammar = load_grammar_stage(path)
    lexer = build_lexer(grammar.terminals, grammar.ignore).tables
    contexts = basic_contexts(lexer)
    group = _alike_for(lexer, contexts, {width})[width]
    texts = [bytes(t) for n in range(width, 0, -1) for t in itertools.product(b'a\\u0," ', repeat=n)]
    columns = np.zeros((width, len(texts)), dtype=np.uint8)     # byte i of text c at [i, c]
    for c, text in enumerate(texts):
        columns[:len(text), c] = list(text)
    rests = _Rests(columns, np.asarray([len(t) for t in texts]))
    trie = _TrieBuilder(lexer.n_term_sets, lexer.n_states, _ignored_only(lexer))
    scans = {}
    for state in range(1, lexer.n_states):
        _, nodes, ends = _scan(lexer, contexts, np.full(len(texts), state), np.arange(len(texts)), rests, trie)
        scans[state] = (nodes.tolist(), np.where(ends == DEAD, -1, lexer.viable_sets[ends]).tolist())
    groups = {}
    for state in range(1, lexer.n_states):
        groups.setdefault(int(group[state]), []).append(state)
    assert any(len(members) > 1 for members in groups.values()) or width >= 4, "nothing shared: a weak test"
    for members in groups.values():
        assert all(scans[m] == scans[members[0]] for m in members), members
