"""Contexts' basic lexers are kept across builds in a process (`scanner._context_lexer`): a grammar
whose context has the same terminals as one built before reuses that lexer, with its own terminal
ids, and gets the contextual lexer a build from nothing gives it."""

from __future__ import annotations

import numpy as np

from glrmask_cli.lexer import scanner
from glrmask_cli.pipeline import compile_front_end

# two grammars sharing a context ({",", "}"} after a value) with their terminals numbered apart
FIRST = 'start: "{" KEY ":" NUM ("," KEY ":" NUM)* "}"\nKEY: /"[a-z]+"/\nNUM: /[0-9]+/\n'
SECOND = 'start: "[" WORD "]" | "{" KEY ":" WORD ("," KEY ":" WORD)* "}"\nWORD: /[a-z]+/\nKEY: /"[a-z]+"/\n'


def _tables(path):
    lexer = compile_front_end(path, contextual=True).contextual.tables
    return [lexer.transitions, lexer.close_sets, lexer.viable_sets, lexer.term_set_offsets,
            lexer.term_set_items, lexer.ignored]


def test_a_shared_context_is_built_once_and_lexes_as_built_alone(tmp_path, monkeypatch):
    first, second = tmp_path / "first.lark", tmp_path / "second.lark"
    first.write_text(FIRST)
    second.write_text(SECOND)
    built: list[tuple[str, ...]] = []       # the contexts' lexers built, by their terminals' names
    original = scanner.build_lexer
    monkeypatch.setattr(scanner, "build_lexer", lambda terminals, *rest, **kw: (
        built.append(tuple(t.name for t in terminals)), original(terminals, *rest, **kw))[1])
    monkeypatch.setattr(scanner, "_context_lexers", scanner._KeptLexers(scanner.CONTEXT_LEXER_BYTES))
    alone = _tables(second)
    second_alone = set(built)
    scanner._context_lexers.clear()
    built.clear()
    _tables(first)
    shared = second_alone & set(built)
    assert shared, "no context to share: a weak test"
    built.clear()
    after = _tables(second)
    assert set(built) == second_alone - shared       # the shared ones came from the first build
    for mine, theirs in zip(after, alone):
        assert np.array_equal(mine, theirs)
    assert all(not table.flags.writeable for table in scanner._context_lexers.values()
               for table in (table.transitions, table.close_sets))


def _sized(n_bytes: int):
    from glrmask_runtime.tables import LexerTables

    empty = np.zeros(0, dtype=np.int32)
    return LexerTables(np.zeros(n_bytes, dtype=np.uint8), empty, empty, empty, empty, empty)


def test_kept_lexers_drop_the_oldest_past_their_bytes_and_keep_the_newest():
    kept = scanner._KeptLexers(100)
    for key, size in (("a", 40), ("b", 40), ("c", 40), ("d", 10)):
        kept.put(key, _sized(size))
    assert [kept.get(k) is not None for k in "abcd"] == [False, True, True, True]     # 90 bytes kept
    kept.put("e", _sized(500))                       # larger than the limit alone: kept, the rest dropped
    assert [kept.get(k) is not None for k in "abcde"] == [False] * 4 + [True]
    kept.put("f", _sized(1))
    assert [kept.get(k) is not None for k in "ef"] == [False, True]
    kept.clear()
    assert kept.get("f") is None and not list(kept.values())
