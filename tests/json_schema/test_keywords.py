"""patternProperties, not, multipleOf, decimal bounds, oneOf proofs, strings under several keywords,
formats uri, uri-reference, duration and hostname
(docs/json-schema.md): every verdict of the lowered grammar on generated instances, valid and
invalid, equals the `jsonschema` package's (formats asserted), up to the documented departures;
what is not compiled exactly is a one-line error with its JSON pointer."""

from __future__ import annotations

import itertools
import json
import random
from decimal import Decimal
from fractions import Fraction

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from glrmask_cli.api import json_schema_grammar
from glrmask_cli.json_schema import _FORMATS, SchemaUnsupported
from glrmask_cli.schema_disjoint import meets
from glrmask_cli.schema_numbers import multiples, number_range
from tests.json_schema.test_lowering import checker_for, in_schema_order

ESCAPED = set('"\\\n\t')       # characters JSON writes escaped (the departures' subject)


def validator(schema):
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, format_checker=jsonschema.FormatChecker())


def assert_verdicts(schema, instances, tmp_path, departure=lambda instance: False):
    """Our verdict on each instance (json.dumps spelling) is jsonschema's, except where `departure`
    says a valid instance is written in a way the documented departures reject."""
    check, judge = checker_for(schema, tmp_path), validator(schema)
    for instance in instances:
        text = json.dumps(instance, ensure_ascii=False)
        expected = judge.is_valid(instance) and not departure(instance)
        assert check.check_bytes(text.encode()).ok == expected, (schema, text)


def refused_at(schema) -> str:
    with pytest.raises(SchemaUnsupported) as info:
        json_schema_grammar(schema)
    return str(info.value).split(": ")[0]


# -- patternProperties ---------------------------------------------------------------------------

PATTERNED = [
    # overlapping patterns with equal schemas, a declared property a pattern also matches
    {"type": "object", "properties": {"id": {"type": "integer"}, "x-a": {"type": "string"}},
     "patternProperties": {"^x-": {"type": "string", "maxLength": 2}, "a$": {"type": "string", "maxLength": 2}},
     "additionalProperties": {"type": "boolean"}},
    # disjoint patterns (every key but "" matches one), different schemas, nothing else allowed
    {"type": "object", "patternProperties": {"^/": {"type": "string"}, "^[^/]": {"type": "object"}},
     "additionalProperties": False},
    # overlapping patterns whose schemas merge; additionalProperties default
    {"type": "object", "required": ["k"], "properties": {"k": {"enum": [1, 2]}},
     "patternProperties": {"^[a-z]+$": {"type": "integer", "minimum": 0}, "z": {"maximum": 9}}},
]
KEYS = ["id", "x-a", "x-b", "ba", "/p", "q", "", "k", "zz", "xyz", "Z", "a\"b", "a\nx"]
VALUES = [0, 5, 12, -1, 1.5, "", "ab", "abc", True, None, {}, {"a": 1}, [1]]


def unescaped_keys(schema):
    """The departure: with patternProperties, keys that are not declared are written without escapes."""
    declared = schema.get("properties", {})
    return lambda instance: any(k not in declared and ESCAPED & set(k) for k in instance)


@pytest.mark.parametrize("schema", PATTERNED)
def test_pattern_properties_get_jsonschemas_verdict(schema, tmp_path):
    rng = random.Random(11)
    instances = []
    for _ in range(700):
        keys = rng.sample(KEYS, rng.randrange(0, 4)) + ["k"] * (rng.random() < 0.6)
        instance = {k: rng.choice([1, 2, 3] if k == "k" else VALUES) for k in keys}
        order = list(schema.get("properties", {}))
        instances.append(dict(sorted(instance.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order
                                     else len(order))))    # the order departure: declared ones first
    departure = unescaped_keys(schema)
    assert_verdicts(schema, instances, tmp_path, lambda i: departure(i) or not in_schema_order(i, schema))
    assert sum(validator(schema).is_valid(i) for i in instances) > 40


def test_pattern_properties_whose_schemas_cannot_merge_are_refused_where_patterns_overlap():
    overlapping = {"patternProperties": {"^a": {"type": "string"}, "b$": {"type": "integer"}}}
    assert refused_at(overlapping) == "#/patternProperties/b$/type"
    disjoint = {"patternProperties": {"^a": {"type": "string"}, "^b": {"type": "integer"}}}
    assert "KEY" in json_schema_grammar(disjoint)


# -- strings under several keywords ------------------------------------------------------------

