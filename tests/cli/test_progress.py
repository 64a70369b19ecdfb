"""Progress of a build: the stages report counts through `glrmask_cli.progress` (the pipeline names
the stages, long stages count their items against a total), the CLI draws a bar per stage on a
terminal, and nothing at all when stderr is not a terminal or with --quiet."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from devtools.builds import JSON_GRAMMAR, built, vocabulary
from glrmask_cli import pipeline
from glrmask_cli import progress as progress_module
from glrmask_cli.cli import _StageProgress, cli
from glrmask_cli.progress import Ticker


class Recording:
    """Every call, in order: ("stage", name), ("total", n, unit), ("advance", n), ("note", text)."""

    def __init__(self) -> None:
        self.events: list[tuple] = []

    def stage(self, name):
        self.events.append(("stage", name))

    def total(self, n, unit):
        self.events.append(("total", n, unit))

    def advance(self, n=1):
        self.events.append(("advance", n))

    def note(self, text):
        self.events.append(("note", text))

    def by_stage(self) -> dict[str, list[tuple]]:
        found: dict[str, list[tuple]] = {}
        current = None
        for event in self.events:
            if event[0] == "stage":
                current = event[1]
                found.setdefault(current, [])
            else:
                assert current is not None, f"{event} before any stage"
                found[current].append(event)
        return found


@pytest.mark.parametrize("layout", ["one", "grouped"])
def test_stages_report_increasing_counts_up_to_their_totals(monkeypatch, tmp_path, layout):
    monkeypatch.setattr(progress_module, "INTERVAL", 0.0)      # forward every item
    recording = Recording()
    result = pipeline.build_artifact(JSON_GRAMMAR, tmp_path / "j.glrm", tokenizer=vocabulary("small-gpt2"),
                                     layout=layout, progress=recording)
    started = [event[1] for event in recording.events if event[0] == "stage"]
    assert started == list(pipeline.STAGES)              # each stage once, in the pipeline's order
    stages = recording.by_stage()
    c = result.compiled
    assert c.quotient is not None         # stack effects are explored per terminal class of the LR quotient
    expected_units = {"stack effects": ("terminals", c.quotient.n_terminal_classes),
                      "rows": ("lexer states", c.lexer.n_states),
                      "terminal DWA": ("blocks", None), "parser DWA": ("groups", None)}
    for name, (unit, final_total) in expected_units.items():
        done, total, counts = 0, None, []
        for event in stages[name]:
            if event[0] == "total":
                assert event[2] == unit
                total = event[1]
            elif event[0] == "advance":
                assert event[1] > 0
                done += event[1]
                counts.append(done)
                assert total is not None and done <= total, (name, done, total)
        assert counts == sorted(counts) and len(counts) > 1 or total == 1, (name, counts)
        assert done == total and total > 0, (name, done, total)
        if final_total is not None:
            assert total == final_total
    if layout == "grouped":           # a total per first lexeme, states noted as groups are built
        assert stages["parser DWA"][-1][0] in ("advance", "note") and any(
            e[0] == "note" and e[1].endswith("states") for e in stages["parser DWA"])


def test_the_ticker_forwards_at_most_every_interval_and_the_rest_at_close():
    recording = Recording()
    ticker = Ticker(recording, 1000, "items", interval=3600.0)
    for _ in range(1000):
        ticker.advance()
    assert recording.events == [("total", 1000, "items")]      # nothing forwarded within the hour
    ticker.close()
    assert recording.events == [("total", 1000, "items"), ("advance", 1000)]
    every = Recording()
    ticker = Ticker(every, 3, "items", interval=0.0)
    for _ in range(3):
        ticker.advance()
    ticker.close()
    assert every.events[1:] == [("advance", 1)] * 3


def test_the_terminal_display_draws_a_bar_with_counts(capsys):
    shown = _StageProgress(pipeline.STAGES)
    shown.stage("stack effects")
    shown.total(10, "terminals")
    shown._drawn = 0.0                 # as if the last redraw were long ago
    shown.advance(5)
    shown.done()
    err = capsys.readouterr().err
    index = pipeline.STAGES.index("stack effects") + 1
    assert f"[{index}/{len(pipeline.STAGES)}] stack effects [##########..........] 5/10 terminals ..." in err
    assert err.endswith(" s\n") and err.count("\n") == 1


def test_no_progress_without_a_terminal_or_with_quiet(tmp_path):
    runner = CliRunner()                # stderr is not a terminal
    result = runner.invoke(cli, ["build", str(JSON_GRAMMAR), "-o", str(tmp_path / "a.glrm")])
    assert result.exit_code == 0
    assert "\r" not in result.output and "[1/" not in result.output and "..." not in result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith("wrote ")
    assert runner.invoke(cli, ["build", str(JSON_GRAMMAR), "-o", str(tmp_path / "b.glrm"), "-q"]).output == ""


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_a_build_on_a_terminal_shows_each_stage_and_its_counts(tmp_path):
    master, slave = os.openpty()
    try:
        command = [sys.executable, "-m", "glrmask_cli", "build", str(JSON_GRAMMAR), "-o", str(tmp_path / "a.glrm"),
                   "--no-cache"]
        done = subprocess.run(command, stderr=slave, stdout=subprocess.DEVNULL, timeout=300)
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:          # EIO: the other side is closed and drained
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(master)
    assert done.returncode == 0
    text = b"".join(chunks).decode()
    n = len(pipeline.STAGES)
    for i, name in enumerate(pipeline.STAGES, 1):
        assert f"[{i}/{n}] {name}" in text
    terminals = built(JSON_GRAMMAR, "gpt2").compiled.quotient.n_terminal_classes   # json.lark: 13 terminals, 10 classes
    assert f"stack effects [####################] {terminals}/{terminals} terminals" in text
    assert "rows [####################] " in text and "lexer states" in text
    assert (tmp_path / "a.glrm").exists()
