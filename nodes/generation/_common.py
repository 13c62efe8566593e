"""Plumbing shared by the generation role nodes: calling a role's model, recording the call,
and rendering the blocks (tools, conversation, actions) that role prompts show.

Internal to ``nodes``; role logic lives in ``nodes/generation/user.py``, ``planner.py``, ``checker.py``,
``tool.py`` and ``agent.py``.
"""

from __future__ import annotations

import copy
import json
import time
import zlib
from collections.abc import Callable, Collection, Sequence
from contextvars import ContextVar
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from wildtoolbench.bench.generation_quality import results_text
from wildtoolbench.bench.terms import ASK_USER, PREPARE_TO_ANSWER, PSEUDO_TOOLS
from wildtoolbench.models import ModelSettings, resolve_model
from wildtoolbench.models.messages import token_counts
from wildtoolbench.models.prefix import continuing
from wildtoolbench.models.transport import RetryPolicy, current_usage, request_with_retries
from wildtoolbench.nodes.generation.context import Context
from wildtoolbench.nodes.generation.role_table import role_model_spec
from wildtoolbench.nodes.generation.state import State
from wildtoolbench.nodes.tracing import annotate_current_run, generation_node_metadata
from wildtoolbench.prompts import fragments

#: Token cap of a JSON role reply (planner, checker, tool) on a model with grammar support.
JSON_MAX_TOKENS = 400

#: Called as ``listener(session_id, role, task_index)`` just before each role-model request, in the
#: context that runs the graph (``wtb generate``'s progress display sets it); ``None`` = nobody listens.
ROLE_REQUEST_LISTENER: ContextVar[Callable[[str, str, int], None] | None] = ContextVar(
    "wtb_role_request_listener", default=None
)


#: While set (by ``wildtoolbench.nodes.generation.registry.capturing`` around an added role's node), every call record
#: :func:`ask_model` makes is appended to it, so the role's requests are captured even when the node
#: does not return them.
CAPTURED_CALLS: ContextVar[list[dict[str, Any]] | None] = ContextVar("wtb_captured_role_calls", default=None)


def role_spec(context: Context, role: str, user_model_index: int = 0) -> str:
    """``role``'s model spec for one session with the role's registered default applied; ``""`` = no model
    (``wildtoolbench.nodes.generation.role_table.role_model_spec``, docs/generation.md §8)."""
    return role_model_spec(context, role, user_model_index)


WRITING_ROLES = ("user", "planner", "tool", "agent")
"""The roles whose models write the session: their models pick the default rule profile."""


def rule_profile(context: Context, state: State | None = None) -> str:
    """The rule profile of the run (``Context.rule_profile`` over the writing roles' specs; docs/generation.md §11.2)."""
    index = state.user_model_index if state is not None else 0
    return context.rule_profile([role_spec(context, role, index) for role in WRITING_ROLES])


def dumps(value: Any) -> str:
    """Compact JSON for prompts (UTF-8 kept)."""
    return json.dumps(value, ensure_ascii=False)


def message_text(message: Any) -> str:
    """Plain text of a chat model reply (string content or a list of content blocks)."""
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            b if isinstance(b, str) else str(b.get("text", "")) for b in content if isinstance(b, (str, dict))
        )
    return "" if content is None else str(content)


def role_has_grammar(role: str, state: State, runtime: Runtime[Context]) -> bool:
    """Whether ``role``'s model samples under a JSON schema (``supports_json_schema_grammar``, the local
    llama.cpp server), i.e. gets the role's grammar with its requests (docs/generation.md §2)."""
    context = runtime.context if runtime is not None and runtime.context is not None else Context()
    spec = role_spec(context, role, state.user_model_index)
    if not spec:
        return False
    model = resolve_model(spec, ModelSettings(base_url=context.role_base_url(role), max_retries=0))
    return bool(getattr(model, "supports_json_schema_grammar", False))


def sampling_seed(state: State, role: str, attempt: int = 0) -> int:
    """The sampling seed of one request to a local model (docs/generation.md §5): from the session's seed,
    the role, the requests the session made so far and the try within the node, so the same run (same
    ``--seed``, same code and model) samples the same text, and a retry samples anew. 31 bits."""
    key = f"{state.seed}:{role}:{len(state.calls)}:{attempt}".encode()
    return zlib.crc32(key) & 0x7FFFFFFF


RETRY_TEMPERATURE_STEP = 0.3
RETRY_TEMPERATURE_MAX = 1.2