@pytest.mark.parametrize("schema", [
    {"type": "string", "pattern": "^[ab-]*$", "minLength": 1, "maxLength": 2},
    {"type": "string", "pattern": "a|^-", "maxLength": 3},
    {"type": "string", "format": "email", "pattern": "^.*?@.*$", "minLength": 3},
    {"type": "string", "pattern": "^a$|^b-$|1"},
    {"type": "string", "maxLength": 2, "not": {"enum": ["ab", "\"", "é", 3]}},
    {"enum": ["a", "abcd", "@", 1], "maxLength": 2, "pattern": "^[a-z]+$"},
])
def test_strings_meet_every_keyword_on_every_short_string(schema, tmp_path):
    """Every string of up to 4 characters over an alphabet with characters JSON escapes; strings
    under a pattern or format are written without escapes (the departure)."""
    plain = "pattern" not in schema and "format" not in schema
    texts = ["".join(c) for n in range(5) for c in itertools.product(["a", "b", "-", "@", "1", "é", '"', "\n"],
                                                                      repeat=n)]
    assert_verdicts(schema, texts + [3, 1, None], tmp_path,
                    lambda s: isinstance(s, str) and not plain and bool(ESCAPED & set(s)))


def test_a_string_not_listed_is_refused_in_every_spelling(tmp_path):
    check = checker_for({"type": "string", "not": {"enum": ["logs", "a\"/é😀"]}}, tmp_path)
    for text in ['"logs"', r'"\u006cogs"', r'"l\u006Fgs"', r'"a\"\/é😀"', r'"\u0061\u0022/\u00E9\ud83d\ude00"']:
        assert not check.check_bytes(text.encode()).ok, text
        assert check.check_bytes(text.encode()[:-1] + b'x"').ok, text


# -- format: uri, uri-reference -----------------------------------------------------------------

URI_FORMATS = ["uri", "uri-reference"]
# pieces of URIs, each (valid, near-misses): schemes (starting with a digit, with a space), userinfo,
# hosts (IPv6 literals with bad groups, IPv4 tails with leading zeros or 256, IPvFuture in both cases,
# a zone, unclosed brackets), ports with letters, paths with spaces and bad escapes, `#` twice
SCHEMES = (["http", "a", "A+b.c-1", "urn"], ["1a", "+a", "h t", "é", ""])
USERINFO = (["", "", "u@", "u:p@", "%4A@", ":@"], ["a@b@", "%g1@", "[u]@", "é@"])
HOSTS = (["h", "example.com", "1.2.3.4", "999.1.1.01", "", "%7e", "_~!$&'()*+,;=", "[::1]", "[::]",
          "[1:2:3:4:5:6:7:8]", "[::ffff:1.2.3.4]", "[::ffff:01.2.3.004]", "[1:2:3:4:5:6:1.2.3.4]", "[ABCD:ef01::]",
          "[v1.a]", "[vF.a:b]"],
         ["h%2", "h:i", "é", "[1:2:3:4:5:6:7:8:9]", "[1::2::3]", "[::ffff:256.2.3.4]", "[12345::]",
          "[fe80::1%25eth0]", "[V1.a]", "[v.a]", "[vg.a]", "[v1.]", "[v1.%41]", "[]", "[::1", "::1]", "[::1]]"])
PORTS = (["", "", ":", ":80"], [":8a", ":-1", "::80"])
PATHS = (["", "/", "/a", "//", "/a/b/", "a", "a/b", "a:b", "/%20", "/@:", "./a:b", "%7E"],
         [":b", "/%2", "/%zz", "/a b", "/é", "/[x]", "/a\\b", '/"'])
QUERIES = (["", "", "?", "?a=b&c", "?/?", "??", "?%aF"], ["?%4", "?[", "? ", "?é"])
FRAGMENTS = (["", "", "#", "#f", "#a/?", "#%41"], ["#a#b", "#%4", "#[", "# "])
URI_PIECES = (SCHEMES, USERINFO, HOSTS, PORTS, PATHS, QUERIES, FRAGMENTS)
URI_CHARS = "aZ09-._~!$&'()*+,;=:/?#[]@% \"\\\né"
URI_ALPHABET = sorted({p for pieces in URI_PIECES for side in pieces for p in side} | {*URI_CHARS, "//"})


def uri_like(rng: random.Random) -> str:
    """A URI, a relative reference or a network path built from the pieces above (half the time one
    of them a near-miss), then one time in five a character inserted, removed or replaced."""
    bad = rng.randrange(2 * len(URI_PIECES))
    scheme, userinfo, host, port, path, query, fragment = (rng.choice(p[k == bad]) for k, p in enumerate(URI_PIECES))
    form = rng.randrange(4)
    hier = "//" + userinfo + host + port + path if form % 2 == 0 else path
    text = (scheme + ":" if form < 2 else "") + hier + query + fragment
    if text and rng.random() < 0.2:
        i, edit = rng.randrange(len(text) + 1), rng.randrange(3)
        text = text[:i] + (rng.choice(URI_CHARS) if edit < 2 else "") + text[i + (edit > 0):]
    return text


