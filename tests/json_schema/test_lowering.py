"""JSON Schema lowering (docs/json-schema.md), judged by the `jsonschema` package: every verdict of
the lowered grammar on small enumerated instances equals jsonschema's, up to the documented
property-order departure; masks of a built schema equal brute force; random walks end in
instances jsonschema accepts; unsupported keywords are one-line errors with their JSON pointer."""

from __future__ import annotations

import functools
import itertools
import json
import random
import re

import jsonschema
import pytest
from click.testing import CliRunner

from devtools.brute_force import random_walk, sampled_states
from devtools.builds import built
from glrmask_cli.api import json_schema_grammar
from glrmask_cli.check import load_checker
from glrmask_cli.cli import cli
from glrmask_cli.json_schema import SchemaUnsupported
from glrmask_cli.report import mask_cost
from glrmask_cli.schema_numbers import integer_range, number_range
from glrmask_cli.schema_pattern import content_regexp
from tests.support.masks import assert_masks_equal

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 6},
        "age": {"type": "integer", "minimum": 0, "exclusiveMaximum": 150},
        "tags": {"type": "array", "items": {"enum": ["a", "b", None]}, "minItems": 1, "maxItems": 2},
        "born": {"type": "string", "format": "date"},
    },
    "required": ["name"],
    "additionalProperties": {"type": "boolean"},
}


def checker_for(schema, tmp_path, whitespace="flexible", strict=False):
    path = tmp_path / "schema.lark"
    path.write_text(json_schema_grammar(schema, whitespace=whitespace, strict=strict))
    return load_checker(path)


def in_schema_order(instance: dict, schema: dict) -> bool:
    """The departure: declared properties come in schema order, other keys after them."""
    order = list(schema.get("properties", {}))
    keys = list(instance)
    declared = [k for k in keys if k in order]
    return declared == sorted(declared, key=order.index) and keys[:len(declared)] == declared


def test_integer_ranges_are_exact_and_match_whole_numbers():
    import re
    for low, high in [(0, 32767), (3, 120), (-50, 7), (None, -3), (5, None), (-12, None), (99, 101), (0, 0)]:
        pattern = re.compile(integer_range(low, high))
        for n in range(-2000, 40000, 7):
            inside = (low is None or n >= low) and (high is None or n <= high)
            assert (pattern.fullmatch(str(n)) is not None) == inside, (low, high, n)
            if inside:      # leftmost-first matching must not stop early (the lexer's rule)
                assert pattern.match(str(n)).group() == str(n), (low, high, n)


def plain_decimals() -> list[str]:
    """JSON numbers without exponents around small integers: signs, -0, fractions with zeros."""
    out = {str(i) for i in range(-130, 131)} | {"-0", "-0.0", "0.0", "-0.000", "0.000001", "-0.000001"}
    for i in range(0, 130, 3):
        out |= {f"{sign}{i}{frac}" for sign in ("", "-") for frac in (".0", ".00", ".5", ".999", ".001", ".10")}
    return sorted(out)


def test_number_ranges_are_exact_in_plain_decimal():
    import re
    texts = plain_decimals()
    bounds = [None, -100, -3, -1, 0, 1, 3, 10, 99, 100, 101]
    for low, high in itertools.product(bounds, bounds):
        for low_exclusive, high_exclusive in itertools.product([False, True], repeat=2):
            if (low is None and low_exclusive) or (high is None and high_exclusive):
                continue
            pattern = number_range(low, low_exclusive, high, high_exclusive)
            for text in texts:
                value = json.loads(text)
                inside = ((low is None or (value > low if low_exclusive else value >= low))
                          and (high is None or (value < high if high_exclusive else value <= high)))
                assert (pattern is not None and re.fullmatch(pattern, text) is not None) == inside, \
                    (low, low_exclusive, high, high_exclusive, text)
                if inside:      # leftmost-first matching must not stop early (the lexer's rule)
                    assert re.match(pattern, text).group() == text


