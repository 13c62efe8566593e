"""The one progress API of the batch runners (``wildtoolbench.runner.progress``)."""

from __future__ import annotations

import dataclasses
import io
import re

from wildtoolbench.runner.progress import EVALUATION, GENERATION, ProgressBar


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
    counters = {"tasks": 8, "right_tool_names": 7, "tasks_done": 8, "tasks_total": 24}
    with ProgressBar(layout, total=6, done=2, label="oracle", **counters) as bar:
        bar.task_done()
        bar.task_done(3)
        bar.advance(tasks=4, right_tool_names=3)
        bar.advance()  # a session without a record: one more done, no tasks
    assert bar.counters == {"tasks": 12, "right_tool_names": 10, "tasks_done": 12, "tasks_total": 24}
    final = [line for line in _text(buffer).splitlines() if "name check 10/12 (unscored)" in line]
    assert final and "oracle" in final[-1] and "4/6 sessions" in final[-1] and "12/24 tasks" in final[-1]


def test_the_bar_moves_per_task_before_a_session_ends():
    layout, buffer = _captured(EVALUATION)
    with ProgressBar(layout, total=2, label="m", tasks=0, right_tool_names=0, tasks_done=0, tasks_total=8) as bar:
        bar.task_done()
        bar._progress.refresh()
        assert "1/8 tasks" in _text(buffer) and "0/2 sessions" in _text(buffer)


def test_off_a_terminal_the_evaluation_layout_prints_a_line_per_session(capsys):
    with ProgressBar(EVALUATION, total=3, done=1, label="m", tasks=0, right_tool_names=0) as bar:
        assert bar.lines and bar._progress is None  # stderr is captured here: not a terminal
        bar.task_done()  # prints nothing
        bar.advance(line="s1: name check 3/4 tasks (unscored), 1.0s", tasks=4, right_tool_names=3)
        bar.advance(line="s2: infrastructure error")
    assert (
        capsys.readouterr().err == "[2/3] s1: name check 3/4 tasks (unscored), 1.0s\n[3/3] s2: infrastructure error\n"
    )


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
    with ProgressBar(EVALUATION, total=3, enabled=False, tasks=0, right_tool_names=0) as bar:
        bar.advance(line="not printed", tasks=4, right_tool_names=4)
        bar.describe("ignored")
        bar.note("a note [kept as written]")
    assert bar._progress is None and bar.counters == {"tasks": 4, "right_tool_names": 4}
    assert capsys.readouterr().err == "a note [kept as written]\n"


def test_the_generation_bar_needs_a_terminal(capsys):
    bar = ProgressBar(GENERATION, total=1)  # stderr is captured here: not a terminal
    assert bar.enabled is False and bar._progress is None
    terminal, _ = _captured(GENERATION)
    assert ProgressBar(terminal, total=1).enabled is True