def test_the_oracle_asserts_uri():
    """jsonschema asserts uri only with an optional package: rfc3986-validator (the `test` extra). If
    it is missing every string is a uri to jsonschema and the tests below would prove nothing; if
    rfc3987 is installed jsonschema prefers it, whose grammar the lowering does not follow."""
    import importlib.util
    assert importlib.util.find_spec("rfc3987") is None, "jsonschema would judge uri with rfc3987"
    for fmt in URI_FORMATS:
        judge = validator({"type": "string", "format": fmt})
        assert not judge.is_valid("not a uri") and judge.is_valid("http://example.com/a?b#c"), fmt
    assert not validator({"format": "uri"}).is_valid("relative/path")


@pytest.mark.parametrize("fmt", URI_FORMATS)
def test_uri_formats_get_jsonschemas_verdict_on_generated_strings(fmt, tmp_path):
    """Thousands of URIs and near-misses; the departure: a format's string is written without escapes
    (so "a:b\\n", valid to jsonschema's `$`, cannot be written)."""
    rng = random.Random(31)
    texts = [uri_like(rng) for _ in range(4000)] + ["", "a:b\n", "a:b\n\n", "x\n", "\nx"]
    judge = validator({"type": "string", "format": fmt})
    assert sum(map(judge.is_valid, texts)) > 800 and sum(not judge.is_valid(t) for t in texts) > 800
    assert_verdicts({"type": "string", "format": fmt}, texts, tmp_path, lambda s: bool(ESCAPED & set(s)))


@pytest.fixture(scope="module")
def uri_checkers(tmp_path_factory):
    return {fmt: checker_for({"type": "string", "format": fmt}, tmp_path_factory.mktemp(fmt))
            for fmt in URI_FORMATS}


@given(st.lists(st.sampled_from(URI_ALPHABET), max_size=8).map("".join))
def test_uri_formats_get_jsonschemas_verdict_on_pieces_in_any_order(uri_checkers, text):
    for fmt, check in uri_checkers.items():
        expected = validator({"type": "string", "format": fmt}).is_valid(text) and not ESCAPED & set(text)
        assert check.check_bytes(json.dumps(text, ensure_ascii=False).encode()).ok == expected, (fmt, text)


@pytest.mark.parametrize("fmt", URI_FORMATS)
def test_uri_formats_are_the_validators_language(fmt):
    """A proof beside the samples: the lowered regexp and rfc3986-validator's (its verbose regexps with
    comments and blanks dropped) have one language over strings without '"' (a format's strings hold
    none): neither meets the other's complement (DFA products, as the lexer builds the DFAs)."""
    import re

    import rfc3986_validator

    def plain(verbose: str) -> str:
        return re.sub(r"\s+", "", re.sub(r"(?<!\\)#.*", "", verbose))

    theirs = plain(rfc3986_validator.URI_RE)
    if fmt == "uri-reference":
        theirs = f"(?:{theirs}|{plain(rfc3986_validator.RELATIVE_REF_RE)})"
    judge, rng = validator({"type": "string", "format": fmt}), random.Random(5)
    for text in [uri_like(rng) for _ in range(2000)]:       # dropping blanks kept the regexp (but its `$`)
        assert (re.fullmatch(theirs, text) is not None) == (judge.is_valid(text) and not text.endswith("\n")), text
    ours = _FORMATS[fmt]
    assert not meets(f'"{ours}"', f'"(?!{theirs}")[^"]*"') and not meets(f'"{theirs}"', f'"(?!{ours}")[^"]*"')
    assert meets(f'"{ours.replace("|v[", "|[vV][")}"', f'"(?!{theirs}")[^"]*"')    # it sees a difference


def test_uri_formats_are_written_without_escapes(tmp_path):
    """The departure, as for every format: `\\/` (JSON's escape of `/`) and `\\u` escapes are not read."""
    check = checker_for({"type": "string", "format": "uri"}, tmp_path)
    assert check.check_bytes(b'"http://h/p?q#f"').ok
    assert not check.check_bytes(rb'"http:\/\/h\/p"').ok and not check.check_bytes(rb'"\u0068ttp://h"').ok


# -- format: hostname, duration -----------------------------------------------------------------

