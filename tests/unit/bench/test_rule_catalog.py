"""The rule catalog (bench/rules, docs/generation.md §11): every rule id is triggered by a real check and
narrowly passed by a near miss (English, and Chinese where the rule reads text); the catalog's table
agrees with docs/generation.md; profiles select by id."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from wildtoolbench.bench.rules import PROFILES, RULE_CATALOG, Problem, markdown_table, rule_ids, select
from wildtoolbench.bench.rules.broken import broken_text
from wildtoolbench.bench.rules.decision import canonical_actions, decision_errors, repetition_errors
from wildtoolbench.bench.rules.reply import assistant_problems
from wildtoolbench.bench.rules.result import results_errors
from wildtoolbench.bench.rules.value import context_errors, placeholder_problem, shared_value_errors
from wildtoolbench.bench.rules.voice import voice_problems as voice
from wildtoolbench.bench.rules_session import session_rule_problems

ROOT = Path(__file__).resolve().parents[3]
WEATHER = {
    "name": "getWeather",
    "description": "Get the current weather of a city for a number of days.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "Name of the city to look up."},
            "days": {"type": "integer"},
            "date": {"type": "string", "description": "Day, YYYY-MM-DD."},
            "upc": {"type": "string"},
        },
        "required": ["city"],
    },
}
TOOLS = {"getWeather": WEATHER}
ENV = "2024-05-03 10:12:00 Friday"


def _call(name="getWeather", **arguments):
    return {"name": name, "arguments": arguments}


def _decide(*actions, layer="MT", nodes=(), texts=(ENV, "Weather in Paris for 3 days?"), profile="small", rejected=()):
    decision = {"actions": list(actions)}
    found = decision_errors(decision, tools=TOOLS, layer_type=layer, nodes=list(nodes))
    found += repetition_errors(decision, nodes=list(nodes), rejected=list(rejected))
    found += context_errors(decision, tools=TOOLS, texts=list(texts), today=None, profile=profile)
    return rule_ids(found)


CALLED = [{"name": "getWeather", "arguments": {"city": "Paris"}, "step": 0, "observation": {"t": 1}}]
ASK = "ask_user_for_required_parameters"
ANSWER = "prepare_to_answer"
RESULT = {"city": "Paris", "forecast": "sunny and warm all day long", "temperature_celsius": 24, "wind": "calm"}

# (rule id, trigger, near miss): each a function returning the rule ids the checks found.
DECISION_CASES = [
    ("structure.no_action", lambda: _decide(), lambda: _decide(_call(city="Paris"))),
    ("structure.not_alone",
     lambda: _decide(_call(city="Paris"), _call(ANSWER, answer_type="tool")),
     lambda: _decide(_call(ANSWER, answer_type="tool"), nodes=CALLED + CALLED[:0])),
    ("structure.too_many_calls",
     lambda: _decide(*[_call(city=c) for c in ("Paris", "Oslo", "Rome", "Bern", "Pisa", "Nice", "Lyon")],
                     texts=("Paris Oslo Rome Bern Pisa Nice Lyon",)),
     lambda: _decide(*[_call(city=c) for c in ("Paris", "Oslo", "Rome", "Bern", "Pisa", "Nice")],
                     texts=("Paris Oslo Rome Bern Pisa Nice",))),
    ("structure.arguments_object",
     lambda: _decide({"name": "getWeather", "arguments": "Paris"}), lambda: _decide(_call(city="Paris"))),
    ("structure.depends_on",
     lambda: _decide({**_call(city="Paris"), "depends_on": [3]}, nodes=CALLED),
     lambda: _decide({**_call(city="Paris", days=3), "depends_on": [0]}, nodes=CALLED)),
    ("structure.unknown_tool", lambda: _decide(_call("getWether", city="Paris")), lambda: _decide(_call(city="Paris"))),
    ("decision.schema", lambda: _decide(_call(city="Paris", days="3")), lambda: _decide(_call(city="Paris", days=3))),
    ("decision.question_tool",
     lambda: _decide(_call(ASK, tool_name="getWether", missing_required_parameters=["city"]), layer="CQ"),
     lambda: _decide(_call(ASK, tool_name="getWeather", missing_required_parameters=["city"]), layer="CQ")),
    ("decision.question_parameters",
     lambda: _decide(_call(ASK, tool_name="getWeather", missing_required_parameters=["town"]), layer="CQ"),
     lambda: _decide(_call(ASK, tool_name="getWeather", missing_required_parameters=["city"]), layer="CQ")),
    ("decision.question_repeats",
     lambda: _decide(_call(ASK, tool_name="getWeather", missing_required_parameters=["city", "city"]), layer="CQ"),
     lambda: _decide(_call(ASK, tool_name="getWeather", missing_required_parameters=["city", "days"]), layer="CQ")),
    ("decision.answer_type",
     lambda: _decide(_call(ANSWER, answer_type="chat"), nodes=CALLED),
     lambda: _decide(_call(ANSWER, answer_type="tool"), nodes=CALLED * 2)),
    ("decision.answer_arguments",
     lambda: _decide(_call(ANSWER, answer_type="tool", text="hi"), nodes=CALLED * 2),
     lambda: _decide(_call(ANSWER, answer_type="tool"), nodes=CALLED * 2)),
    ("decision.task_type",
     lambda: _decide(_call(ANSWER, answer_type="tool"), nodes=CALLED),
     lambda: _decide(_call(ANSWER, answer_type="tool"), nodes=CALLED, layer="ST")),
    ("decision.repeated_call",
     lambda: _decide(_call(city="Paris"), nodes=CALLED), lambda: _decide(_call(city="Paris", days=3), nodes=CALLED)),
    ("decision.repeated_in_step",
     lambda: _decide(_call(city="Paris"), _call(city="Paris")),
     lambda: _decide(_call(city="Paris"), _call(city="Paris", days=3))),
    ("decision.repeats_rejected",
     lambda: _decide(_call(city="Paris"), rejected=[canonical_actions({"actions": [_call(city="Paris")]})]),
     lambda: _decide(_call(city="Paris"), rejected=[canonical_actions({"actions": [_call(city="Oslo")]})])),
    ("value.not_in_context", lambda: _decide(_call(city="Lyon")), lambda: _decide(_call(city="paris"))),
    ("value.invented",
     lambda: _decide(_call(city="Paris", upc="ORD-4471"), profile="standard"),
     lambda: _decide(_call(city="Paris", upc="ORD-4471"), profile="standard", texts=("order ORD-4471 in Paris",))),
    ("value.placeholder",
     lambda: _decide(_call(city="<city>"), profile="standard"),
     lambda: _decide(_call(city="Paris"), profile="standard")),
    ("value.date_misplaced",
     lambda: _decide(_call(city="Paris", upc="2024-05-03"), texts=(ENV, "Paris")),
     lambda: _decide(_call(city="Paris", date="2024-05-03"), texts=(ENV, "Paris"))),
    ("value.shared", lambda: _decide(_call(city="Paris", upc="Paris")), lambda: _decide(_call(city="Paris", upc="3"))),
]  # fmt: skip


def _results(results, calls=(_call(city="Oslo"),), earlier=()):
    return rule_ids(results_errors(results, list(calls), list(earlier), TOOLS))


RESULT_CASES = [
    ("structure.result_count", lambda: _results([{"a": 1}, {"b": 2}]), lambda: _results([{"a": 1}])),
    ("result.empty", lambda: _results([{}]), lambda: _results([{"temp": 0}])),
    ("result.copies_definition",
     lambda: _results([{"info": "Get the current weather of a city for a number of days."}]),
     lambda: _results([{"info": "The current weather of Oslo: rain for two days."}])),
    ("result.copies_other",
     lambda: _results([RESULT], earlier=[{**_call(city="Paris"), "observation": RESULT}]),
     lambda: _results([RESULT], calls=[_call(city="Paris")], earlier=[{**_call(city="Paris"), "observation": RESULT}])),
]  # fmt: skip


def _ids(found):
    return rule_ids(found)


# (rule id, language, trigger text, near-miss text) of the voice rules (a task's opening message)
VOICE_CASES = [
    ("voice.thanks", "en", "Thank you for providing the forecast.", "Thank you, what about Paris tomorrow?"),
    ("voice.thanks", "zh", "感谢您提供天气信息。", "谢谢，那巴黎明天呢？"),
    ("voice.as_ai", "en", "As an AI, I check the weather.", "As a pilot, I check the weather."),
    ("voice.as_ai", "zh", "作为一个AI，我查天气。", "作为一个飞行员，我查天气。"),
    ("voice.asks_to_provide", "en", "Please provide your city.", "Please give Paris a look."),
    ("voice.asks_to_provide", "zh", "请提供城市名称。", "请查一下巴黎。"),
    ("voice.offers_help", "en", "How can I help with the weather?", "How can I dress for the weather?"),
    ("voice.offers_help", "zh", "我可以为您查询天气。", "我想查询天气。"),
    ("voice.stray_symbols", "en", "Paris weather ##### now", "Paris weather #1 now"),
    ("voice.speaker_label", "en", "User: weather in Paris?", "Users of Paris want the weather?"),
    ("voice.declines", "en", "I'm unable to provide the city.", "I'm unable to travel to the city."),
    ("voice.presents_results", "en", "Here are the results for Paris.", "Here are my plans for Paris."),
    ("voice.presents_results", "zh", "以下是您的天气结果。", "以下哪个城市更暖和？"),
    ("voice.explains_how", "en", "You can use the weather tool.", "Can you use a warmer jacket?"),
    ("voice.code_quote", "en", "Check `getWeather` for Paris.", "Check 'getWeather' for Paris."),
    ("voice.asks_what_user_wants", "en", "What else can I do for you in Paris?", "What else can I do in Paris?"),
    ("voice.apologises", "en", "I apologize, the weather in Paris?", "I apologized to Paris."),
    ("voice.offers_to_act", "en", "Would you like me to check Paris?", "Would you check Paris?"),
    ("voice.advises", "en", "You might want to check Paris.", "I might want to check Paris."),
    ("voice.answers_as_assistant", "en", "Sure, here is the weather in Paris.", "Sure, the weather in Paris?"),
    ("voice.placeholder_brackets", "en", "Weather in [City Name]?", "Weather in Paris [1]?"),
    ("voice.placeholder_braces", "en", "Weather in {city}?", "Weather in {'Paris'}?"),
    ("voice.env_line", "en", "The current date is 2024-05-03, weather?", "The current weather in Paris?"),
    ("voice.env_line", "zh", "当前日期是五月三日，天气呢？", "当前天气怎么样？"),
    ("voice.instructions", "en", "Write it again: the weather in Paris.", "Write to Paris again about the weather."),
    ("voice.instructions", "zh", "用你自己的话说巴黎天气。", "用你的伞去巴黎。"),
    ("voice.meta_assistant", "en", "What can the AI assistant do?", "What can the air do to Paris?"),
    ("voice.meta_assistant", "zh", "AI助手能做什么？", "助手能做什么？"),
    ("voice.meta_tools", "en", "Which of these tools do I need?", "Which of these hats do I need?"),
    ("voice.meta_tools", "zh", "这些工具能查天气吗？", "这些城市能查天气吗？"),
    ("voice.meta_capabilities", "en", "What can you do?", "What can you tell me about Paris?"),
    ("voice.meta_capabilities", "zh", "你能做什么？", "你能查巴黎吗？"),
    ("text.language", "en", "Weather in 巴黎?", "Weather in Paris？"),
]


def test_the_voice_rules_stamp_the_environment_line_and_chinese_applies_the_english_phrases():
    assert _ids(voice("Paris at 2024-05-03 10:12 please", env_info=ENV)) == ["voice.env_line"]
    assert _ids(voice("Paris on 2024-05-03 please", env_info=ENV)) == []
    assert "voice.offers_help" in _ids(voice("我想 how can I help", "zh"))


# (rule id, language, trigger kwargs, near-miss kwargs) of the assistant's texts
REPLY_CASES = [
    ("reply.echo_request", "en",
     {"text": "You want the weather in Paris for the next three days", "user_texts": ["the weather in Paris for the next three days please"]},
     {"text": "Paris will be sunny for the next three days, at 24 degrees", "user_texts": ["the weather in Paris for the next three days please"]}),
    ("reply.echo_request", "zh",
     {"text": "你要查询巴黎未来三天的天气情况和风力大小吗", "user_texts": ["请帮我查询巴黎未来三天的天气情况和风力大小"], "language": "zh"},
     {"text": "巴黎未来三天晴朗，气温二十四度，风力很小。", "user_texts": ["请帮我查询巴黎未来三天的天气情况和风力大小"], "language": "zh"}),
    ("reply.echo_earlier", "en",
     {"text": "Oslo has heavy rain and a strong wind from the north today.", "replies": [("Oslo has heavy rain and a strong wind from the north today.", "oslo heavy rain north")], "results": "paris sunny"},
     {"text": "Oslo has heavy rain and a strong wind from the north today.", "replies": [("Oslo has heavy rain and a strong wind from the north today.", "oslo heavy rain north")], "results": "oslo heavy rain north"}),
    ("reply.template_slot", "en", {"text": "The team {teamId} won."}, {"text": 'The result is {"teamId": 9}.'}),
    ("reply.identifier_only", "en", {"text": "paris_sunny_24", "results": "paris sunny 24", "use_results": True},
     {"text": "Paris: sunny, 24", "results": "paris sunny 24", "use_results": True}),
    ("reply.repeats_sentence", "en", {"text": "It is sunny in Paris. It is sunny in Paris."},
     {"text": "It is sunny in Paris. It is warm in Paris."}),
    ("reply.repeats_sentence", "zh", {"text": "巴黎今天晴朗。巴黎今天晴朗。"}, {"text": "巴黎今天晴朗。奥斯陆今天下雨。"}),
    ("reply.prompt_label", "en", {"text": "What the results say: sunny."}, {"text": "The results: sunny."}),
    ("reply.prompt_label", "zh", {"text": "结果的要点：晴。", "language": "zh"}, {"text": "结果：晴。", "language": "zh"}),
    ("reply.ends_colon", "en", {"text": "The weather in Paris is as follows:"}, {"text": "The weather in Paris: sunny."}),
    ("reply.no_result_facts", "en", {"text": "Done, all set.", "results": '{"forecast": "sunny"}', "use_results": True},
     {"text": "It will be sunny.", "results": '{"forecast": "sunny"}', "use_results": True}),
    ("reply.env_line", "en", {"text": "As of 2024-05-03 10:12:00 it is sunny.", "env_info": ENV},
     {"text": "As of 2024-05-03 it is sunny.", "env_info": ENV}),
    ("text.language", "en", {"text": "It is sunny in 巴黎."}, {"text": "It is sunny in Paris！"}),
]  # fmt: skip


# zh cases of the voice rules without a Chinese phrase of their own: the Chinese side applies the English
# phrases, so a Chinese session's turn holding one is caught and the same turn without it passes.
VOICE_CASES += [
    ("voice.stray_symbols", "zh", "巴黎天气 ##### 现在", "巴黎天气 #1 现在"),
    ("voice.speaker_label", "zh", "User: 巴黎天气怎么样？", "巴黎的用户想知道天气？"),
    ("voice.declines", "zh", "I'm unable to provide 城市。", "我没法去那个城市。"),
    ("voice.explains_how", "zh", "You can use 天气工具。", "我能穿暖和一点吗？"),
    ("voice.code_quote", "zh", "查一下`getWeather`巴黎。", "查一下'getWeather'巴黎。"),
    ("voice.asks_what_user_wants", "zh", "What else can I do for you 在巴黎？", "我在巴黎还能做什么？"),
    ("voice.apologises", "zh", "I apologize，巴黎天气呢？", "我向巴黎道过歉了。"),
    ("voice.offers_to_act", "zh", "Would you like me to 查巴黎？", "你会查巴黎吗？"),
    ("voice.advises", "zh", "You might want to 查巴黎。", "我可能想查巴黎。"),
    ("voice.answers_as_assistant", "zh", "Sure, here is 巴黎的天气。", "巴黎的天气呢？"),
    ("voice.placeholder_brackets", "zh", "[City Name]的天气？", "巴黎[1]的天气？"),
    ("voice.placeholder_braces", "zh", "{city}的天气？", "{'巴黎'}的天气？"),
]

REPLY_CASES += [
    ("reply.echo_earlier", "zh",
     {"text": "奥斯陆今天有大雨并且北风很强劲。", "replies": [("奥斯陆今天有大雨并且北风很强劲。", "奥斯陆 大雨 北风")],
      "results": "巴黎 晴", "language": "zh"},
     {"text": "奥斯陆今天有大雨并且北风很强劲。", "replies": [("奥斯陆今天有大雨并且北风很强劲。", "奥斯陆 大雨 北风")],
      "results": "奥斯陆 大雨 北风", "language": "zh"}),
    ("reply.template_slot", "zh", {"text": "球队{teamId}赢了。", "language": "zh"},
     {"text": '结果是{"teamId": 9}。', "language": "zh"}),
    ("reply.identifier_only", "zh", {"text": "paris_sunny_24", "results": "巴黎 晴 24", "use_results": True, "language": "zh"},
     {"text": "巴黎：晴，24", "results": "巴黎 晴 24", "use_results": True, "language": "zh"}),
    ("reply.ends_colon", "zh", {"text": "巴黎的天气如下：", "language": "zh"}, {"text": "巴黎的天气：晴。", "language": "zh"}),
    ("reply.no_result_facts", "zh", {"text": "好的，完成了。", "results": '{"天气": "晴"}', "use_results": True, "language": "zh"},
     {"text": "天气晴。", "results": '{"天气": "晴"}', "use_results": True, "language": "zh"}),
    ("reply.env_line", "zh", {"text": "截至2024-05-03 10:12:00天气晴。", "env_info": ENV, "language": "zh"},
     {"text": "截至2024-05-03天气晴。", "env_info": ENV, "language": "zh"}),
]  # fmt: skip

BROKEN_CASES = [
    ("text.cut_off", "en", "Then set the forecast with the days set to", "Then set the forecast with the days set to 3"),
    ("text.cut_off", "en", "It shows temperature changes of a", "Count me in"),
    ("text.cut_off", "zh", "我想查一下北京和", "这是我找到的"),
    ("text.parameter_fragment", "en", "Use it for a yearly_consum of 300.", "Use it for a yearly_consumption of 300."),
    ("text.parameter_fragment", "zh", "按yearly_consum为300计算。", "按yearly_consumption为300计算。"),
    ("text.stray_bracket", "en", "before we proceed to} Central", "before we proceed to {Central}"),
    ("text.stray_bracket", "zh", "【巴黎天气", "【巴黎】天气"),
]


def _state(language="en"):
    from wildtoolbench.nodes.generation.state import State

    tools = [{"type": "function", "function": WEATHER}]
    return State(tools=tools, layer_types=("CQ", "ST"), env_info=ENV, seed=1, language=language)


def _message(language, text, details=None, missing="", assistant=()):
    from wildtoolbench.nodes.generation.user import message_problems

    return _ids(message_problems(_state(language), text, details, kind="open", missing=missing, functions=[WEATHER],
                                 assistant=list(assistant)))  # fmt: skip


def _hint(language, key):
    from wildtoolbench.prompts import fragments

    return fragments(language)["retry_hints"][key]


SAID_EN = ["It is sunny and warm in Paris today, 24 degrees."]
SAID_ZH = ["巴黎今天晴朗温暖，气温二十四度。"]
DESCRIBED = "Name of the city to look up"
# (rule id, language, trigger kwargs, near-miss kwargs) of a user message (nodes.generation.user.message_problems)
USER_CASES = [
    ("structure.empty_text", "en", {"text": ""}, {"text": "Weather in Paris?"}),
    ("value.empty", "en", {"text": "Weather in Paris?", "details": {"city": " "}},
     {"text": "Weather in Paris?", "details": {"city": "Paris"}}),
    ("value.empty", "zh", {"text": "巴黎天气？", "details": {"city": " "}}, {"text": "巴黎天气？", "details": {"city": "巴黎"}}),
    ("value.placeholder", "en", {"text": "Weather in example?", "details": {"city": "example"}},
     {"text": "Weather in Paris?", "details": {"city": "Paris"}}),
    ("value.placeholder", "zh", {"text": "<city>的天气？", "details": {"city": "<city>"}},
     {"text": "巴黎的天气？", "details": {"city": "巴黎"}}),
    ("value.copies_description", "en", {"text": f"Weather for {DESCRIBED}?", "details": {"city": DESCRIBED}},
     {"text": "Weather for the city of love?", "details": {"city": "the city of love"}}),
    ("value.copies_description", "zh", {"text": f"{DESCRIBED}的天气？", "details": {"city": DESCRIBED}},
     {"text": "浪漫之都巴黎的天气？", "details": {"city": "浪漫之都巴黎"}}),
    ("value.unstated", "en", {"text": "Weather, please?", "details": {"city": "Paris"}},
     {"text": "Weather in Paris?", "details": {"city": "Paris"}}),
    ("value.unstated", "zh", {"text": "天气怎么样？", "details": {"city": "巴黎"}},
     {"text": "巴黎天气怎么样？", "details": {"city": "巴黎"}}),
    ("value.gives_missing", "en", {"text": "Weather in Paris?", "details": {"city": "Paris"}, "missing": "city"},
     {"text": "Weather?", "details": {}, "missing": "city"}),
    ("value.gives_missing", "zh", {"text": "巴黎天气？", "details": {"city": "巴黎"}, "missing": "city"},
     {"text": "天气？", "details": {}, "missing": "city"}),
    ("voice.echo", "en", {"text": "so it is sunny and warm in Paris today", "assistant": SAID_EN},
     {"text": "is it sunny in Paris today?", "assistant": SAID_EN}),
    ("voice.echo", "zh", {"text": "所以巴黎今天晴朗温暖气温二十四度吗", "assistant": SAID_ZH},
     {"text": "巴黎明天也晴朗吗？", "assistant": SAID_ZH}),
    ("voice.copies_hint", "en", {"text": "Write only the person's own request please"}, {"text": "Write to Paris"}),
    ("voice.copies_hint", "zh", {"text": "只写这个人自己的请求吧"}, {"text": "只写巴黎的天气吧"}),
]  # fmt: skip


def _agent(language, text, kind="question"):
    from wildtoolbench.nodes.generation.agent import agent_text_problems

    task = {"user_message": "Weather in Paris?" if language == "en" else "巴黎天气？", "nodes": []}
    return _ids(agent_text_problems(text, task, kind, _state(language)))


AGENT_CASES = [
    ("reply.copies_hint", "en", lambda: _agent("en", f"Sunny; {_hint('en', 'reply_once')}"),
     lambda: _agent("en", "Sunny; I say each thing once.")),
    ("reply.copies_hint", "zh", lambda: _agent("zh", f"晴；{_hint('zh', 'reply_values')}"),
     lambda: _agent("zh", "晴；花括号里没有名字。")),
]


def _session(message, arguments, observation, reply="It is sunny in Paris, 24 degrees.", env=ENV, second=None):
    nodes = [
        {"action": {"name": "getWeather", "arguments": arguments}, "observation": observation, "dependency_list": []},
    ]
    if second is not None:
        nodes.append(second)
    nodes.append({"action": {"name": ANSWER, "arguments": {"answer_type": "tool"}}, "observation": reply,
                  "dependency_list": [0]})  # fmt: skip
    return {"id": "s", "english_env_info": env, "english_tasks": [message], "english_answer_list": [nodes],
            "english_tools": [{"type": "function", "function": WEATHER}]}  # fmt: skip


def _session_ids(message):
    return _ids(session_rule_problems(_session(message, {"city": "Paris"}, {"forecast": "sunny", "t": 24})))


def _scorer(value):
    listed = {"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": ["string", "integer"]}}}}
    return _ids(decision_errors({"actions": [_call("f", x=value)]}, tools={"f": listed}, layer_type="MT", nodes=[]))


def _checker(kind, text):
    """The rule ids the checker node's reading of a role's output or of the Checker model's verdict gives."""
    from wildtoolbench.nodes.generation.checker import model_verdict_problems, output_problems
    from wildtoolbench.nodes.generation.state import PlannerDecision

    if kind == "output":
        _decision, error = PlannerDecision.parse(text)
        return _ids(output_problems({"error": error}))
    return _ids(model_verdict_problems(text))