@pytest.mark.parametrize("schema", [
    {"type": "number", "minimum": 0, "exclusiveMaximum": 100},
    {"type": "number", "exclusiveMinimum": -3, "maximum": 3.0},
    {"type": "number", "maximum": -1},
    {"type": ["number", "null"], "minimum": 1},
])
def test_bounded_numbers_get_jsonschemas_verdict_but_no_exponent(schema, tmp_path):
    check = checker_for(schema, tmp_path)
    validator = jsonschema.Draft202012Validator(schema)
    for text in plain_decimals() + ["1e2", "-1e0", "2.5E-1", "null"]:
        expected = validator.is_valid(json.loads(text)) and "e" not in text.lower()   # the departure
        assert check.check_bytes(text.encode()).ok == expected, (schema, text)


FORMAT_SAMPLES = {
    "ipv6": ["::", "::1", "1::", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7::", "::2:3:4:5:6:7:8", "1::2:3:4:5:6:7:8",
             "::ffff:1.2.3.4", "1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:1.2.3.4", "::1.2.3.4", "1.2.3.4", "::01.2.3.4",
             "12345::", "fe80::1%eth0", ":::", "1::2::3", "::256.1.1.1", "ABCD:ef01::", "1:2:3:4:5:6:7",
             "1:2:3:4:5:6:7:8:9", ":1::", "0:0:0:0:0:0:0:0", "1:2:3:4:5:6::1.2.3.4", "g::", ""],
    "email": ["a@b", "@", "no at", "x@y@z", "", "a.b+c@d-e.f", " @ "],
    "date": ["2024-02-29", "2024-13-01", "24-01-01", "2024-01-32", "2024-1-01", "0000-01-01", "0001-01-01",
             "0010-01-01", "0100-12-31", "9999-12-31"],
    "date-time": ["0000-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "2024-02-29t12:30:00.5+01:00", "2024-02-29T12:30Z"],
}


@pytest.mark.parametrize("fmt", sorted(FORMAT_SAMPLES))
def test_formats_get_jsonschemas_verdict(fmt, tmp_path):
    """Each format against jsonschema's format checker (ipv6: Python's ipaddress), on samples and,
    for ipv6, on random colon-separated pieces."""
    schema = {"type": "string", "format": fmt}
    check = checker_for(schema, tmp_path)
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    samples = list(FORMAT_SAMPLES[fmt])
    if fmt == "ipv6":
        rng = random.Random(5)
        pieces = ["", "0", "1", "ab", "ffff", "12345", "1.2.3.4", "01.2.3.4"]
        samples += [":".join(rng.choice(pieces) for _ in range(rng.randrange(1, 10))) for _ in range(3000)]
    for text in samples:
        assert check.check_bytes(json.dumps(text).encode()).ok == validator.is_valid(text), (fmt, text)


@pytest.mark.parametrize("required", [["name"], ["age", "born"], []])
def test_objects_get_jsonschemas_verdict_on_every_key_subset_and_order(required, tmp_path):
    schema = dict(PERSON, required=required)
    check = checker_for(schema, tmp_path)
    values = {"name": ["", "bob", "toolong!"], "age": [0, 149, 150, -1, 1.5], "tags": [[], ["a"], ["b", None],
              ["a", "a", "a"], ["c"]], "born": ["2024-02-29", "2024-13-01"], "extra": [True, 3]}
    rng = random.Random(3)
    checked = 0
    for n in range(len(values) + 1):
        for keys in itertools.permutations(values, n):
            for _ in range(3):
                instance = {k: rng.choice(values[k]) for k in keys}
                valid = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()) \
                    .is_valid(instance)
                expected = valid and in_schema_order(instance, schema)
                for text in (json.dumps(instance), json.dumps(instance, indent=2),
                             json.dumps(instance, separators=(",", ":"))):
                    assert check.check_bytes(text.encode()).ok == expected, (text, valid)
                checked += 1
    assert checked > 900