HOST_LABELS = (["a", "Z", "0", "9z", "a-b", "a--b", "xn--bcher-kva", "A" * 63, "7" * 63, "a" * 61 + "-1"],
               ["", "-a", "a-", "-", "a_b", "a b", "a" * 64, "a:b", "a/b", "é", "\u0661", "\u0131", "\u212a"])
HOST_CHARS = "aZ09-._ é\u0661\"\\\n"
HOST_ALPHABET = sorted({*HOST_LABELS[0], *HOST_LABELS[1], *HOST_CHARS, "a" * 50, "b" * 62, "."})
# (valid, near-misses): values (Decimal's spellings, "," for "."), values equal to zero, what may stand
# between the last date designator and T
DURATION_VALUES = (["1", "0", "12", "0.5", "1,5", ".5", ",0", "5.", "-0", "+1", "-2", "1e3", "0e9", "0E-2", "007"],
                   ["", "e", ".", "1e", "1..2", "--1", "1-", "+", "1,5.3", "1e2e3", " 1", "\u0661", "1_0"])
DURATION_ZEROS = ["0", "00", "0.0", ",0", "-0", "+0.", "0e5", ".0E-3"]
DURATION_DROPPED = ["", "", "", "2", "1,5", "1.5", "+-e", ",", "e", "2020-01-01", "20200101"]
DURATION_CHARS = "PYMDWHST01.,eE+- ptmé"
DURATION_ALPHABET = sorted({*DURATION_CHARS, *DURATION_VALUES[0], *DURATION_VALUES[1], "2020-01-01", "00:00:00",
                            "Z", "+01:00"})


def host_like(rng: random.Random) -> str:
    """One to five labels (half the time one a near-miss), a final dot one time in four, then one
    time in five a character inserted, removed or replaced."""
    n = rng.choice([1, 1, 2, 3, 4, 5])
    bad = rng.randrange(2 * n)
    text = ".".join(rng.choice(HOST_LABELS[k == bad]) for k in range(n)) + "." * (rng.random() < 0.25)
    if text and rng.random() < 0.2:
        i, edit = rng.randrange(len(text) + 1), rng.randrange(3)
        text = text[:i] + (rng.choice(HOST_CHARS) if edit < 2 else "") + text[i + (edit > 0):]
    return text


def long_hosts() -> list[str]:
    """Names of 249 to 256 characters, with and without a final dot, and labels of 61 to 64 characters."""
    out = []
    for total in range(249, 257):
        for width in (61, 62, 63, 64):
            labels = []
            while sum(map(len, labels)) + len(labels) < total:
                labels.append("x" * min(width, total - sum(map(len, labels)) - len(labels)))
            name = ".".join(labels)
            out += [name, name + ".", name[:-1] + "-", "9" + name[1:]]
    return out


def duration_like(rng: random.Random) -> str:
    """A duration built from designators in order with values (half the time one piece a near-miss:
    a bad value, two designators swapped, a lower-case letter, no `P`, a nonzero value before `W`),
    then one time in five a character inserted, removed or replaced."""
    date = "".join(c for c in "YMDW" if rng.random() < 0.4)
    time = "".join(c for c in "HMS" if rng.random() < 0.4)
    zeros = "W" in date and rng.random() < 0.7
    values = [rng.choice(DURATION_ZEROS if zeros and c != "W" else DURATION_VALUES[0]) for c in date + time]
    if rng.random() < 0.5 and values:
        k = rng.randrange(len(values))
        values[k] = rng.choice(DURATION_VALUES[1])
    letters = list(date + "T" + time)
    if rng.random() < 0.1 and len(letters) > 1:
        i = rng.randrange(len(letters) - 1)
        letters[i], letters[i + 1] = letters[i + 1], letters[i]
    if rng.random() < 0.1:
        i = rng.randrange(len(letters))
        letters[i] = letters[i].lower()
    date, time = "".join(letters).split("T", 1) if "T" in letters else ("".join(letters), "")
    text = rng.choice(["", "", "", "+", "-"]) + ("P" if rng.random() < 0.95 else rng.choice(["", "p", "T"]))
    text += "".join(v + c for v, c in zip(values, date))
    if time or rng.random() < 0.1:
        text += rng.choice(DURATION_DROPPED) + "T" + "".join(v + c for v, c in zip(values[len(date):], time))
    if text and rng.random() < 0.2:
        i, edit = rng.randrange(len(text) + 1), rng.randrange(3)
        text = text[:i] + (rng.choice(DURATION_CHARS) if edit < 2 else "") + text[i + (edit > 0):]
    return text


