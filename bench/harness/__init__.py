"""The harness side of the evaluation loop, as pure functions over plain data (docs/evaluation.md §2, §3, §5).

Everything here works on OpenAI-format dict messages and the raw response
shape the reference records::

    {"content": str | None, "tool_calls": [{"id", "type", "function": {"name", "arguments"}}] | None,
     "reasoning_content": str | None}

The evaluation graph (``graphs/evaluation.py``) wires these functions into
LangGraph nodes; nothing in this module imports LangGraph or does I/O.

Main entry points:

- :func:`build_prompt` - the messages of task ``t`` (system, gold history, user) (docs/evaluation.md §2).
- :func:`match_step` - judge one candidate response at step ``s`` against the
  gold DAG and say what happens next (docs/evaluation.md §3).
- :func:`step_log`, :func:`new_task_result`, :func:`close_task_result`,
  :func:`session_record`, :func:`error_record` - the docs/evaluation.md §5 result record.

A gold DAG that the reference cannot replay (quirk 11) raises
:class:`InferenceError`; the whole session's result then becomes
``"Error during inference: <message>"`` (:func:`error_record`).
"""

from wildtoolbench.bench.args import float_to_number
from wildtoolbench.bench.harness.errors import ERROR_PREFIX, InferenceError
from wildtoolbench.bench.harness.matching import match_step, tracker_after
from wildtoolbench.bench.harness.outcome import (
    ERROR_ACTION_NAME,
    ERROR_EMPTY_RESPONSE,
    MAX_RECORDED_CANDIDATES,
    Label,
    StepOutcome,
)
from wildtoolbench.bench.harness.prompt import (
    HISTORY_ID_PREFIX,
    build_prompt,
    gold_history,
    history_tool_call_id,
    system_message,
)
from wildtoolbench.bench.harness.record import (
    close_task_result,
    effective_step_limit,
    error_record,
    is_optimal,
    new_task_result,
    response_diagnostics,
    session_record,
    step_limit_reason,
    step_log,
    with_language,
)
from wildtoolbench.bench.text_calls import text_tool_calls

__all__ = [
    "ERROR_ACTION_NAME",
    "ERROR_EMPTY_RESPONSE",
    "ERROR_PREFIX",
    "HISTORY_ID_PREFIX",
    "MAX_RECORDED_CANDIDATES",
    "InferenceError",
    "Label",
    "StepOutcome",
    "build_prompt",
    "close_task_result",
    "effective_step_limit",
    "error_record",
    "float_to_number",
    "gold_history",
    "history_tool_call_id",
    "is_optimal",
    "match_step",
    "new_task_result",
    "response_diagnostics",
    "session_record",
    "step_limit_reason",
    "step_log",
    "system_message",
    "text_tool_calls",
    "tracker_after",
    "with_language",
]