def test_a_masks_walk_does_not_grow_with_the_members_written(tmp_path):
    """Objects (and arrays with maxItems) are lowered left-nested: however many members are written,
    the stack holds one, so the longest walk down it (what `glrmask inspect` reports) is the same for
    4 and for 24 optional properties (a chain with a stack level per member made a token like `}}`
    read them all: 82-116 states on MaskBench's larger objects, 30-90 us masks)."""
    def longest_walk(schema: dict, name: str) -> int:
        path = tmp_path / f"{name}.lark"
        path.write_text(json_schema_grammar(schema))
        return int(mask_cost(built(path).artifact)["max_walk_depth"])

    member = {"type": "object", "properties": {"v": {"type": "integer"}}}
    walks = [longest_walk({"type": "object", "additionalProperties": False,
                           "properties": {f"k{i}": member for i in range(n)}}, f"props{n}") for n in (4, 24)]
    assert walks[0] == walks[1], walks
    # arrays whose positions are spelled out (maxItems) likewise
    walks = [longest_walk({"type": "array", "items": member, "maxItems": n}, f"items{n}") for n in (4, 40)]
    assert walks[0] == walks[1], walks


@pytest.mark.parametrize("schema", [
    {"items": {"type": "boolean"}, "minItems": 2, "maxItems": 4},
    {"prefixItems": [{"type": "integer"}, {"type": "string"}], "items": {"type": "boolean"}, "minItems": 1},
    {"prefixItems": [{"type": "integer"}, {"type": "string"}], "maxItems": 1},
    {"prefixItems": [{"type": "integer"}], "items": False},
    {"items": {"type": "integer"}, "minItems": 3},
    {"items": {"type": "integer"}, "maxItems": 0},
])
def test_arrays_get_jsonschemas_verdict_on_every_length(schema, tmp_path):
    schema = dict(schema, type="array")
    check = checker_for(schema, tmp_path)
    validator = jsonschema.Draft202012Validator(schema)
    rng = random.Random(5)
    for length in range(7):
        for _ in range(12):
            instance = [rng.choice([True, 7, "s", None]) for _ in range(length)]
            for text in (json.dumps(instance), json.dumps(instance, separators=(",", ":"))):
                assert check.check_bytes(text.encode()).ok == validator.is_valid(instance), text


STRICT = [  # (schema, the schema jsonschema judges strict mode by: what it leaves out, written false)
    # an object declaring members is closed; one declaring none ("o") stays open, as `{}` does
    ({"type": "object", "properties": {"a": {"type": "integer"}, "o": {"type": "object"},
                                       "z": {"type": "object", "properties": {}}}},
     {"type": "object", "additionalProperties": False,
      "properties": {"a": {"type": "integer"}, "o": {"type": "object"},
                     "z": {"type": "object", "properties": {}, "additionalProperties": False}}}),
    ({"type": "object", "patternProperties": {"^x": {"type": "integer"}}},
     {"type": "object", "patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": False}),
    ({"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "boolean"}},
     {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "boolean"}}),
    ({"type": "array", "prefixItems": [{"type": "integer"}]},
     {"type": "array", "prefixItems": [{"type": "integer"}], "items": False}),
    ({"type": "array", "items": {"type": ["integer", "object"], "properties": {"x": {"type": "integer"}}}},
     {"type": "array", "items": {"type": ["integer", "object"], "properties": {"x": {"type": "integer"}},
                                 "additionalProperties": False}}),
    ({"type": "array", "items": {"type": ["integer", "object"]}},
     {"type": "array", "items": {"type": ["integer", "object"]}}),
]


