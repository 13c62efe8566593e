"""JSON schemas of the generation roles (``wildtoolbench.nodes.generation.role_schemas``) and how ``ask_model`` uses them."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
from typing import Any, ClassVar

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from wildtoolbench.bench.generation import plan_sessions
from wildtoolbench.models import _registry
from wildtoolbench.models.prefix import current_prefix_key
from wildtoolbench.nodes.generation._common import JSON_MAX_TOKENS
from wildtoolbench.nodes.generation.agent import AGENT_MAX_TOKENS, agent_schema
from wildtoolbench.nodes.generation.context import Context
from wildtoolbench.nodes.generation.role_schemas import (
    CHECKER_SCHEMA,
    allowed_action_kinds,
    grammar_safe_schema,
    planner_schema,
    tool_results_schema,
)
from wildtoolbench.nodes.generation.state import State
from wildtoolbench.nodes.generation.user_details import USER_MAX_TOKENS, answer_schema, planned_details, user_schema
from wildtoolbench.prompts import fragments
from wildtoolbench.runner.generation import generate_session

WEATHER = {
    "type": "function",
    "function": {
        "name": "getWeather",
        "description": "Weather of a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name."},
                "unit": {"type": "string", "enum": ["C", "F"]},
                "days": {"type": "float", "format": "x"},
                "spots": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"lat": {"type": "double"}},
                        "required": ["lat", "ghost"],
                    },
                },
            },
            "required": ["city"],
        },
    },
}
NEWS = {"type": "function", "function": {"name": "getNews", "description": "News.", "parameters": {"type": "object"}}}


def test_grammar_safe_schema_keeps_structure_and_maps_benchmark_types():
    assert grammar_safe_schema(WEATHER["function"]["parameters"]) == {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["C", "F"]},
            "days": {"type": "number"},
            "spots": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"lat": {"type": "number"}},
                    "required": ["lat"],
                    "additionalProperties": False,  # a key the tool does not define is a rule rejection
                },
            },
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    assert grammar_safe_schema({"type": "weird"}) == {}
    assert grammar_safe_schema("nonsense") == {}
    assert grammar_safe_schema({"type": "integer", "enum": [1, 2]}) == {"enum": [1, 2]}


def _names(schema):
    return [c["properties"]["name"]["const"] for c in schema["properties"]["actions"]["items"]["anyOf"]]


CALL = {"name": "getWeather", "arguments": {"city": "Oslo"}, "step": 0}
ASK = {"name": "ask_user_for_required_parameters", "arguments": {}, "step": 0}


def test_planner_schema_follows_what_the_rules_allow():
    schema = planner_schema([WEATHER, NEWS, WEATHER], "ST")
    assert schema["required"] == ["thought", "plan", "actions"]
    actions = schema["properties"]["actions"]
    assert (actions["minItems"], actions["maxItems"]) == (1, 1)
    assert _names(schema) == ["getWeather", "getNews"]  # ST, nothing done yet: one call
    call = actions["items"]["anyOf"][0]["properties"]
    assert call["arguments"]["required"] == ["city"] and call["depends_on"] == {"type": "array", "maxItems": 0}
    assert actions["items"]["anyOf"][1]["properties"]["arguments"] == {"type": "object"}
    answer = planner_schema([WEATHER], "ST", [CALL])
    assert _names(answer) == ["prepare_to_answer"]  # ST after its call: the answer
    assert answer["properties"]["actions"]["items"]["anyOf"][0]["properties"]["arguments"]["properties"] == {
        "answer_type": {"const": "tool"}
    }
    chat = planner_schema([WEATHER], "CC")
    assert _names(chat) == ["prepare_to_answer"]
    assert chat["properties"]["actions"]["items"]["anyOf"][0]["properties"]["arguments"]["properties"] == {
        "answer_type": {"const": "chat"}
    }
    assert _names(planner_schema([WEATHER], "MT")) == ["getWeather"]
    assert planner_schema([WEATHER], "MT")["properties"]["actions"]["maxItems"] == 3  # MT_STEP_CALLS
    assert _names(planner_schema([WEATHER], "MT", [CALL, CALL])) == ["getWeather", "prepare_to_answer"]
    assert planner_schema([WEATHER], "MT", [CALL, CALL])["properties"]["actions"]["maxItems"] == 3
    ask = planner_schema([WEATHER, NEWS], "CQ")
    assert _names(ask) == ["getWeather", "getNews", "ask_user_for_required_parameters"]
    asked = ask["properties"]["actions"]["items"]["anyOf"][2]["properties"]["arguments"]["properties"]
    # one ask choice per tool with parameters (getNews has none): its own parameters only
    assert asked["tool_name"] == {"const": "getWeather"}
    assert asked["missing_required_parameters"]["items"] == {
        "enum": list(WEATHER["function"]["parameters"]["properties"])
    }
    assert _names(planner_schema([WEATHER], "CQ", [ASK])) == ["getWeather", "ask_user_for_required_parameters"]
    assert _names(planner_schema([WEATHER], "CQ", [CALL])) == ["getWeather", "ask_user_for_required_parameters"]
    assert _names(planner_schema([WEATHER], "CQ", [ASK, CALL])) == [
        "getWeather",
        "ask_user_for_required_parameters",
        "prepare_to_answer",
    ]
    assert _names(planner_schema([], "ST")) == ["prepare_to_answer"]  # no usable tool: only an answer fits


def test_allowed_action_kinds_agree_with_the_rule_checker():
    """Every kind the grammar allows can pass wildtoolbench.bench.generation_checks; every kind it leaves out cannot."""
    from wildtoolbench.bench.generation_checks import tools_by_name
    from wildtoolbench.bench.rules.decision import decision_errors

    tools = tools_by_name([WEATHER])
    examples = {
        "call": {"name": "getWeather", "arguments": {"city": "Oslo"}, "depends_on": []},
        "ask": {
            "name": "ask_user_for_required_parameters",
            "arguments": {"tool_name": "getWeather", "missing_required_parameters": ["city"]},
            "depends_on": [],
        },
    }
    for layer_type, nodes in [
        ("ST", []),
        ("ST", [CALL]),
        ("MT", []),
        ("MT", [CALL]),
        ("MT", [CALL, CALL]),
        ("CQ", []),
        ("CQ", [ASK]),
        ("CQ", [ASK, CALL]),
        ("CC", []),
    ]:
        answer_type = "chat" if layer_type == "CC" else "tool"
        examples["answer"] = {"name": "prepare_to_answer", "arguments": {"answer_type": answer_type}, "depends_on": []}
        allowed = allowed_action_kinds(layer_type, nodes)
        for kind, action in examples.items():
            errors = decision_errors({"actions": [action]}, tools=tools, layer_type=layer_type, nodes=nodes)
            assert (not errors) == (kind in allowed), (layer_type, len(nodes), kind, errors)


def test_tool_and_checker_schemas():
    results = tool_results_schema(3)["properties"]["results"]
    assert (results["minItems"], results["maxItems"]) == (3, 3)
    assert CHECKER_SCHEMA["properties"]["verdict"] == {"enum": ["accept", "reject"]}


def test_the_local_runtime_turns_the_planner_schema_of_every_real_tool_list_into_a_grammar(shared_dir):
    """xllamacpp (the `local` extra's llama.cpp) converts every role schema into a grammar without an error."""
    if importlib.util.find_spec("xllamacpp") is None:
        if os.environ.get("WTB_REQUIRE_LOCAL") == "1":
            pytest.fail("xllamacpp is not installed (the `local` extra)")
        pytest.skip("xllamacpp is not installed (the `local` extra)")
    from xllamacpp import json_schema_to_grammar

    for language in ("en", "zh"):
        lines = (shared_dir / "data" / f"tools_{language}.jsonl").read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, start=1):
            for layer_type in ("ST", "MT"):
                schema = planner_schema(json.loads(line), layer_type)
                grammar = json_schema_to_grammar(json.dumps(schema))
                assert grammar.strip() and "actions" in grammar, (language, number)
            # the user's message grammar: fixed values, openers and the bounded message pattern
            functions = [t.get("function", t) for t in json.loads(line)][:2]
            state = State(tools=json.loads(line), layer_types=("MT",), env_info="2024-05-03 10:12:00 Friday",
                          seed=number, language=language)  # fmt: skip
            plans, _ = planned_details(state, functions, "", 0)
            openers = fragments(language)["openers"]
            grammar = json_schema_to_grammar(json.dumps(user_schema(functions, "", plans, openers["request"])))
            assert "message" in grammar, (language, number)
        for kind in ("question", "reply"):
            assert kind in json_schema_to_grammar(json.dumps(agent_schema(State(language=language), kind)))
        answer = answer_schema(
            {"teamId": 99924, "city": "北京"}, vague=False, openers=fragments(language)["openers"]["answer"]
        )
        assert "99924" in json_schema_to_grammar(json.dumps(answer))
    assert "accept" in json_schema_to_grammar(json.dumps(CHECKER_SCHEMA))


