"""What reference mode does with type lists and with arguments that are not JSON text, as
docs/fixed-mode.md §8 states it (issue 24 finding 10): the published checker raises on both, this
project's reference mode does not (a documented divergence), and fixed mode reads type lists as unions
with ``float`` as ``number``."""

from __future__ import annotations

import pytest

from tests.unit.bench.test_scoring import FINAL, call_step, task, text_step
from wildtoolbench.bench.args import check_arguments, float_to_number
from wildtoolbench.bench.scoring import score_task

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {
                    "x": {"type": ["float", "null"]},
                    "y": {"type": ["integer", "string"]},
                    "z": {"type": ["timestamp", "null"]},
                },
            },
        },
    }
]


@pytest.mark.parametrize(
    ("arguments", "reference", "fixed"),
    [
        ('{"x": 5.0}', "correct", "correct"),
        ('{"x": null}', "correct", "correct"),
        # reference: the textual "float" -> "number" replacement leaves a list alone: floats only
        ('{"x": 5}', "error_schema: nested args type inconsistent", "correct"),
        ('{"y": "a"}', "correct", "correct"),
        ('{"y": [1]}', "error_schema: nested args type inconsistent", "error_schema: nested args type inconsistent"),
        ('{"z": [1]}', "correct", "correct"),  # an unknown type name in the list: the value is not checked
    ],
)
def test_a_type_list_is_a_union_of_its_types(arguments, reference, fixed):
    for mode, expected in (("reference", reference), ("fixed", fixed)):
        tools = float_to_number(TOOLS, scoring=mode)
        assert check_arguments(tools, "f", arguments, arguments, scoring=mode) == expected, mode


@pytest.mark.parametrize("value", [{"x": 5.0}, None, 5, 5.5, True, [1]])
def test_the_checker_itself_raises_for_arguments_that_are_not_text_in_reference_mode(value):
    tools = float_to_number(TOOLS)
    with pytest.raises(TypeError, match="the JSON object must be str, bytes or bytearray"):
        check_arguments(tools, "f", value, '{"x": 5.0}')
    with pytest.raises(TypeError, match="the JSON object must be str, bytes or bytearray"):
        check_arguments(tools, "f", '{"x": 5.0}', value)


def _scored(arguments):
    raw = task([call_step([("f", arguments)], [("f", '{"x": 5.0}')]), text_step("done", *FINAL)])
    out = score_task(raw, float_to_number(TOOLS))
    step = out["inference_log"]["step_0"]["inference_output"]
    return out["label"], step.get("current_action_arguments_check_result")


@pytest.mark.parametrize(
    ("arguments", "label", "results"),
    [
        ({"x": 5.0}, "correct", None),  # an object is scored as its JSON text: json.dumps, non-ASCII kept
        ('{"x": 5.0}', "correct", None),
        (None, "error", ["error_schema: args type inconsistent"]),  # "null": not an object
        (5, "error", ["error_schema: args type inconsistent"]),
        (True, "error", ["error_schema: args type inconsistent"]),
        ([1], "error", ["error_schema: args type inconsistent"]),
    ],
)
def test_scoring_gives_the_checker_json_text(arguments, label, results):
    assert _scored(arguments) == (label, results)