@pytest.mark.parametrize("schema, closed", STRICT)
def test_strict_leaves_out_what_the_schema_does_not_declare(schema, closed, tmp_path):
    """docs/json-schema.md, "Strict": an absent additionalProperties, or items after prefixItems,
    reads as false (an explicit one stays); without strict they read as the specification says."""
    strict, lax = checker_for(schema, tmp_path, strict=True), checker_for(schema, tmp_path)
    closed_validator, validator = jsonschema.Draft202012Validator(closed), jsonschema.Draft202012Validator(schema)
    values = [1, True, None, {}, {"x": 2}, {"y": 3}, [3]]
    instances = [{}, *({k: v} for k in ("a", "o", "z") for v in values), {"a": 1, "z": True}, {"a": 1, "o": {}},
                 *([v] for v in values), [1, 2], [1, {"x": 1}], []]
    differ = 0
    for instance in instances:
        text = json.dumps(instance).encode()
        assert strict.check_bytes(text).ok == closed_validator.is_valid(instance), instance
        assert lax.check_bytes(text).ok == validator.is_valid(instance), instance
        differ += closed_validator.is_valid(instance) != validator.is_valid(instance)
    assert differ > 0 or schema == closed


def test_strict_is_a_schema_option_on_the_command_line(tmp_path):
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"a": {"type": "integer"}}}))
    good, extra = tmp_path / "good.json", tmp_path / "extra.json"
    good.write_text('{"a": 1}')
    extra.write_text('{"a": 1, "b": 2}')
    runner = CliRunner()
    assert runner.invoke(cli, ["check", str(schema), str(good), str(extra)]).exit_code == 0
    result = runner.invoke(cli, ["check", "--strict", str(schema), str(good), str(extra)])
    assert result.exit_code == 1 and f"{extra}: rejected" in result.output and f"{good}: ok" in result.output
    lark = tmp_path / "g.lark"
    lark.write_text('start: "a"\n')
    result = runner.invoke(cli, ["check", "--strict", str(lark), str(good)])
    assert result.exit_code == 2 and "--strict is for a JSON Schema" in result.output


@pytest.mark.parametrize("array", [{"minItems": 4, "maxItems": 3},
                                   {"prefixItems": [{"type": "integer"}], "items": False, "minItems": 2}])
def test_more_items_required_than_allowed_admit_no_array(array, tmp_path):
    schema = {"anyOf": [dict(array, type="array"), {"type": "null"}]}
    check = checker_for(schema, tmp_path)
    for text in ("[]", "[1]", "[1, 2]", "[1, 2, 3]", "[1, 2, 3, 4]"):
        assert not check.check_bytes(text.encode()).ok, text
    assert check.check_bytes(b"null").ok


def test_whitespace_is_flexible_between_tokens_only_or_none_when_compact(tmp_path):
    flexible, compact = checker_for(PERSON, tmp_path), checker_for(PERSON, tmp_path, "compact")
    assert flexible.check_bytes(b'{ "name" :\n"x" ,\t"age": 3 }').ok
    assert not flexible.check_bytes(b' {"name": "x"}').ok and not flexible.check_bytes(b'{"name": "x"} ').ok
    assert compact.check_bytes(b'{"name":"x","tags":["a"]}').ok
    assert not compact.check_bytes(b'{"name": "x"}').ok


def test_refs_recursion_anyof_const_and_tuples(tmp_path):
    tree = {"type": "object", "properties": {"v": {"const": {"k": [1, "x"]}},
                                             "kids": {"type": "array", "items": {"$ref": "#/$defs/tree"}}},
            "additionalProperties": False}
    pair = {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "null"}], "items": False}
    schema = {"$defs": {"tree": tree}, "anyOf": [{"$ref": "#/$defs/tree"}, pair]}
    check = checker_for(schema, tmp_path)
    validator = jsonschema.Draft202012Validator(schema)
    for instance in [{}, {"kids": [{"kids": [{}]}, {"v": {"k": [1, "x"]}}]}, {"v": {"k": [1]}}, [1, None], [1],
                     [1, None, 2], {"kids": [{"x": 1}]}, "s", [None, 1]]:
        assert check.check_bytes(json.dumps(instance).encode()).ok == validator.is_valid(instance), instance


