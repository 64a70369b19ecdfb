"""The scan's shortcuts give what stepping every byte gives: a branch whose whole rest loops its
lexer state back to itself is left there (`_Loops`), a lexeme handing over to several contexts
forks into one copy per state their STARTs reach (`_TrieBuilder.hand_overs`), and a (state, class)
pair whose second byte can neither extend nor close the state's lexeme is not scanned at all
(`_viable_pairs`)."""

import dataclasses
import itertools

import numpy as np

from glrmask_cli import terminal_dwa
from glrmask_cli.json_schema import schema_to_lark
from glrmask_cli.lexer import build_lexer
from glrmask_cli.pipeline import compile_front_end, load_grammar_stage
from glrmask_cli.terminal_dwa import (
    _ignored_only,
    _kind_bits,
    _rest_kinds,
    _Rests,
    _scan,
    _self_loops,
    _TrieBuilder,
    basic_contexts,
    build_terminal_dwa,
    byte_classes,
    lexer_contexts,
)
from glrmask_cli.vocab import load_vocabulary
from glrmask_runtime.tables import DEAD, START

LOOPING = ('start: (STR | NAME | NUM) ("," (STR | NAME | NUM))*\n'
           'STR: /"[a-z ,]*"/\nNAME: /[a-z]+/\nNUM: /[0-9]+/\n%ignore " "\n')
# after ":" the contexts of several LR states (a key's value, a nested object's key) may follow
CONTEXTS = ('start: obj\nobj: "{" [pair ("," pair)*] "}"\npair: KEY ":" (WORD | NUM | obj)\n'
            'KEY: /"[a-z]+"/\nWORD: /[a-z]+/\nNUM: /[0-9]+/\n%ignore " "\n')


def _rests(texts: list[bytes], kind_of_byte: np.ndarray) -> _Rests:
    width = max(len(t) for t in texts)
    columns = np.zeros((width, len(texts)), dtype=np.uint8)
    for c, text in enumerate(texts):
        columns[:len(text), c] = list(text)
    lengths = np.asarray([len(t) for t in texts])
    return _Rests(columns, lengths, _rest_kinds(np.frombuffer(b"".join(texts), dtype=np.uint8), lengths, kind_of_byte))


def test_looping_rests_are_left_where_they_are(tmp_path):
    path = tmp_path / "g.lark"
    path.write_text(LOOPING)
    grammar = load_grammar_stage(path)
    lexer = build_lexer(grammar.terminals, grammar.ignore).tables
    contexts = basic_contexts(lexer)
    kinds = byte_classes(lexer)
    texts = [bytes(t) for n in range(4, 0, -1) for t in itertools.product(b'ab1", ', repeat=n)]
    rests = _rests(texts, kinds)
    loops = _self_loops(lexer, kinds)
    taken = 0
    for state in range(1, lexer.n_states):
        states, rows = np.full(len(texts), state), np.arange(len(texts))
        taken += int(loops.stay(states, rows, rests.kinds).sum())
        plain = _scan(lexer, contexts, states, rows, rests, _TrieBuilder(lexer.n_term_sets, lexer.n_states,
                                                                         _ignored_only(lexer)))
        short = _scan(lexer, contexts, states, rows, rests, _TrieBuilder(lexer.n_term_sets, lexer.n_states,
                                                                         _ignored_only(lexer)), loops=loops)
        for a, b in zip(plain, short):
            assert a.tolist() == b.tolist(), state
    assert taken > 100, "the shortcut was hardly taken: a weak test"