OTHER_CASES = [
    ("value.concrete", "en", lambda: _session_ids("Can you look that up?"), lambda: _session_ids("Weather in Paris?")),
    ("decision.scorer_schema", "en", lambda: _scorer(1.5), lambda: _scorer("a")),
    ("structure.unreadable", "en", lambda: _checker("output", "I think getWeather(Paris)"),
     lambda: _checker("output", '{"thought": "t", "plan": "p", "actions": [{"name": "getWeather", "arguments": {}}]}')),
    ("model.rejected", "en", lambda: _checker("model", '{"verdict": "reject", "reason": "wrong city"}'),
     lambda: _checker("model", '{"verdict": "accept", "reason": "wrong city? no, right"}')),
    ("model.unreadable", "en", lambda: _checker("model", "reject, wrong city"),
     lambda: _checker("model", '{"verdict": "reject", "reason": "wrong city"}')),
]  # fmt: skip


def _cases():
    """Every (rule id, language, trigger, near miss) of the tables above, the two as functions returning the
    rule ids the real checks found."""
    rows = [(rule, "en", trigger, miss) for rule, trigger, miss in DECISION_CASES + RESULT_CASES]
    voice_ids = lambda text, language: _ids(voice(text, language, opening=True, env_info=ENV))  # noqa: E731
    rows += [(rule, lang, lambda t=t, lang=lang: voice_ids(t, lang), lambda m=m, lang=lang: voice_ids(m, lang))
             for rule, lang, t, m in VOICE_CASES]  # fmt: skip
    reply_ids = lambda kwargs: _ids(assistant_problems(**kwargs))  # noqa: E731
    rows += [(rule, lang, lambda t=t: reply_ids(t), lambda m=m: reply_ids(m)) for rule, lang, t, m in REPLY_CASES]
    names = ["yearly_consumption", "city"]
    rows += [(rule, lang, lambda t=t: _ids(broken_text(t, names)), lambda m=m: _ids(broken_text(m, names)))
             for rule, lang, t, m in BROKEN_CASES]  # fmt: skip
    rows += [(rule, lang, lambda t=t, lang=lang: _message(lang, **t), lambda m=m, lang=lang: _message(lang, **m))
             for rule, lang, t, m in USER_CASES]  # fmt: skip
    return rows + AGENT_CASES + OTHER_CASES