@pytest.mark.parametrize("pattern", ["^[a-z]+$", "b", "^a", "1$", "^(a|b1)*-?$", r"^\d{2}$", r"\w", r"^[^a]*$",
                                     r"^.$", r"\s", r"^[A-Z_]+\.?$", "^$", "^a$|^b1$", "(^a|b$)", "Z|^-"])
def test_patterns_get_jsonschemas_verdict_on_every_short_string(pattern, tmp_path):
    """Every string of up to 3 characters over an alphabet with characters JSON escapes: accepted
    iff jsonschema accepts it and it needs no escape (the documented departure)."""
    schema = {"type": "string", "pattern": pattern}
    check = checker_for(schema, tmp_path)
    validator = jsonschema.Draft202012Validator(schema)
    for n in range(4):
        for chars in itertools.product(["a", "b", "1", "-", " ", "\u00e9", '"', "\\", "\n", "Z", "_", "."], repeat=n):
            text = "".join(chars)
            expected = validator.is_valid(text) and not any(c in text for c in '"\\\n')
            assert check.check_bytes(json.dumps(text, ensure_ascii=False).encode()).ok == expected, (pattern, text)


@pytest.mark.parametrize("category", [r"\d", r"\w", r"\s", r"\D", r"\W", r"\S"])
def test_pattern_classes_hold_the_code_points_pythons_re_puts_in_them(category):
    """The content regexp of `^C$` for \\d, \\w, \\s and their complements matches the same code
    points as Python's `re` does with the class, over every code point JSON writes unescaped (runs
    of each found by `re` scanning a string of them all; the escaped ones: the short-string test)."""
    plain = _unescaped_code_points()
    ours = [match.span() for match in re.finditer(f"(?:{content_regexp(f'^{category}$')})+", plain)]
    theirs = [match.span() for match in re.finditer(f"{category}+", plain)]
    assert ours == theirs, category


@functools.cache
def _unescaped_code_points() -> str:
    """Every code point JSON writes unescaped, in order."""
    return "".join(chr(code) for code in range(0x20, 0x110000)
                   if chr(code) not in '"\\' and not 0xD800 <= code <= 0xDFFF)


@pytest.mark.parametrize("schema, pointer", [
    ({"type": "string", "pattern": "^(a)\\1$"}, "#/pattern"),
    ({"properties": {"a": {"not": {"minLength": 1}}}}, "#/properties/a/not"),
    ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, "#/oneOf/1"),
    ({"type": "array", "items": {"uniqueItems": True}}, "#/items/uniqueItems"),
    ({"type": "number", "minimum": True}, "#/minimum"),
    ({"$ref": "https://example.com/x.json"}, "#/$ref"),
    ({"$ref": "#anchor"}, "#/$ref"),
    ({"allOf": [{"type": "string"}, {"type": "integer"}]}, "#/allOf/1/type"),
])
def test_unsupported_keywords_are_errors_naming_their_pointer(schema, pointer):
    with pytest.raises(SchemaUnsupported) as info:
        json_schema_grammar(schema)
    assert str(info.value).startswith(pointer + ": ")


def test_literals_and_keys_with_quotes_and_backslashes(tmp_path):
    """Lark's loader reads `\\"` in a regexp as an escaped quote: such texts must survive it."""
    schema = {"type": "object", "properties": {'q"k': {"enum": ['a"b', "c\\", 'd\\"']}}, "additionalProperties": {}}
    check = checker_for(schema, tmp_path)
    validator = jsonschema.Draft202012Validator(schema)
    for instance in [{'q"k': 'a"b'}, {'q"k': "c\\"}, {'q"k': 'd\\"'}, {'q"k': "ab"}, {'q"k': 'd"'}, {"q": 1},
                     {'q"k': "c\\", 'x"': 2}]:
        text = json.dumps(instance)
        assert check.check_bytes(text.encode()).ok == validator.is_valid(instance), text