def format_departure(text: str) -> bool:
    """The departures: a format's string is written without escapes; hostname's form is ASCII (the package's
    `re` also takes Unicode's decimal digits, ı, ſ and the Kelvin sign; no duration holds non-ASCII)."""
    return bool(ESCAPED & set(text)) or not text.isascii()


def test_the_oracle_asserts_hostname_and_duration():
    """jsonschema asserts hostname and duration only with optional packages, fqdn and isoduration (the
    `test` extra): without them every string passes and the tests below would prove nothing."""
    import importlib.util
    for package in ("fqdn", "isoduration"):
        assert importlib.util.find_spec(package) is not None, f"{package} is missing: jsonschema would not check"
    host, duration = (validator({"type": "string", "format": fmt}) for fmt in ("hostname", "duration"))
    assert host.is_valid("example.com") and not host.is_valid("-not a host-")
    assert duration.is_valid("P1DT2H") and not duration.is_valid("one day")


@pytest.fixture(scope="module")
def format_checker(tmp_path_factory):
    """A format's checker, built once."""
    built = {}

    def get(fmt):
        if fmt not in built:
            built[fmt] = checker_for({"type": "string", "format": fmt}, tmp_path_factory.mktemp(fmt))
        return built[fmt]
    return get


def generated(fmt: str) -> list[str]:
    """4,000 values and near-misses, and hosts about the length limit (253 characters, a final dot beside)."""
    rng, like = random.Random(37), host_like if fmt == "hostname" else duration_like
    texts = [like(rng) for _ in range(4000)] + ["", "\n", "a\n", "P1D\n", "x", "\u0661.com"]
    if fmt == "hostname":
        return texts + long_hosts()
    return texts + ["P2020-01-01T00:00:00", "P20200101T120000Z", "P1T1H", "P1,5T1H", "P0Y0,0M-0e7D2W", "P1Y1W", "PT",
                    "P1YT", "P", "-P", "+P", "P1Y2T1H", "P1WT1H", "PT1H1W", "P1.5T1H", "P.T1H"]


@pytest.mark.parametrize("fmt", ["duration", pytest.param("hostname", marks=pytest.mark.slow)])
def test_hostname_and_duration_get_jsonschemas_verdict_on_generated_strings(fmt, format_checker):
    """Through the grammar (hostname's checker takes 15 s to build: the slow tier)."""
    texts, judge, check = generated(fmt), validator({"type": "string", "format": fmt}), format_checker(fmt)
    assert sum(map(judge.is_valid, texts)) > 800 and sum(not judge.is_valid(t) for t in texts) > 800
    for text in texts:
        expected = judge.is_valid(text) and not format_departure(text)
        assert check.check_bytes(json.dumps(text, ensure_ascii=False).encode()).ok == expected, (fmt, text)


def test_hostname_regexp_gets_jsonschemas_verdict_on_generated_strings():
    """The same strings against `_FORMATS["hostname"]` as Python reads it (the length lookahead sees the quote)."""
    import re
    ours, judge = re.compile(_FORMATS["hostname"] + '"'), validator({"type": "string", "format": "hostname"})
    for text in generated("hostname"):
        assert (ours.fullmatch(text + '"') is not None) == (judge.is_valid(text) and not format_departure(text)), text


@given(st.lists(st.sampled_from(DURATION_ALPHABET), max_size=8).map("".join))
def test_duration_gets_jsonschemas_verdict_on_pieces_in_any_order(format_checker, text):
    expected = validator({"type": "string", "format": "duration"}).is_valid(text) and not ESCAPED & set(text)
    assert format_checker("duration").check_bytes(json.dumps(text, ensure_ascii=False).encode()).ok == expected, text


@pytest.mark.slow
@given(st.lists(st.sampled_from(HOST_ALPHABET), max_size=8).map("".join))
def test_hostname_gets_jsonschemas_verdict_on_pieces_in_any_order(format_checker, text):
    expected = validator({"type": "string", "format": "hostname"}).is_valid(text) and not format_departure(text)
    assert format_checker("hostname").check_bytes(json.dumps(text, ensure_ascii=False).encode()).ok == expected, text


def test_duration_on_every_short_string():
    """Every string of up to 4 characters over characters standing for each kind isoduration tells
    apart (the lowered regexp, as Python reads it; the tests above take it through the grammar)."""
    import re
    ours, judge = re.compile(_FORMATS["duration"]), validator({"type": "string", "format": "duration"})
    for n in range(5):
        for text in map("".join, itertools.product("PTYMWS01,.e-Xt ", repeat=n)):
            assert (ours.fullmatch(text) is not None) == judge.is_valid(text), text