def test_a_fork_has_a_copy_per_state_reached(tmp_path):
    path = tmp_path / "g.lark"
    path.write_text(CONTEXTS)
    front = compile_front_end(path, contextual=True)
    lexer = front.tables
    contexts = lexer_contexts(front.contextual, front.lr.tables)
    trie = _TrieBuilder(lexer.n_term_sets, lexer.n_states, _ignored_only(lexer))
    causes = np.asarray([t * 256 + b for t in range(1, lexer.n_term_sets) if len(contexts.next_starts[t]) > 1
                         for b in range(256)], dtype=np.int64)
    assert len(causes), "no lexeme hands over to several contexts: a weak test"
    first, counts, states, tags = trie.hand_overs(causes[::-1], contexts, lexer.transitions)
    first, counts = first[::-1], counts[::-1]
    merged = 0
    for cause, lo, n in zip(causes.tolist(), first.tolist(), counts.tolist()):
        term_set, byte = divmod(cause, 256)
        reached: dict[int, list[int]] = {}
        for start in contexts.next_starts[term_set]:
            if lexer.transitions[start, byte] != DEAD:
                reached.setdefault(int(lexer.transitions[start, byte]), []).append(start)
        assert states[lo:lo + n].tolist() == list(reached)
        for tag, starts in zip(tags[lo:lo + n].tolist(), reached.values()):
            if len(starts) == 1:
                assert tag == starts[0] and tag >= START
            else:
                merged += 1
                assert trie.start_sets[-2 - tag] == tuple(starts)
    assert merged, "no two contexts reach one state: a weak test"
    again = trie.hand_overs(causes, contexts, lexer.transitions)
    assert again[0].tolist() == first.tolist() and again[1].tolist() == counts.tolist()


def test_kind_bits_past_64_byte_classes():
    rng = np.random.default_rng(7)
    kind_of_byte = rng.permutation(np.arange(256) % 150)          # 150 byte classes: three words
    texts = [bytes(rng.integers(0, 256, size=n).tolist()) for n in rng.integers(0, 9, size=40)]
    lengths = np.asarray([len(t) for t in texts])
    kinds = _rest_kinds(np.frombuffer(b"".join(texts), dtype=np.uint8), lengths, kind_of_byte)
    assert kinds.shape == (3, len(texts))
    for c, text in enumerate(texts):
        expected = {int(kind_of_byte[b]) for b in text}
        found = {64 * w + i for w in range(3) for i in range(64) if int(kinds[w, c]) >> i & 1}
        assert found == expected
    members = rng.random((150, 5)) < 0.3
    bits = _kind_bits(members)
    for q in range(5):
        assert {64 * w + i for w in range(3) for i in range(64) if int(bits[w, q]) >> i & 1} == \
            set(np.flatnonzero(members[:, q]).tolist())


def test_pairs_left_unscanned_change_no_outcome(tmp_path, monkeypatch):
    """A schema's keys and enum values are literals, from whose states few second bytes go on: the
    Terminal DWA built from the viable pairs alone equals the one built from every pair."""
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "kind": {"enum": ["alpha", "beta"]},
                                               "size": {"type": "integer"}}, "required": ["name"]}
    path = tmp_path / "schema.lark"
    path.write_text(schema_to_lark(schema))
    front = compile_front_end(path, contextual=True)
    contexts = lexer_contexts(front.contextual, front.lr.tables)
    vocab = load_vocabulary("gpt2")
    scanned: list[int] = []
    viable = terminal_dwa._viable_pairs

    def counted(*args):
        pairs = viable(*args)
        scanned.append(len(pairs[0]))
        return pairs
    monkeypatch.setattr(terminal_dwa, "_viable_pairs", counted)
    fewer = build_terminal_dwa(front.tables, vocab, contexts=contexts)

    def every_pair(goes_on, going, states, lo, hi, rests):      # as if every byte went on from every state
        pairs = viable(goes_on, np.full_like(going, 256), states, lo, hi, rests)
        assert len(pairs[0]) == len(states) * (hi - lo)
        scanned.append(-len(pairs[0]))
        return pairs
    monkeypatch.setattr(terminal_dwa, "_viable_pairs", every_pair)
    every = build_terminal_dwa(front.tables, vocab, contexts=contexts)
    kept, total = sum(n for n in scanned if n > 0), -sum(n for n in scanned if n < 0)
    assert kept < total * 3 / 4, "few pairs left unscanned: a weak test"
    for field in dataclasses.fields(every):
        a, b = getattr(every, field.name), getattr(fewer, field.name)
        if isinstance(a, tuple) and a and isinstance(a[0], np.ndarray):
            assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b)), field.name
        elif isinstance(a, np.ndarray):
            assert np.array_equal(a, b), field.name
        else:
            assert a == b, field.name