class _GrammarModel(BaseChatModel):
    """A chat model that claims grammar support, answers by role and records each request's kwargs."""

    supports_json_schema_grammar: ClassVar[bool] = True
    seen: ClassVar[list[tuple[str, dict[str, Any]]]] = []
    keys: ClassVar[list[tuple[str, str | None]]] = []

    @property
    def _llm_type(self) -> str:
        return "grammar-test"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        system = messages[0].content
        role = (
            "planner"
            if system.startswith("You are the planner")
            else "checker"
            if system.startswith("You review")
            else "tool"
            if system.startswith("You simulate")
            else "user"
            if system.startswith("You are a person") or system.startswith("You help write")
            else "agent"
        )
        self.seen.append((role, kwargs))
        self.keys.append((role, current_prefix_key()))
        planner_steps = sum(1 for r, _ in self.seen if r == "planner")
        text = {
            "user": "What's the weather in Oslo?",
            "checker": json.dumps({"verdict": "accept", "reason": "fine"}),
            "tool": json.dumps({"results": [{"city": "Oslo", "sky": "clear"}]}),
            "agent": "It is clear in Oslo.",
            "planner": json.dumps(
                {
                    "thought": "t",
                    "plan": "p",
                    "actions": [
                        {"name": "getWeather", "arguments": {"city": "Oslo"}, "depends_on": []}
                        if planner_steps == 1
                        else {"name": "prepare_to_answer", "arguments": {"answer_type": "tool"}, "depends_on": []}
                    ],
                }
            ),
        }[role]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