def retry_temperature(context: Context, attempt: int) -> float | None:
    """The sampling temperature of try ``attempt`` (0 = the first) of a rejected message (docs/generation.md
    §4.3): the context's, raised by :data:`RETRY_TEMPERATURE_STEP` per retry up to
    :data:`RETRY_TEMPERATURE_MAX` (never lowered), so a small model whose first choice is rejected does not
    sample the same text again; ``None`` (the provider's default) stays ``None``."""
    base = context.temperature
    if base is None or attempt <= 0:
        return base
    return max(base, round(min(RETRY_TEMPERATURE_MAX, base + RETRY_TEMPERATURE_STEP * attempt), 3))


def _role_model(
    context: Context,
    spec: str,
    base_url: str | None,
    state: State,
    role: str,
    *,
    json_schema: dict[str, Any] | None,
    temperature: float | None,
    max_tokens: int | None,
    attempt: int,
) -> tuple[Any, bool, float | None]:
    """The chat model :func:`ask_model` sends a request to, with its sampling bound: ``(model, grammar,
    least_deadline)``; ``grammar`` says whether ``json_schema`` constrains the sampling (a local model),
    ``least_deadline`` is the local models' shortest per-request deadline (docs/settings.md §7.1)."""
    model = resolve_model(
        spec,
        ModelSettings(
            temperature=context.temperature if temperature is None else temperature,
            base_url=base_url,
            timeout=context.request_timeout,
            max_retries=0,
        ),
    )
    least_deadline = getattr(model, "least_deadline", None)  # the local models' (docs/settings.md §7.1)
    grammar = json_schema is not None and bool(getattr(model, "supports_json_schema_grammar", False))
    local = bool(getattr(model, "supports_json_schema_grammar", False))
    if local:  # the local server samples with this request's own seed: a run's sessions follow from --seed
        model = model.bind(seed=sampling_seed(state, role, attempt))
    if grammar:
        # The grammar fixes the shape but not the length of free-text fields: a token cap keeps a
        # rambling small model from spending minutes on one "thought" (a cut reply is a rejection).
        model = model.bind(
            response_format={"type": "json_object", "schema": json_schema}, max_tokens=max_tokens or JSON_MAX_TOKENS
        )
    elif max_tokens and local:
        model = model.bind(max_tokens=max_tokens)
    return model, grammar, least_deadline


async def ask_model(
    role: str,
    state: State,
    runtime: Runtime[Context],
    system: str,
    human: str,
    *,
    json_schema: dict[str, Any] | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    attempt: int = 0,
) -> tuple[str, dict[str, Any]]:
    """Send one request to ``role``'s model and capture it.

    Args:
        role: a registered role's name (``user``, ``planner``, ..., or an added one): picks the model spec
            (the context's, else the role's default) and base URL.
        state: the session (its id and user-model pick).
        runtime: graph runtime holding :class:`Context`.
        system, human: the two prompt messages.
        json_schema: the JSON schema of the expected output (``wildtoolbench.nodes.generation.role_schemas``). A model whose
            class sets ``supports_json_schema_grammar`` (the local llama.cpp server) gets it as
            ``response_format`` and samples only JSON of that shape, at most :data:`JSON_MAX_TOKENS`
            tokens; other models get the prompt only.
        temperature: this request's sampling temperature instead of the context's (the checker
            samples at 0, so the same output gets the same verdict).
        max_tokens: the reply's token cap on a model with grammar support (default
            :data:`JSON_MAX_TOKENS` with a schema, none without); other models get no cap.
        attempt: the try of this output within the node (0 = the first): part of the sampling seed
            a local model gets (:func:`sampling_seed`).

    Returns:
        ``(reply_text, call_record)``; the record is ``{"role", "task", "model", "request", "response",
        "seconds", "input_tokens", "output_tokens", "grammar"}`` (wall seconds of the request, retries
        included; the reply's token counts, 0 when the provider reports none; whether the schema
        constrained the sampling).

    The request goes through :func:`wildtoolbench.models.transport.request_with_retries` (the same
    retries, backoff and rate limit as the evaluation's candidate requests; the context's
    ``max_attempts``, ``backoff``, ``max_retry_wait``, ``rps``, and ``request_timeout`` as the deadline of each try),
    as the conversation ``role:<role>`` (:func:`wildtoolbench.models.prefix.continuing`: a local llama.cpp server computes
    each role's requests in a slot of its own, so the role's prompt prefix is not evaluated again).

    Raises:
        ModelRequestError: the request failed for good (retries exhausted, or a failure that is not
            retried such as an exhausted script, kept as ``__cause__``): the batch runner records the
            session as failed with that reason.
    """
    context = runtime.context if runtime is not None and runtime.context is not None else Context()
    spec = role_spec(context, role, state.user_model_index)
    base_url = context.role_base_url(role)
    model, grammar, least_deadline = _role_model(
        context, spec, base_url, state, role, json_schema=json_schema, temperature=temperature,
        max_tokens=max_tokens, attempt=attempt,
    )  # fmt: skip
    messages = [SystemMessage(content=system), HumanMessage(content=human)]
    trace_meta = generation_node_metadata(state, role)
    annotate_current_run(trace_meta)  # task/step metadata on the role node's trace run
    config = {
        "metadata": {"wtb_role": role, "wtb_session": state.session_id, **trace_meta},
        "tags": [f"wtb:{role}"],
        "run_name": f"{role} model",
    }
    policy = RetryPolicy(
        max_attempts=context.max_attempts,
        backoff=context.backoff,
        max_wait=context.max_retry_wait,
        rps=context.rps,
        deadline=context.request_timeout,
    ).with_deadline_at_least(least_deadline)
    task_index = max(len(state.tasks) - 1, 0)
    listener = ROLE_REQUEST_LISTENER.get()
    if listener is not None:
        listener(state.session_id, role, task_index)
    started = time.monotonic()
    with continuing(f"role:{role}"):  # a local server keeps each role's prompt prefix in a slot of its own
        reply = await request_with_retries(
            lambda: model.ainvoke(messages, config=config),
            policy,
            endpoint=base_url or spec,
            where={"role": role, "task": task_index},
        )
    seconds = round(time.monotonic() - started, 3)
    tokens_in, tokens_out = token_counts(reply)
    usage = current_usage()
    if usage is not None:
        usage.add_tokens(tokens_in, tokens_out)
    text = message_text(reply)
    record = {
        "role": role,
        "task": task_index,
        "model": spec,
        "request": [{"role": "system", "content": system}, {"role": "user", "content": human}],
        "response": text,
        "seconds": seconds,
        "input_tokens": int(tokens_in or 0),
        "output_tokens": int(tokens_out or 0),
        "grammar": grammar,
    }
    sink = CAPTURED_CALLS.get()
    if sink is not None:
        sink.append(record)
    return text, record