def test_duration_departs_only_past_decimals_range():
    """Values are read exactly; the package multiplies each by its sign in Python's default decimal
    context, where a value of 10^1000000 overflows (an exception, no verdict) and one of at most
    5e-1000027 rounds to zero (and may then stand before `W`)."""
    import decimal
    import re
    judge, ours = validator({"type": "string", "format": "duration"}), re.compile(_FORMATS["duration"])
    with pytest.raises(decimal.Overflow):
        judge.is_valid("P1e1000000Y")
    assert ours.fullmatch("P1e1000000Y") and judge.is_valid("P1e999999Y")
    assert judge.is_valid("P1e-1000030Y1W") and not ours.fullmatch("P1e-1000030Y1W")
    assert not judge.is_valid("P1e-1000000Y1W") and not ours.fullmatch("P1e-1000000Y1W")


def _differ(a: str, b: str) -> bool:
    """Some text matches exactly one of two terminal regexps (their DFAs as the lexer builds them,
    walked together; `meets` cannot take the complement of a regexp with lookarounds)."""
    import numpy as np

    from glrmask_cli.lexer.dfa import DEAD, EOF, START, determinize
    from glrmask_cli.lexer.nfa import build_nfa
    from glrmask_cli.lexer.syntax import parse_pattern
    da, db = (determinize(build_nfa(parse_pattern(r))) for r in (a, b))
    seen, frontier = {(START, START)}, [(START, START)]
    while frontier:
        sa, sb = frontier.pop()
        if da.close[sa, EOF] != db.close[sb, EOF]:
            return True
        for pair in map(tuple, np.unique(np.stack([da.trans[sa], db.trans[sb]]), axis=1).T.tolist()):
            if pair != (DEAD, DEAD) and pair not in seen:
                seen.add(pair)
                frontier.append(pair)
    return False


def fqdn_regexp() -> str:
    """fqdn's regexp read in ASCII, either case (as its IGNORECASE reads it on ASCII text), unanchored."""
    import fqdn
    theirs = fqdn.FQDN.PREFERRED_NAME_SYNTAX_REGEXSTR.removeprefix("^").removesuffix("$")
    return theirs.replace(r"[-A-Z\d]", "[-A-Za-z0-9]")


def test_hostname_labels_are_the_packages_language_on_ascii():
    """A proof beside the samples: the lowered regexp without its length lookahead and fqdn's regexp
    have one language over strings without '"' (ASCII: the departure)."""
    assert _FORMATS["hostname"].startswith("(?=")
    structure = _FORMATS["hostname"].split('")', 1)[1]          # ours without its length lookahead
    assert not _differ(f'"{structure}"', f'"{fqdn_regexp()}"')
    assert _differ(f'"{structure.replace("{0,61}", "{0,62}")}"', f'"{fqdn_regexp()}"')     # it sees a difference


@pytest.mark.slow
def test_hostname_is_the_packages_language_on_ascii():
    """The same with the package's length rule (at most 253 characters but a final dot, written as two
    lookaheads) before its regexp, and ours whole: two DFAs of some 27,000 states, 15 s."""
    length = r'(?![^"]{253}[^"]*[^".]")(?![^"]{255})'
    assert not _differ(f'"{_FORMATS["hostname"]}"', f'"{length}{fqdn_regexp()}"')


def test_duration_is_written_without_escapes(format_checker):
    """The departure, as for every format: `\\u0050` is not read as `P`."""
    check = format_checker("duration")
    assert check.check_bytes(b'"P1D"').ok and not check.check_bytes(rb'"\u00501D"').ok


def test_hostname_is_lowered_to_its_exact_form():
    """A `hostname` field is the regexp the tests above prove (its verdicts through a build: slow tier)."""
    grammar = json_schema_grammar({"properties": {"h": {"type": "string", "format": "hostname"}}})
    assert f'/"{_FORMATS["hostname"]}"/' in grammar


@pytest.mark.slow
def test_hostnames_exact_form_is_23814_dfa_states():
    """Labels of at most 63 characters within 253: the minimized DFA, as the lexer builds it (5 s)."""
    from glrmask_cli.lexer.scanner import _pattern_dfa
    from glrmask_cli.limits import DEFAULTS
    dfa = _pattern_dfa(f'"{_FORMATS["hostname"]}"', frozenset(), DEFAULTS.max_pattern_nfa_states,
                       DEFAULTS.max_pattern_dfa_states)
    assert dfa.trans.shape[0] == 23_814