def test_ask_model_binds_the_schema_for_grammar_models_only(monkeypatch):
    monkeypatch.setitem(_registry, "grammartest", lambda name, settings: _GrammarModel())
    _GrammarModel.seen, _GrammarModel.keys = [], []
    spec = "grammartest:x"
    context = Context(models=dict.fromkeys(("user", "planner", "tool", "agent", "checker"), spec))
    plan = plan_sessions([[WEATHER, NEWS]], [("ST",)], seed=3)[0]
    outcome = asyncio.run(generate_session(plan, context))
    assert outcome.status == "done", outcome.reason
    formats = {role: kwargs.get("response_format") for role, kwargs in _GrammarModel.seen}
    # each role's requests continue the conversation of that role (a local server's slot per role)
    assert _GrammarModel.keys == [(role, f"role:{role}") for role, _ in _GrammarModel.seen]
    assert [role for role, _ in _GrammarModel.seen] == [
        "user",
        "planner",
        "checker",
        "tool",
        "checker",
        "planner",
        "agent",
    ]  # the answer step is the rules' call alone: the checker model judges calls and results
    assert formats["agent"]["schema"]["required"] == ["reply"]
    assert formats["user"]["type"] == "json_object"
    assert formats["user"]["schema"]["required"] == ["details", "message"]
    # the user's request is about the session's focus tool, with the generator's value fixed and stated
    focus = _focus_of(outcome)
    details = formats["user"]["schema"]["properties"]["details"]
    if focus == "getWeather":
        city = details["properties"]["city"]["const"]
        assert city in formats["user"]["schema"]["properties"]["message"]["pattern"]
    caps = {role: kwargs.get("max_tokens") for role, kwargs in _GrammarModel.seen}
    assert caps == {
        "user": USER_MAX_TOKENS,
        "agent": AGENT_MAX_TOKENS,
        "planner": JSON_MAX_TOKENS,
        "checker": JSON_MAX_TOKENS,
        "tool": JSON_MAX_TOKENS,
    }
    assert formats["checker"] == {"type": "json_object", "schema": CHECKER_SCHEMA}
    assert formats["tool"] == {"type": "json_object", "schema": tool_results_schema(1)}
    planner_formats = [kwargs.get("response_format") for role, kwargs in _GrammarModel.seen if role == "planner"]
    assert [_names(f["schema"]) for f in planner_formats] == [[focus], ["prepare_to_answer"]]
    # every request to a local model samples with its own seed, and the same run samples the same seeds
    seeds = [kwargs.get("seed") for _, kwargs in _GrammarModel.seen]
    assert all(isinstance(seed, int) and 0 <= seed < 2**31 for seed in seeds)
    assert len(set(seeds)) == len(seeds)
    _GrammarModel.seen, _GrammarModel.keys = [], []
    assert asyncio.run(generate_session(plan, context)).status == "done"
    assert [kwargs.get("seed") for _, kwargs in _GrammarModel.seen] == seeds


