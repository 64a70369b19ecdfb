"""patternProperties, not, multipleOf, decimal bounds, oneOf proofs, strings under several keywords
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

from glrmask_cli.api import json_schema_grammar
from glrmask_cli.json_schema import SchemaUnsupported
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