# -- not ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("schema", [
    {"not": {"type": ["string", "null"]}},
    {"type": ["boolean", "null", "integer"], "not": {"enum": [True, None, "x"]}},
    {"enum": [{"a": 0}, {"a": False}, 1, 1.0, "x"], "not": {"enum": [{"a": False}, 1]}},
    {"not": {"type": "number"}, "anyOf": [{"type": "integer"}, {"type": "array", "maxItems": 1}]},
    {"type": "array", "items": {"type": "string", "not": {"const": "logs"}}},
])
def test_not_over_types_and_listed_values(schema, tmp_path):
    instances = [None, True, False, 0, 3, 1, 1.0, 2.5, "", "x", "logs", [], [1], ["logs"], ["a", "b"], {},
                 {"a": 0}, {"a": False}]
    integers = "integer" in schema.get("type", [])      # the departure: an integer is written without ".0"
    assert_verdicts(schema, instances, tmp_path, lambda i: integers and isinstance(i, float))


@pytest.mark.parametrize("schema, pointer", [
    ({"type": "string", "not": {"minLength": 2}}, "#/not"),
    ({"type": "integer", "not": {"const": 3}}, "#/not"),
    ({"type": "number", "not": {"type": "integer"}}, "#/not"),
    ({"type": "object", "not": {"const": {}}}, "#/not"),
])
def test_other_negations_are_refused(schema, pointer):
    assert refused_at(schema) == pointer


# -- numbers -----------------------------------------------------------------------------------

def plain_decimals() -> list[str]:
    out = set()
    for whole in ["0", "1", "2", "4", "10", "99", "100", "4294967295"]:
        for fraction in ["", ".0", ".00", ".05", ".1", ".25", ".3", ".333", ".5", ".50", ".99", ".999", ".000000001",
                         ".000000002", ".294967295", ".294967296", ".2949672951"]:
            out |= {whole + fraction, "-" + whole + fraction}
    return sorted(out)


def test_number_ranges_at_decimal_bounds_are_exact():
    import re
    bounds = [None, Decimal("-2.5"), Decimal("-0.25"), Decimal(0), Decimal("1E-9"), Decimal("0.3"), Decimal("0.333"),
              Decimal("1"), Decimal("2.05"), Decimal("4.294967295"), Decimal("99.99")]
    for low, high in itertools.product(bounds, bounds):
        for low_exclusive, high_exclusive in itertools.product([False, True], repeat=2):
            if (low is None and low_exclusive) or (high is None and high_exclusive):
                continue
            pattern = number_range(low, low_exclusive, high, high_exclusive)
            for text in plain_decimals():
                value = Decimal(text)
                inside = ((low is None or (value > low if low_exclusive else value >= low))
                          and (high is None or (value < high if high_exclusive else value <= high)))
                assert (pattern is not None and re.fullmatch(pattern, text) is not None) == inside, \
                    (low, low_exclusive, high, high_exclusive, text)
                if inside:      # leftmost-first matching must not stop early (the lexer's rule)
                    assert re.match(pattern, text + ",").group() == text


@pytest.mark.parametrize("schema", [
    {"type": "number", "minimum": 1e-09, "maximum": 4.294967295},
    {"type": "number", "exclusiveMinimum": 0.3, "exclusiveMaximum": 2.05},
    {"type": ["number", "null"], "minimum": -0.25},
    {"type": "integer", "minimum": 0.5, "maximum": 99.99},
])
def test_decimal_bounds_get_jsonschemas_verdict(schema, tmp_path):
    """Plain decimals (the departure: bounded numbers are written without exponents)."""
    integers = schema["type"] == "integer"    # the departures: no exponent; integers without a fraction
    assert_verdicts(schema, [json.loads(t) for t in plain_decimals()] + [None, 1e300], tmp_path,
                    lambda x: isinstance(x, float) and ("e" in json.dumps(x) or integers))


@pytest.mark.parametrize("divisor", [1, 2, 3, 4, 5, 6, 8, 10, 25, 100])
def test_integer_multiples_get_jsonschemas_verdict(divisor, tmp_path):
    schema = {"type": "integer", "multipleOf": divisor}
    assert_verdicts(schema, list(range(-450, 451)) + [12.5, "3"], tmp_path)


@pytest.mark.parametrize("schema", [{"type": "number", "multipleOf": 0.01}, {"type": "number", "multipleOf": 3},
                                    {"type": "integer", "multipleOf": 0.5}])
def test_number_multiples_are_exact_in_decimal(schema, tmp_path):
    """Against exact arithmetic: jsonschema divides floats for a decimal divisor (0.07 / 0.01 is
    7.000000000000001, so it rejects 0.07), the documented departure from that package."""
    check = checker_for(schema, tmp_path)
    divisor = Fraction(str(schema["multipleOf"]))
    texts = [f"{sign}{whole}{fraction}" for sign in ("", "-") for whole in (0, 3, 7, 12, 99)
             for fraction in ("", ".0", ".07", ".070", ".5", ".50", ".25", ".001", ".10")]
    for text in texts:
        value = Fraction(text)
        expected = (value / divisor).denominator == 1 and (schema["type"] == "number" or "." not in text)
        assert check.check_bytes(text.encode()).ok == expected, (schema, text)


