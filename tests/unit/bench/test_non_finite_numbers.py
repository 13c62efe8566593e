"""``NaN``, ``Infinity`` and ``1e999`` in a dataset line are errors naming the file, line and field
(bench/schema.py, docs/dataset.md §7.1), found by ``wtb validate`` before any run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wildtoolbench.bench.schema import non_finite_numbers
from wildtoolbench.cli import app

REPO = Path(__file__).resolve().parents[3]
DEMO = REPO / "bench" / "data" / "demo_sessions.jsonl"


def _with(tmp_path: Path, placeholder: str, where: str) -> Path:
    lines = DEMO.read_text(encoding="utf-8").splitlines()
    session = json.loads(lines[1])
    if where == "schema":
        session["english_tools"][0]["function"]["parameters"]["properties"]["x"] = {"type": "number", "maximum": 7}
    else:
        session["english_answer_list"][0][0]["action"]["arguments"]["x"] = 7
    text = (
        json.dumps(session)
        .replace('"maximum": 7', f'"maximum": {placeholder}')
        .replace('"x": 7', f'"x": {placeholder}')
    )
    (tmp_path / "d.jsonl").write_text("\n".join([lines[0], text, *lines[2:]]) + "\n", encoding="utf-8")
    return tmp_path / "d.jsonl"


@pytest.mark.parametrize("number", ["Infinity", "-Infinity", "NaN", "1e999", "-2E+400"])
@pytest.mark.parametrize("where", ["schema", "gold"])
def test_validate_names_the_line_and_field(tmp_path, number, where):
    path = _with(tmp_path, number, where)
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 1, result.output
    field = (
        "english_tools[0].function.parameters.properties.x.maximum"
        if where == "schema"
        else "english_answer_list[0][0].action.arguments.x"
    )
    assert f"{path}:2: {field}:" in result.output and "not a JSON number" in result.output


def test_finite_numbers_narrowly_pass(tmp_path):
    assert non_finite_numbers('{"a": 1e308}', {"a": 1e308}) == []
    assert non_finite_numbers('{"a": "NaN"}', {"a": "NaN"}) == []  # a string, not a number
    path = _with(tmp_path, "1.7976931348623157e308", "schema")
    assert CliRunner().invoke(app, ["validate", str(path)]).exit_code == 0