def test_fractional_integer_bounds_keep_the_integers_inside(tmp_path):
    schema = {"type": "integer", "exclusiveMinimum": 2.5, "maximum": 7.9, "minimum": -4}
    check = checker_for(schema, tmp_path)
    validator = jsonschema.Draft202012Validator(schema)
    for n in range(-10, 12):
        assert check.check_bytes(str(n).encode()).ok == validator.is_valid(n), n


def test_rejections_name_what_the_schema_expects(tmp_path):
    """Generated terminals are named after what they are, so a rejection reads in the schema's terms."""
    check = checker_for(PERSON, tmp_path)
    assert "expected LIT_NAME" in check.check_bytes(b'{"nam": "x"}').reason
    assert "INT_0_TO_149" in check.check_bytes(b'{"name": "x", "age": 1500}').reason
    assert "LIT_A, LIT_B, NULL" in check.check_bytes(b'{"name": "x", "tags": ["c"]}').reason


def test_annotations_and_vendor_keywords_are_ignored():
    plain = json_schema_grammar({"type": "integer"})
    assert json_schema_grammar({"type": "integer", "title": "t", "x-vendor": 1, "examples": [1]}) == plain


def test_masks_equal_brute_force_and_walks_end_in_valid_instances(tmp_path):
    path = tmp_path / "person.lark"
    path.write_text(json_schema_grammar(PERSON))
    b = built(path, "small-gpt2")
    documents = [json.dumps(d).encode() for d in [{"name": "al", "age": 42, "tags": ["a", None]},
                                                  {"name": "z", "born": "2020-01-31", "x": False}]]
    assert_masks_equal(b, sampled_states(b, documents, 30, seed=5))
    # walks on a closed, compact variant (free keys and whitespace make walks long, not different)
    closed = dict(PERSON, additionalProperties=False)
    compact = tmp_path / "closed.lark"
    compact.write_text(json_schema_grammar(closed, whitespace="compact"))
    b = built(compact, "small-gpt2")
    validator = jsonschema.Draft202012Validator(closed, format_checker=jsonschema.FormatChecker())
    rng, ended = random.Random(8), 0
    for _ in range(20):
        matcher = b.artifact.matcher()
        tokens, how = random_walk(matcher, rng, 200, 30, b.artifact.eos_token_ids)
        if how == "eos":
            ended += 1
            assert validator.is_valid(json.loads(b.vocab.decode_bytes(tokens))), b.vocab.decode_bytes(tokens)
    assert ended >= 10


def test_cli_builds_a_schema_and_prints_its_grammar(tmp_path):
    schema = tmp_path / "person.json"
    schema.write_text(json.dumps(PERSON))
    runner = CliRunner()
    shown = runner.invoke(cli, ["build", str(schema), "--emit-lark"])
    assert shown.exit_code == 0 and shown.output == json_schema_grammar(PERSON)
    out = tmp_path / "person.glrm"
    result = runner.invoke(cli, ["build", str(schema), "--tokenizer", "gpt2", "-o", str(out), "--no-cache"])
    assert result.exit_code == 0 and out.stat().st_size > 0, result.output
    bad = tmp_path / "bad.json"
    bad.write_text('{"type": "string", "not": {"pattern": "a"}}')
    failed = runner.invoke(cli, ["build", str(bad), "-o", str(tmp_path / "bad.glrm")])
    assert failed.exit_code == 1 and "#/not: not is supported over type, enum and const only" in failed.output
    assert not (tmp_path / "bad.glrm").exists()
    misuse = runner.invoke(cli, ["build", "grammars/json.lark", "--emit-lark"])
    assert misuse.exit_code == 2


def test_check_takes_a_schema(tmp_path):
    schema, good, bad = tmp_path / "person.json", tmp_path / "good.txt", tmp_path / "bad.txt"
    schema.write_text(json.dumps(PERSON))
    good.write_text('{"name": "ann", "age": 7}')
    bad.write_text('{"name": "ann", "age": 150}')
    result = CliRunner().invoke(cli, ["check", str(schema), str(good), str(bad)])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0].endswith(": ok") and "rejected at byte 25" in lines[1]   # `15` is a prefix of a valid age
