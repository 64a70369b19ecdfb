"""Build limits as a user meets them: a build that hits one fails with one line naming the limit and
the `--limit NAME=VALUE` that raises it, and following that advice makes the build succeed;
`--limit` with an unknown name or a bad value is a usage error listing the valid names. Also: every
limit the compiler raises is a `BuildLimits` field under the same name, and the docs list them all."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from devtools.builds import JSON_GRAMMAR, built
from glrmask_cli.cli import cli
from glrmask_cli.limits import DEFAULTS, BuildLimits, describe

ROOT = Path(__file__).resolve().parents[2]

# limit -> (grammar text, or None for json.lark; extra build options): each build hits the limit at
# --limit NAME=2 and builds at the default.
CASES = {
    "max_pattern_nfa_states": ('start: A\nA: /a{1,40}/\n', []),
    "max_pattern_dfa_states": ('start: A\nA: /[ab]*a[ab][ab][ab][ab]/\n', []),
    "max_lexer_states": (None, []),
    "max_normalized_symbols": ('start: e\ne: "-" e | "!" e | "(" e ")" | "1"\n', []),   # right recursion
    "max_epsilon_variants": ('start: o o o o "e"\no: "a" |\n', []),      # 4 nullable symbols: 16 copies
    "max_effect_graph_nodes": (None, []),
    "max_read_depth": (None, []),
    "max_nfa_nodes": (None, ["--layout", "one"]),
    "max_dwa_states": (None, ["--layout", "one"]),
    "max_token_paths": (None, []),     # json.lark x gpt2: up to 4 paths from one lexer state
}
ADVICE = re.compile(r"raise it with --limit (\w+)=(\d+)$")


@pytest.fixture()
def runner():
    return CliRunner()


def _grammar(tmp_path: Path, text: str | None) -> Path:
    if text is None:
        return JSON_GRAMMAR
    path = tmp_path / "g.lark"
    path.write_text(text)
    return path


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_exceeded_limit_names_its_option_and_raising_it_builds(runner, tmp_path, name):
    text, options = CASES[name]
    grammar, out = _grammar(tmp_path, text), tmp_path / "out.glrm"
    value, tries = 2, 0
    while True:
        result = runner.invoke(cli, ["build", str(grammar), "-o", str(out), "-q", *options,
                                     "--limit", f"{name}={value}"])
        if result.exit_code == 0:
            break
        assert result.exit_code == 1, result.output
        (line,) = result.output.strip().splitlines()
        assert line.startswith("Error: ") and f"limit {name}={value} exceeded" in line, line
        advised = ADVICE.search(line)
        assert advised and advised[1] == name and int(advised[2]) > value, line
        assert not out.exists()
        value, tries = int(advised[2]), tries + 1     # follow the advice
        assert tries < 24, line
    assert tries >= 1, "the first value did not hit the limit: the case tests nothing"
    assert out.exists() and value <= getattr(DEFAULTS, name)     # the default builds it too


def test_check_takes_the_same_limits(runner, tmp_path):
    grammar = _grammar(tmp_path, CASES["max_epsilon_variants"][0])
    doc = tmp_path / "doc.txt"
    doc.write_text("aae")
    failed = runner.invoke(cli, ["check", str(grammar), str(doc), "--limit", "max_epsilon_variants=4"])
    assert failed.exit_code == 1 and "--limit max_epsilon_variants=8" in failed.output
    ok = runner.invoke(cli, ["check", str(grammar), str(doc), "--limit", "max_epsilon_variants=16"])
    assert ok.exit_code == 0 and ok.output.strip() == f"{doc}: ok", ok.output


@pytest.mark.parametrize("argument, fragment", [
    ("nope=1", "unknown limit 'nope'"),
    ("max_dwa_states", "expected NAME=VALUE"),
    ("max_dwa_states=lots", "must be an integer"),
    ("max_dwa_states=0", "at least 1"),
    ("max_rhs_length=1", "at least 2"),
])
def test_a_bad_limit_is_a_usage_error(runner, tmp_path, argument, fragment):
    out = tmp_path / "out.glrm"
    result = runner.invoke(cli, ["build", str(JSON_GRAMMAR), "-o", str(out), "--limit", argument])
    assert result.exit_code == 2 and fragment in result.output and not out.exists()
    if "unknown" in fragment or "NAME=VALUE" in fragment:
        assert all(name in result.output for name in BuildLimits.names())


@pytest.mark.parametrize(("budgets", "layout"), [
    (["max_nfa_nodes_auto=50"], "runtime-close"),
    (["max_outcomes_auto=50"], "runtime-close"),
    (["max_outcomes_auto=50", "max_nfa_nodes_close_auto=50"], "grouped"),
])
def test_policy_limits_change_the_build_not_its_success(runner, tmp_path, budgets, layout):
    """The thresholds that never fail a build: a smaller auto budget makes auto fall back to the next
    layout, a shorter max_rhs_length splits more rules; the masks stay those of the default build."""
    out = tmp_path / "j.glrm"
    limits = [arg for budget in budgets for arg in ("--limit", budget)]
    result = runner.invoke(cli, ["build", str(JSON_GRAMMAR), "-o", str(out), "-q", *limits,
                                 "--limit", "max_rhs_length=2"])
    assert result.exit_code == 0, result.output
    report = json.loads(runner.invoke(cli, ["inspect", str(out), "--json"]).output)
    default = json.loads(runner.invoke(cli, ["inspect", str(built(JSON_GRAMMAR, "gpt2").path), "--json"]).output)
    assert default["dwa"]["layout"] == "one" and report["dwa"]["layout"] == layout
    assert any("longer than 2" in r for r in report["parser"]["normalization_rewrites"])
    assert not any("longer than 2" in r for r in default["parser"]["normalization_rewrites"])
    import glrmask_runtime
    small, big = glrmask_runtime.load(out).matcher(), built(JSON_GRAMMAR, "gpt2").artifact.matcher()
    for text in (b'{"a": [1, ', b'[true, {"b": nu'):
        small.commit_bytes(text)
        big.commit_bytes(text)
        assert (small.mask() == big.mask()).all()


def test_every_raised_limit_is_a_build_limit_field():
    """Each LimitExceeded("name", ...) in the compiler names a BuildLimits field: the name a user
    passes to --limit is the one in the message."""
    raised = set()
    for path in (ROOT / "glrmask_cli").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "LimitExceeded"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                raised.add(node.args[0].value)
    assert raised and raised <= set(BuildLimits.names()), sorted(raised - set(BuildLimits.names()))
    # and each is hit by a test above (max_outcomes_auto, raised for auto to catch, by the policy test)
    assert set(CASES) == raised - {"max_outcomes_auto"}


def test_the_architecture_doc_lists_every_limit_with_its_default():
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    for name, default, _, _ in describe():
        assert re.search(rf"^\| `{name}` \| {default:,} \|", text, re.M), name
    assert "--limit" in (ROOT / "README.md").read_text()


def test_a_lower_max_dwa_states_caps_the_auto_layouts_tried_first_too(tmp_path):
    """json.lark's "one" layout fits max_dwa_states_auto; a max_dwa_states below what it needs must
    still stop it (and then every later layout), not be ignored because "one" is not the last try."""
    out = tmp_path / "j.glrm"
    result = CliRunner().invoke(cli, ["build", str(JSON_GRAMMAR), "--limit", "max_dwa_states=10", "-o", str(out)])
    assert result.exit_code == 1 and "max_dwa_states=10" in result.output and not out.exists()
