"""Build errors (UnsupportedFeature naming the terminal), warnings and the Scanner API."""

from __future__ import annotations

import pytest

from devtools.builds import REPO_ROOT, vocabulary
from glrmask_cli.errors import UnsupportedFeature
from glrmask_cli.grammar import TerminalSpec
from glrmask_cli.lexer import build_lexer
from glrmask_cli.lexer.scanner import boundary_warnings
from glrmask_cli.pipeline import compile_grammar
from glrmask_runtime.errors import InputRejected
from glrmask_runtime.lexer import Scanner
from glrmask_runtime.tables import START


def regexp(name, pattern, priority=0, flags=""):
    return TerminalSpec(name, pattern, frozenset(flags), priority, False, name)


def literal(text, priority=0):
    return TerminalSpec(text.upper(), text, frozenset(), priority, True, f'"{text}"')


@pytest.mark.parametrize("pattern, fragment", [
    (r"(a)\1", "backreference"),
    (r"a*", "empty string"),
    (r"\bword", "anchor"),
    (r"ab(?!cd)", "more than one byte"),
    (r"(?<=x)a", "before the start"),
    (r"a(?!\u00e9)", "more than one byte"),
    (r"a(?>b)", "atomic group"),
])
def test_unsupported_terminal_is_named(pattern, fragment):
    with pytest.raises(UnsupportedFeature) as info:
        build_lexer([regexp("GOOD", "x"), regexp("BAD", pattern)], [], "g.lark")
    message = str(info.value)
    assert message.startswith("g.lark: terminal BAD: ") and fragment in message, message


def lex(build, text: str):
    scanner = Scanner(build.tables)
    sets, state = scanner.scan(START, text.encode())
    if state != START:
        sets.append(scanner.close(state))
    return [tuple(build_names(build, s)) for s in sets]


def build_names(build, set_id):
    return build.tables.term_set(set_id)


def test_keyword_beats_name_and_longest_match_wins():
    terms = [literal("if"), regexp("NAME", r"[a-z]+"), literal(" ")]
    build = build_lexer(terms, [])
    assert lex(build, "if iffy") == [(0,), (2,), (1,)]


def test_trailing_lookahead_decides_on_next_byte():
    terms = [regexp("DEC", r"0(?![1-9])"), regexp("OCT", r"01[0-7]*"), literal("x")]
    build = build_lexer(terms, [])
    scanner = Scanner(build.tables)
    sets, state = scanner.scan(START, b"0x0")
    assert [build.tables.term_set(s) for s in sets] == [(0,), (2,)]
    assert build.tables.term_set(scanner.close(state)) == (0,)


def test_one_byte_lookahead_limit_rejects_and_warns():
    terms = [regexp("INT", r"[0-9]+"), regexp("DECIMAL", r"[0-9]+\.[0-9]+"), regexp("DOT", r"\."),
             regexp("NAME", r"[a-z]+")]
    build = build_lexer(terms, [])
    scanner = Scanner(build.tables)
    with pytest.raises(InputRejected) as info:
        scanner.scan(START, b"1.x")
    assert info.value.position == 2
    warned = boundary_warnings(build.tables, terms, lambda a: {2})   # DOT may follow anything
    assert any(w.startswith("terminal INT followed by DOT") and "after INT '0'" in w for w in warned)
    assert boundary_warnings(build.tables, terms, lambda a: {3}) == []   # only NAME may follow


def test_boundary_warnings_only_for_terminals_the_grammar_puts_side_by_side():
    """json.lark: NUMBER then '.' or 'e' extends the number, but nothing starting with those bytes
    can follow a NUMBER in JSON, so the build warns about nothing."""
    compiled = compile_grammar(REPO_ROOT / "grammars" / "json.lark", tokenizer=vocabulary("small-gpt2"))
    assert compiled.lexer_warnings == ()


def test_lazy_string_stops_at_first_quote():
    terms = [regexp("STRING", r'".*?(?<!\\)(\\\\)*?"'), literal(","), literal(" ")]
    build = build_lexer(terms, [])
    assert lex(build, r'"a\"b", "c"') == [(0,), (1,), (2,), (0,)]


def test_scan_resumes_across_chunks():
    terms = [regexp("NUM", r"[0-9]+"), literal("+")]
    scanner = Scanner(build_lexer(terms, []).tables)
    whole, state_whole = scanner.scan(START, b"12+345+6")
    first, mid = scanner.scan(START, b"12+3")
    rest, state_rest = scanner.scan(mid, b"45+6")
    assert first + rest == whole and state_rest == state_whole
    assert scanner.close(START) == 0


def test_dead_input_position():
    scanner = Scanner(build_lexer([regexp("A", "a+")], []).tables)
    with pytest.raises(InputRejected) as info:
        scanner.scan(START, b"aab")
    assert info.value.position == 2


def test_tables_identical_across_hash_seeds():
    import os
    import subprocess
    import sys
    code = ("import hashlib\nfrom tests.support.lexer_corpus import lark_terminal_specs, LARK_GRAMMARS\n"
            "from glrmask_cli.lexer import build_lexer\n"
            "specs, ignore = lark_terminal_specs(LARK_GRAMMARS + '/lark.lark')\n"
            "t = build_lexer(specs, ignore).tables\nh = hashlib.sha256()\n"
            "for a in (t.transitions, t.close_sets, t.viable_sets, t.term_set_offsets, t.term_set_items,"
            " t.ignored):\n    h.update(a.dtype.str.encode() + a.tobytes())\nprint(h.hexdigest())\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    digests = {subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(digests) == 1
