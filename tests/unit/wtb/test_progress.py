"""The one progress API of the batch runners (``wtb.runner.progress``)."""

from __future__ import annotations

import dataclasses
import io
import re

from wtb.runner.progress import EVALUATION, GENERATION, ProgressBar


def _captured(layout, **console):
    """``layout`` drawing into a string buffer, as on a terminal 200 columns wide, kept at the end."""
    buffer = io.StringIO()
    options = {"file": buffer, "force_terminal": True, "width": 200, "color_system": None, **console}
    return dataclasses.replace(layout, console=options, transient=False), buffer


def _text(buffer: io.StringIO) -> str:
    """What was drawn, without the terminal's control sequences."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", buffer.getvalue())


def test_advance_adds_to_the_counters_the_evaluation_bar_shows():
    layout, buffer = _captured(EVALUATION)
    with ProgressBar(layout, total=6, done=2, label="oracle", tasks=8, correct=7) as bar:
        bar.advance(tasks=4, correct=3)
        bar.advance()  # a session without a record: one more done, no tasks
    assert bar.counters == {"tasks": 12, "correct": 10}
    final = [line for line in _text(buffer).splitlines() if "right actions 10/12 tasks" in line]
    assert final and "oracle" in final[-1] and "4/6 sessions" in final[-1]


def test_describe_and_note_on_the_generation_bar():
    layout, buffer = _captured(GENERATION)
    with ProgressBar(layout, total=2, label="starting") as bar:
        bar.describe("s1 task 1: planner (request 1)")
        bar.note("s1 ST-MT done")
        bar.advance()
    lines = _text(buffer).splitlines()
    assert "s1 ST-MT done" in lines
    assert any("s1 task 1: planner (request 1)" in line and "1/2" in line for line in lines)


def test_a_disabled_bar_shows_nothing_but_notes_are_printed(capsys):
    with ProgressBar(EVALUATION, total=3, enabled=False, tasks=0, correct=0) as bar:
        bar.advance(tasks=4, correct=4)
        bar.describe("ignored")
        bar.note("a note [kept as written]")
    assert bar._progress is None and bar.counters == {"tasks": 4, "correct": 4}
    assert capsys.readouterr().err == "a note [kept as written]\n"


def test_the_generation_bar_needs_a_terminal(capsys):
    bar = ProgressBar(GENERATION, total=1)  # stderr is captured here: not a terminal
    assert bar.enabled is False and bar._progress is None
    terminal, _ = _captured(GENERATION)
    assert ProgressBar(terminal, total=1).enabled is True