CASES = _cases()
TEXT_FAMILIES = ("voice", "reply", "text")
"""Families whose rules read a text in the session's language: each needs a Chinese case too when the rule
applies to Chinese sessions (the others judge calls, values and results, in no language)."""


@pytest.mark.parametrize(("rule", "language", "trigger", "miss"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_rule_triggers_and_passes_its_near_miss(rule, language, trigger, miss):
    found, passed = trigger(), miss()
    assert rule in found, found
    assert rule not in passed, passed


def test_every_rule_id_has_a_trigger_and_a_near_miss_in_each_language_it_reads():
    """The catalog is enumerated: an id without an English case, or a text rule of Chinese sessions
    without a Chinese case, fails here (each case is a trigger and a near miss, run above)."""
    have = {(rule, language) for rule, language, _t, _m in CASES}
    missing = []
    for rule_id, rule in RULE_CATALOG.items():
        wanted = ["en"] if "en" in rule.languages else []
        if rule.family in TEXT_FAMILIES and "zh" in rule.languages:
            wanted.append("zh")
        missing += [f"{rule_id} ({language})" for language in wanted if (rule_id, language) not in have]
    assert missing == []
    assert {rule for rule, _l, _t, _m in CASES} <= set(RULE_CATALOG)


def test_every_rule_names_a_check_that_exists_in_its_home():
    """A rule's ``check`` is a function of the catalog's own package (``rules.<module>.<function>``), or of
    the node that judges what only the graph sees (the user's and agent's texts, the checker's reading); no
    rule is checked in ``generation_checks`` or ``generation_quality`` (they read outputs, they judge nothing)."""
    import importlib

    for rule_id, rule in RULE_CATALOG.items():
        module, _dot, name = rule.check.rpartition(".")
        assert rule.check.startswith(("rules.", "nodes.generation.")), (rule_id, rule.check)
        base = "wildtoolbench." if module.startswith("nodes.") else "wildtoolbench.bench."
        assert callable(getattr(importlib.import_module(base + module), name, None)), (rule_id, rule.check)


def test_value_rules_of_user_details():
    assert placeholder_problem("example").rule == "value.placeholder" and not placeholder_problem("Paris")
    described = ["name of the city to look up."]
    assert placeholder_problem("name of the city to look up", described).rule == "value.copies_description"
    assert not placeholder_problem("city of love", described)  # 12 characters, but in no description
    assert _ids(shared_value_errors({"a": "Paris", "b": "paris"})) == ["value.shared"]


def test_profiles_select_by_id_and_small_keeps_everything():
    problems = [Problem("a", "voice.code_quote"), Problem("b", "decision.schema"), Problem("c", "structure.no_action"),
                Problem("d", "text.cut_off"), "plain"]  # fmt: skip
    assert select(problems, "small", "user") == problems[:3] + problems[4:]
    assert select(problems, "standard", "user") == problems[1:]
    assert select(problems, "off", "planner") == [problems[2], problems[4]]
    assert select(problems, "small") == problems  # a finished session: broken text counts under small too
    assert all(rule.profiles <= set(PROFILES) and rule.doc.startswith("docs/") for rule in RULE_CATALOG.values())
    assert all(re.fullmatch(r"[a-z]+\.[a-z_]+", rule_id) and rule_id.startswith(RULE_CATALOG[rule_id].family + ".")
               for rule_id in RULE_CATALOG)  # fmt: skip


def test_docs_list_the_catalog():
    """docs/generation.md §11.1 holds the catalog's table exactly (regenerate it with
    ``python -c "from wildtoolbench.bench.rules import markdown_table; print(markdown_table())"``)."""
    text = (ROOT / "docs" / "generation.md").read_text(encoding="utf-8")
    block = text.split("<!-- rules:begin -->\n", 1)[1].split("\n<!-- rules:end -->", 1)[0]
    assert block == markdown_table()


def test_wtb_generate_lists_the_rules():
    from typer.testing import CliRunner

    from wildtoolbench.cli import app

    result = CliRunner().invoke(app, ["generate", "--list-rules"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert [line.split()[0] for line in lines] == list(RULE_CATALOG)
    assert lines[list(RULE_CATALOG).index("value.invented")].split()[1:3] == ["value", "standard"]