def _focus_of(outcome) -> str:
    """The focus tool of the session's first task (``tasks[0]["focus"]`` of the final state)."""
    return outcome.state["tasks"][0]["focus"][0]


class _PlainModel(_GrammarModel):
    supports_json_schema_grammar: ClassVar[bool] = False


def test_models_without_grammar_support_get_the_prompt_only(monkeypatch):
    monkeypatch.setitem(_registry, "plaintest", lambda name, settings: _PlainModel())
    _GrammarModel.seen = []
    spec = "plaintest:x"
    context = Context(models=dict.fromkeys(("user", "planner", "tool", "agent", "checker"), spec))
    outcome = asyncio.run(generate_session(plan_sessions([[WEATHER]], [("ST",)], seed=3)[0], context))
    assert outcome.status == "done", outcome.reason
    assert len(_GrammarModel.seen) == 7
    assert all("response_format" not in kwargs and "seed" not in kwargs for _, kwargs in _GrammarModel.seen)


def test_generate_defaults_every_role_to_local_one_session_at_a_time(monkeypatch):
    from wildtoolbench.common.concurrency import default_concurrency
    from wildtoolbench.generation.command import role_specs

    for role in ("USER", "PLANNER", "TOOL", "AGENT", "CHECKER"):
        monkeypatch.delenv(f"WTB_{role}_MODEL", raising=False)
    context = Context()
    assert context.user_models == ["local"]
    assert {context.model_spec(r) for r in ("planner", "tool", "agent", "checker")} == {"local"}
    roles = ("user", "planner", "checker", "tool", "agent")
    assert default_concurrency(*role_specs(context, roles)) == 1
    remote = {"user": "openai:a", "planner": "openai:b", "tool": "openai:c", "agent": "openai:d", "checker": "none"}
    assert default_concurrency(*role_specs(Context(models=remote), roles)) == 4
    # One role on the local server is enough to serialise the sessions.
    assert default_concurrency(*role_specs(Context(models={**remote, "tool": "gguf:/m.gguf"}), roles)) == 1


def test_a_retry_grammar_leaves_out_the_made_up_values():
    """docs/generation.md §2: a value nobody said cannot come back on the retry of the same step."""
    banned = [["getWeather", "days"]]
    call = planner_schema([WEATHER], "ST", banned=banned)["properties"]["actions"]["items"]["anyOf"][0]
    assert sorted(call["properties"]["arguments"]["properties"]) == ["city", "spots", "unit"]
    # a required value made up in a clarification task: no call of that tool, only the question
    clarify = planner_schema([WEATHER, NEWS], "CQ", banned=[["getWeather", "city"]])
    assert _names(clarify) == ["getNews", "ask_user_for_required_parameters"]
    # a single-tool task cannot ask: the call stays (the rules keep rejecting the made-up value)
    assert _names(planner_schema([WEATHER], "ST", banned=[["getWeather", "city"]])) == ["getWeather"]


def test_a_float_parameter_is_offered_its_default_as_a_number():
    """Measured (issue 25): ``typingSpeed`` ("type": "float", "The default value is 60.0.") was offered
    the text "60.0", so every try of the planner was rejected as "expected float, got str"."""
    from wildtoolbench.nodes.generation.role_schemas import _offers

    parameters = {
        "type": "object",
        "properties": {
            "typingSpeed": {"type": "float", "description": "Typing speed. The default value is 60.0."},
            "fontSize": {"type": "integer", "description": "Font size. The default value is 14."},
            "fontFamily": {"type": "string", "description": "Font type. The default value is 'sans-serif'."},
        },
    }
    assert _offers(parameters) == {"typingSpeed": [60.0], "fontSize": [14], "fontFamily": ["sans-serif"]}
    assert isinstance(_offers(parameters)["typingSpeed"][0], float)