def entry_id(state: State, offset: int = 0) -> str:
    """Id of the next transcript entry of this session (unique within the session)."""
    return f"e{len(state.transcript) + offset:04d}"


def text_entry(
    state: State, entries: Sequence[Any], role: str, task: int, kind: str, attempt: int, content: str, **extra: Any
) -> dict[str, Any]:
    """A transcript entry of one text a role wrote (a user message, a question or reply): ``{"id", "role",
    "task", "kind", "attempt", "content", ...extra}``, the id following ``entries`` (this node's entries
    so far; docs/generation.md §7). ``extra``: e.g. ``details``, ``fallback=True``."""
    return {
        "id": entry_id(state, len(entries)),
        "role": role,
        "task": task,
        "kind": kind,
        "attempt": attempt,
        "content": content,
        **extra,
    }


def current_task(state: State) -> dict[str, Any]:
    """A deep copy of the task in progress (the last one)."""
    return copy.deepcopy(state.tasks[-1])


def replace_current(state: State, task: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``tasks`` list with the task in progress replaced by ``task``."""
    return [*state.tasks[:-1], task]


def labels(state: State) -> dict[str, str]:
    """Prompt labels in the session's language."""
    return fragments(state.language)["labels"]


def tools_block(tools: Sequence[dict[str, Any]], *, full: bool = True, compact: bool = False) -> str:
    """The tool list for a prompt: full specs (JSON), ``compact`` lines (``- name(param*: type, enum
    [...]; ...): description``, ``*`` = required; about a third shorter, so a small local model reads
    it faster), or ``name: description`` lines when ``full`` is false."""
    if compact:
        return "\n".join(_compact_tool(t.get("function", t)) for t in tools)
    if full:
        return dumps([t.get("function", t) for t in tools])
    lines = []
    for tool in tools:
        function = tool.get("function", tool)
        lines.append(f"- {function.get('name')}: {function.get('description', '')}")
    return "\n".join(lines)


def _compact_tool(function: dict[str, Any]) -> str:
    parameters = function.get("parameters") or {}
    properties = parameters.get("properties") or {}
    required = set(parameters.get("required") or [])
    parts = []
    for name, schema in properties.items() if isinstance(properties, dict) else []:
        schema = schema if isinstance(schema, dict) else {}
        text = f"{name}{'*' if name in required else ''}: {schema.get('type', 'any')}"
        if isinstance(schema.get("enum"), list):
            text += f" one of {dumps(schema['enum'])}"
        if schema.get("description"):
            text += f" ({str(schema['description']).strip()})"
        parts.append(text)
    return f"- {function.get('name')}({'; '.join(parts)}): {str(function.get('description') or '').strip()}"


def conversation_lines(state: State, *, include_current: bool = True, replies: bool = True) -> list[str]:
    """The visible conversation: each task's user message, questions and replies, final replies
    (``replies=False``: without the assistant's final replies, for the request of a new reply, which a
    small model otherwise gives again; docs/generation.md §4.3)."""
    names = labels(state)
    tasks = state.tasks if include_current else state.tasks[:-1]
    lines = []
    for task in tasks:
        lines.append(f"{names['user']}: {task['user_message']}")
        for node in task.get("nodes", []):
            if node["name"] == ASK_USER and node.get("observation"):
                lines.append(f"{names['assistant']}: {node['observation']}")
                if node.get("user_input"):
                    lines.append(f"{names['user']}: {node['user_input']}")
            elif replies and node["name"] == PREPARE_TO_ANSWER and node.get("observation"):
                lines.append(f"{names['assistant']}: {node['observation']}")
    return lines


def without_line_of(system: str, text: str) -> str:
    """``system`` without its lines that hold ``text`` (the environment line, dropped from the retry of a
    message that pasted it; docs/generation.md §4.3); ``system`` itself when ``text`` is empty."""
    if not text:
        return system
    return "\n".join(line for line in system.splitlines() if text not in line)


def actions_lines(nodes: Sequence[dict[str, Any]]) -> list[str]:
    """The current task's actions for the planner: ``index (step s): name(arguments) -> result``."""
    lines = []
    for index, node in enumerate(nodes):
        if node["name"] == PREPARE_TO_ANSWER:
            continue
        result = node.get("observation")
        if node["name"] == ASK_USER:
            result = {"question": node.get("observation"), "user_reply": node.get("user_input")}
        lines.append(
            f"{index} (step {node['step']}): {node['name']}({dumps(node.get('arguments') or {})}) -> {dumps(result)}"
        )
    return lines


def conversation_texts(state: State) -> list[str]:
    """Everything said so far in the session, as texts (docs/generation.md §2): the environment string,
    each task's user message, and every node's arguments, result, question, reply and user answer."""
    texts = [state.env_info]
    for task in state.tasks:
        texts.append(task.get("user_message") or "")
        for node in task.get("nodes", []):
            texts.append(dumps(node.get("arguments") or {}))
            if node.get("observation") is not None:
                observation = node["observation"]
                texts.append(observation if isinstance(observation, str) else dumps(observation))
            if node.get("user_input"):
                texts.append(node["user_input"])
    return texts


def assistant_replies(state: State) -> list[str]:
    """The assistant's final replies so far in the session (docs/generation.md §10; its questions are left
    out: an answer may well repeat the question's words, "The base64 encoding of the file is ...")."""
    return [text for text, _ in replies_with_results(state)]


def replies_with_results(state: State) -> list[tuple[str, str]]:
    """Each final reply so far with the text of its task's tool results
    (:func:`wildtoolbench.bench.generation_quality.results_text`), for the rule that a reply does not repeat an
    earlier one (docs/generation.md §10)."""
    out = []
    for task in state.tasks:
        nodes = task.get("nodes", [])
        for index, node in enumerate(nodes):
            if node["name"] == PREPARE_TO_ANSWER and isinstance(node.get("observation"), str):
                out.append((node["observation"], results_text(nodes[:index])))
    return out


def session_results(state: State, names: Collection[str] | None = None) -> list[str]:
    """The tool results so far in the session (``name(arguments) -> result``), for consistent simulation:
    of the tools in ``names`` only when given (the tool role sees the earlier results of the tools it
    simulates now: shown another tool's result, a small model pastes it; docs/generation.md §2)."""
    lines = []
    for task in state.tasks:
        for node in task.get("nodes", []):
            if names is not None and node["name"] not in names:
                continue
            if node["name"] not in PSEUDO_TOOLS and node.get("observation") is not None:
                lines.append(f"{node['name']}({dumps(node.get('arguments') or {})}) -> {dumps(node['observation'])}")
    return lines


def section(title: str, body: str | Sequence[str], empty: str) -> str:
    """``## title`` followed by ``body`` (lines joined), or ``empty`` when there is nothing."""
    text = body if isinstance(body, str) else "\n".join(body)
    return f"## {title}\n{text.strip() or empty}\n"


def fail(reason: str, rules: Sequence[str] = ()) -> dict[str, Any]:
    """State update that ends the session as failed with ``reason`` and, for a rejection, the ids of the rules
    that rejected the last try (``failure_rules``; docs/generation.md §11)."""
    update: dict[str, Any] = {"status": "failed", "failure_reason": reason, "pending": None}
    if rules:
        update["failure_rules"] = list(rules)
    return update