def test_multiples_that_are_not_written_are_refused():
    assert multiples(Decimal(7), True) is None and multiples(Decimal("0.25"), False) is None
    assert refused_at({"type": "integer", "multipleOf": 7}) == "#/multipleOf"
    assert refused_at({"type": "number", "multipleOf": 0.25}) == "#/multipleOf"
    assert refused_at({"type": "integer", "multipleOf": 2, "minimum": 0}) == "#/multipleOf"


# -- oneOf, allOf, empty languages -------------------------------------------------------------

@pytest.mark.parametrize("schema", [
    {"type": "object", "oneOf": [     # a required discriminator with disjoint enums
        {"required": ["type"], "properties": {"type": {"enum": ["add"]}, "n": {"type": "integer"}}},
        {"required": ["type"], "properties": {"type": {"enum": ["remove"]}, "n": {"type": "integer"}}}]},
    {"oneOf": [                       # one option requires what the other forbids
        {"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a", "b"], "additionalProperties": False},
        {"type": "object", "properties": {"a": {}}, "required": ["a"], "additionalProperties": False}]},
    {"oneOf": [{"type": "string", "pattern": "^https?://"}, {"type": "string", "pattern": "^git://"},
               {"type": "object", "required": ["p"], "properties": {"p": {"type": "string"}}},
               {"type": "object", "required": ["p"], "properties": {"p": {"type": "object"}}}]},
    {"oneOf": [{"$ref": "#/$defs/s"}, {"type": "array", "items": {"$ref": "#/$defs/s"}}],
     "$defs": {"s": {"oneOf": [{"type": "string"}, {"type": "object"}]}}},
])
def test_oneof_over_provably_disjoint_options_is_anyof(schema, tmp_path):
    instances = [{"type": "add"}, {"type": "add", "n": 1}, {"type": "remove", "n": "x"}, {"type": "other"}, {},
                 {"a": 1}, {"a": 1, "b": 2}, {"a": 1, "c": 2}, "http://x", "https://x", "git://x", "ftp://x",
                 {"p": "s"}, {"p": {}}, {"p": 1}, ["s", {}], [1], "s", 3]
    assert_verdicts(schema, instances, tmp_path, lambda i: isinstance(i, dict) and not in_schema_order(i, schema))


@pytest.mark.parametrize("schema, pointer", [
    ({"oneOf": [{"type": "object", "properties": {"k": {}}, "additionalProperties": False},
                {"type": "object", "properties": {"ks": {}}, "additionalProperties": False}]}, "#/oneOf/1"),
    ({"oneOf": [{"type": "string", "pattern": "^a"}, {"type": "string", "pattern": "b$"}]}, "#/oneOf/1"),
    ({"allOf": [{"properties": {"a": {}}}, {"additionalProperties": False}]}, "#/allOf/1/additionalProperties"),
    ({"allOf": [{"prefixItems": [{}]}, {"items": {"type": "string"}}]}, "#/allOf/1/items"),
    ({"type": "object", "required": ["m"], "properties": {"m": {"type": "object", "enum": ["x"]}}}, "#"),
])
def test_what_cannot_be_proved_exact_is_refused(schema, pointer):
    assert refused_at(schema) == pointer


def test_a_property_no_value_meets_cannot_appear(tmp_path):
    schema = {"type": "object", "properties": {"mode": {"type": "object", "enum": ["TX"]}, "n": {"type": "integer"}},
              "additionalProperties": False}
    assert_verdicts(schema, [{}, {"n": 1}, {"mode": "TX"}, {"mode": {}}, {"mode": "TX", "n": 1}], tmp_path)


def test_keywords_that_ask_nothing_are_ignored(tmp_path):
    plain = json_schema_grammar({"type": "object", "properties": {"a": {"type": "string"}}})
    for extra in [{"dependencies": {}}, {"uniqueItems": False}, {"minProperties": 0}, {"then": {"required": ["a"]}}]:
        assert json_schema_grammar({"type": "object", "properties": {"a": {"type": "string"}}, **extra}) == plain
    tags = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "array", "items": {"type": "string"},
            "additionalItems": False}       # beside an items schema, additionalItems asks nothing
    assert_verdicts(tags, [[], ["a", "b"], ["a", 1]], tmp_path)
