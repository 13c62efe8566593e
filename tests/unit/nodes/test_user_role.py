"""The user role's grammar and drafts, and the planner grammar's known values (docs/generation.md §2, §4.3, §4.4).

The patterns are checked with Python's ``re`` here (the same subset llama.cpp reads; the runtime's own
converter is exercised in test_role_schemas.py).
"""

from __future__ import annotations

import re

from wildtoolbench.nodes.generation.agent import agent_schema, read_agent_text
from wildtoolbench.nodes.generation.role_schemas import KnownValues, planner_schema
from wildtoolbench.nodes.generation.state import State
from wildtoolbench.nodes.generation.text_patterns import message_pattern, sentences_pattern
from wildtoolbench.nodes.generation.user_details import answer_schema, planned_details, user_schema
from wildtoolbench.nodes.generation.user_drafts import answer_draft, chat_draft, draft_request
from wildtoolbench.prompts import fragments

WEATHER = {
    "name": "getWeather",
    "description": "Get the current weather of a city.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name."},
            "unit": {"type": "string", "enum": ["C", "F"]},
            "days": {"type": "integer", "description": "Days ahead."},
        },
        "required": ["city"],
    },
}
DICTIONARY = {
    "name": "defineWord",
    "description": "This tool is used to look up the definition of an English word.",
    "parameters": {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]},
}
ROSTER = {
    "name": "getRoster",
    "description": "Get the roster of a team.",
    "parameters": {
        "type": "object",
        "properties": {"teamId": {"type": "integer", "description": "The team's id."}},
        "required": ["teamId"],
    },
}


def _state(**fields) -> State:
    base = {
        "tools": [{"type": "function", "function": f} for f in (WEATHER, DICTIONARY, ROSTER)],
        "layer_types": ("ST", "ST"),
        "env_info": "2024-05-03 10:12:00 Friday",
        "seed": 7,
        "language": "en",
    }
    return State(**{**base, **fields})


def _results_rejected(*reasons: str, rules: tuple[str, ...] = ()) -> dict:
    """The transcript entry of a checker verdict that rejected tool results for ``reasons`` (rule ids ``rules``)."""
    return {"role": "checker", "checked": "results", "verdict": "reject", "source": "rules",
            "reasons": list(reasons), "rules": list(rules), "reason": "; ".join(reasons)}  # fmt: skip


def _matches(pattern: str, text: str) -> bool:
    return re.fullmatch(pattern, text) is not None


def test_a_message_opens_like_a_user_and_states_each_value_as_a_word():
    pattern = message_pattern(["Can you", "I need"], ["Paris", 99924])
    assert _matches(pattern, "Can you check Paris for team 99924?")
    assert _matches(pattern, "I need Paris, 99924.")
    assert not _matches(pattern, "Thank you for the tools. Paris 99924")  # the assistant's opening
    assert not _matches(pattern, "Can you check team 99924 in Paris?")  # order as planned
    assert not _matches(pattern, "Can you check theR99924 in Paris")
    assert not _matches(pattern, "Can you check Paris for team.99924")  # ".99924" reads as a decimal
    assert not _matches(pattern, 'Can you check Paris for 99924 "now"')  # a quote would end the JSON string
    assert not _matches(pattern, "Can you check Paris for 99924.\nMore")
    # a long ramble cannot fit: at most one sentence end between two values, 80 characters a run
    assert not _matches(pattern, "Can you " + "check " * 40 + "Paris for 99924")
    assert not _matches(pattern, "Can you check Paris. Then this. Then that. And 99924")
    chinese = message_pattern(["请"], ["北京"], "zh")
    assert _matches(chinese, "请帮我查北京明天的天气。")
    # on the English side a CJK character is no border: a small model's stray one cannot glue a value on
    assert not _matches(message_pattern(["Can you"], ["CSV"]), "Can you check that馆CSV")


def test_sentences_pattern_bounds_the_assistant_text():
    question = sentences_pattern(["What", "Which"], sentences=2, end="?？")
    assert _matches(question, "What is the team ID?")
    assert not _matches(question, "How do I use the `getRoster` tool?")
    assert not _matches(question, "What is it? Which one? And why?")
    reply = sentences_pattern((), sentences=4)
    assert _matches(reply, "It is sunny in Paris. Highs of 21 degrees.")
    assert not _matches(reply, "## Conversation so far\n(none)")


def test_grammar_text_ends_as_a_sentence_with_whole_words_and_no_brackets():
    """The broken texts of the bundled model's demo run (docs/generation.md §10: text.cut_off,
    text.parameter_fragment, text.stray_bracket) cannot be sampled under the user and agent grammars."""
    message = message_pattern(["Can you", "I"], ["Central"])
    assert _matches(message, "I want it before we proceed to Central.")
    assert not _matches(message, "I want it before we proceed to} Central.")  # a stray bracket
    assert not _matches(message, "I want it before we proceed to [Central].")
    assert not _matches(message, "I want it at Central, before we proceed to")  # cut off: no sentence end
    # the bound of a run is in whole words: 17 words of 94 characters fit (80 characters cut a word before)
    long_run = "I also want to compare the electricity tariffs available at an address for a yearly_consumption"
    assert len(long_run) > 90 and _matches(message, long_run + " in Central.")
    assert not _matches(message, "Can you " + "check " * 60 + "Central.")  # a ramble still does not fit
    reply = sentences_pattern((), sentences=4)
    assert _matches(reply, "The schedule starts on 2024-01-20, with the days set to Monday and Friday.")
    assert not _matches(reply, "The schedule starts on 2024-01-20, with the days set to")
    assert not _matches(reply, "The days are set to {Monday}.")
    assert not _matches(reply, "Ahmed Khan's age is estimated to be 23.} \t{.")  # the seed-0 run's reply
    assert not _matches(reply, "Ahmed Khan's age is estimated to be 23. \tHe is in GB.")
    sentence = "Based on your request the meter recorded " + "a steady use of energy " * 8 + "in total."
    assert len(sentence) > 200 and _matches(reply, sentence)  # 200 characters cut "of a" before
    assert not _matches(reply, "It " + "rained " * 60 + "today.")
    chinese = sentences_pattern((), sentences=4, language="zh")
    assert _matches(chinese, "北京明天晴。") and not _matches(chinese, "北京明天}晴。")


def test_the_agent_reads_its_json_field_or_plain_text():
    state = _state()
    assert agent_schema(state, "question")["required"] == ["question"]
    assert read_agent_text('{"question": " What is the team ID? "}', "question") == "What is the team ID?"
    assert read_agent_text("It is sunny.", "reply") == "It is sunny."
    assert read_agent_text('{"reply": "cut off', "reply") == ""


def test_user_schema_fixes_planned_values_and_states_them_but_implicit_ones():
    schema = user_schema([WEATHER, ROSTER], "", [{"city": "Paris"}, {"teamId": 99924}], ["Can you"], {(1, "teamId")})
    details = schema["properties"]["details"]["properties"]
    assert details["request_1"]["properties"]["city"] == {"const": "Paris"}
    assert details["request_2"]["properties"]["teamId"] == {"const": 99924}
    pattern = schema["properties"]["message"]["pattern"]
    assert "Paris" in pattern and "99924" not in pattern  # said before: referred to, not repeated
    free = user_schema([DICTIONARY], "", [{"word": None}])
    assert free["properties"]["details"]["properties"]["word"] == {"type": "string", "maxLength": 60}
    assert free["properties"]["message"] == {"type": "string", "maxLength": 300}


def test_planned_details_reuse_what_the_user_said_before():
    state = _state(tasks=[{"layer_type": "ST", "nodes": [], "given": [{"city": "Lisbon"}]}])
    plans, implicit = planned_details(state, [WEATHER], "", 1)
    assert plans == [{"city": "Lisbon"}]
    assert implicit == {(0, "city")}
    first, none = planned_details(_state(), [WEATHER, ROSTER], "", 0)
    assert none == set()
    assert first[0]["city"] in {"Paris", "Tokyo", "Chicago", "Barcelona", "Toronto", "Sydney", "Berlin", "Seattle",
                                "Lisbon", "Denver"}  # fmt: skip
    assert isinstance(first[1]["teamId"], int) and 1000 <= first[1]["teamId"] <= 99999
    assert first == planned_details(_state(), [WEATHER, ROSTER], "", 0)[0]  # the session's seed decides
    # a clarification task leaves the missing parameter out of the plan (the first property stands in)
    assert planned_details(_state(), [ROSTER], "teamId", 0)[0] == [{}]


def test_drafts_read_as_a_request_with_its_values():
    state = _state()
    draft = draft_request(state, [WEATHER, ROSTER], [{"city": "Paris"}, {"teamId": 99924}])
    assert draft == (
        "Can you get the current weather of a city, and also get the roster of a team? "
        "The city is Paris. The team ID is 99924."
    )
    implicit = draft_request(state, [WEATHER], [{"city": "Paris"}], {(0, "city")})
    assert implicit == "Can you get the current weather of a city?"
    ask = {"name": "ask_user_for_required_parameters", "arguments": {"tool_name": "getRoster"}}
    assert answer_draft(state, ask, {"teamId": 99924}) == "The team ID is 99924."
    assert chat_draft(state, 1) in fragments("en")["chat_drafts"]
    assert chat_draft(state, 1) == chat_draft(state, 1)


def test_every_chat_draft_opens_with_a_chat_opener():
    for language in ("en", "zh"):
        openers = fragments(language)["openers"]["chat"]
        for draft in fragments(language)["chat_drafts"]:
            assert _matches(message_pattern(openers), draft), (language, draft)


def test_answer_schema_fixes_the_asked_values_and_a_vague_answer_has_none():
    clear = answer_schema({"teamId": 99924}, vague=False, openers=["It's"])
    assert clear["properties"]["details"]["properties"] == {"teamId": {"const": 99924}}
    assert _matches(clear["properties"]["message"]["pattern"], "It's team 99924.")
    vague = answer_schema({"teamId": 99924}, vague=True, openers=["It's"])
    assert vague["properties"]["details"]["properties"] == {}
    assert _matches(vague["properties"]["message"]["pattern"], "It's one of the big ones.")


def _names(schema):
    return [choice["properties"]["name"]["const"] for choice in schema["properties"]["actions"]["items"]["anyOf"]]


def _call(schema, name):
    return next(
        c for c in schema["properties"]["actions"]["items"]["anyOf"] if c["properties"]["name"]["const"] == name
    )


def test_the_planner_grammar_offers_the_focus_tools_with_the_values_said_so_far():
    tools = [{"type": "function", "function": f} for f in (WEATHER, DICTIONARY, ROSTER)]
    known = KnownValues(["2024-05-03", "Paris", 3, "Oslo"], {"city": ["Paris"]})
    schema = planner_schema(tools, "ST", focus=["getWeather"], known=known)
    assert _names(schema) == ["getWeather"]
    arguments = _call(schema, "getWeather")["properties"]["arguments"]["properties"]
    assert arguments["city"] == {"enum": ["Paris"]}  # what the user gave for this parameter
    assert arguments["unit"] == {"type": "string", "enum": ["C", "F"]}  # the schema's own choices stay
    assert arguments["days"] == {"enum": [3]}  # a number said in the conversation
    # nothing said for an optional parameter: it is left out
    bare = planner_schema(tools, "ST", focus=["getWeather"], known=KnownValues(["Paris"], {"city": ["Paris"]}))
    assert "days" not in _call(bare, "getWeather")["properties"]["arguments"]["properties"]
    # after the call, the focus tool is not offered again: only the answer
    done = [{"name": "getWeather", "arguments": {"city": "Paris"}, "step": 0}]
    assert _names(planner_schema(tools, "ST", done, focus=["getWeather"], known=known)) == ["prepare_to_answer"]


def test_a_clarification_task_must_ask_before_the_left_out_value_is_known():
    tools = [{"type": "function", "function": ROSTER}]
    unknown = KnownValues(["2024-05-03", 42], {}, ["teamId"])
    schema = planner_schema(tools, "CQ", focus=["getRoster"], known=unknown)
    assert _names(schema) == ["ask_user_for_required_parameters"]  # 42 is no team id anybody gave
    # a team id the user gave in an earlier task does not spare this task's question
    earlier = KnownValues(["2024-05-03", 99924], {"teamId": [99924]}, ["teamId"], {})
    assert _names(planner_schema(tools, "CQ", focus=["getRoster"], known=earlier)) == [
        "ask_user_for_required_parameters"
    ]
    given = KnownValues(["2024-05-03", 42, 99924], {"teamId": [99924]}, ["teamId"], {"teamId": [99924]})
    asked = [{"name": "ask_user_for_required_parameters", "arguments": {}, "step": 0}]
    schema = planner_schema(tools, "CQ", asked, focus=["getRoster"], known=given)
    assert _names(schema) == ["getRoster", "ask_user_for_required_parameters"]
    assert _call(schema, "getRoster")["properties"]["arguments"]["properties"]["teamId"] == {"enum": [99924]}
    # called without asking (a value the schema offered): the tool is not offered again, the question is
    called = [{"name": "getRoster", "arguments": {"teamId": 5}, "step": 0}]
    assert _names(planner_schema(tools, "CQ", called, focus=["getRoster"], known=unknown)) == [
        "ask_user_for_required_parameters"
    ]


def test_a_question_asks_for_the_required_values_nobody_gave():
    dataset = {
        "name": "accessDataFormats",
        "description": "Access data in different formats.",
        "parameters": {
            "type": "object",
            "properties": {
                "datasetId": {"type": "string", "description": "The dataset's id."},
                "format": {"type": "string", "description": "The format, such as CSV, JSON, or XML."},
            },
            "required": ["datasetId", "format"],
        },
    }
    tools = [{"type": "function", "function": dataset}]
    known = KnownValues(["2024-05-03", "CSV"], {"format": ["CSV"]}, ["datasetId"], {})
    schema = planner_schema(tools, "CQ", focus=["accessDataFormats"], known=known)
    ask = _call(schema, "ask_user_for_required_parameters")["properties"]["arguments"]["properties"]
    assert ask["missing_required_parameters"]["items"] == {"enum": ["datasetId"]}


def test_the_bundled_model_checks_by_the_rules_alone_unless_asked_to_judge(monkeypatch):
    from wildtoolbench.nodes.generation.context import Context

    monkeypatch.delenv("WTB_CHECKER_MODEL", raising=False)
    assert Context().checker_model_judges("local") is False  # the default: its verdicts were noise
    assert Context(models={"checker": "local"}).checker_model_judges("local") is True  # asked for
    assert Context().checker_model_judges("openai:gpt-4o-mini") is True
    assert Context().checker_model_judges("") is False  # --model checker=none
    monkeypatch.setenv("WTB_CHECKER_MODEL", "local")
    assert Context().checker_model_judges("local") is True


def test_a_retry_gets_the_fix_not_the_quoted_phrase():
    from wildtoolbench.bench.rules import Problem
    from wildtoolbench.nodes.generation.user import retry_hint

    hint = retry_hint(
        _state(),
        [
            Problem('the message "How can I help" offers help, as the assistant does', "voice.offers_help"),
            Problem('the message does not state "Paris": write it so that it names them', "value.unstated"),
            Problem('the message "an AI" talks about the AI assistant instead of asking', "voice.meta_assistant"),
        ],
    )
    assert hint == (
        "write only the person's own request, in the person's words, and stop after it; "
        "say every value of the draft, word for word"
    )
    assert "How can I help" not in hint


def test_each_problem_of_a_user_message_is_retried_with_its_own_fix():
    """The fix a retry gets is picked by the rule id the problem carries, the same id the yield table
    counts (wildtoolbench.bench.rules); the reason's words never pick it."""
    from wildtoolbench.bench.rules import Problem, rule_of
    from wildtoolbench.nodes.generation.user import message_problems, retry_hint

    hints = fragments("en")["retry_hints"]
    cases = [
        ("Check the weather in [City Name].", None, "", "voice.placeholder_brackets", "placeholder"),
        ("The current date is 2024-05-03, the weather in Paris?", {"city": "Paris"}, "", "voice.env_line", "env_line"),
        ("Weather in Paris for 3 days?", {"city": "Paris", "days": 3}, "days", "value.gives_missing", "missing"),
        ("What is the weather like?", {"city": "Paris"}, "", "value.unstated", "values"),
        ("What is the weather like in Paris?", {"city": "Paris", "unit": " "}, "", "value.empty", "placeholder"),
        ("", None, "", "structure.empty_text", "empty"),
    ]
    for text, details, missing, code, hint in cases:
        problems = message_problems(_state(), text, details, kind="open", missing=missing, functions=[WEATHER])
        assert len(problems) == 1, (text, problems)
        if code is not None:
            assert rule_of(problems[0]) == code, problems
        assert retry_hint(_state(), problems) == hints[hint], (text, problems)
    # the words do not matter: a reason naming "placeholder" under the echo rule gets the echo fix
    assert retry_hint(_state(), [Problem("a placeholder, the environment line", "voice.echo")]) == hints["echo"]
    assert retry_hint(_state(), [Problem("how can I help", "voice.offers_help")]) == hints["voice"]
    assert retry_hint(_state(), ["a plain reason without a rule"]) == hints["voice"]


def test_each_problem_of_a_reply_is_retried_with_its_own_fix():
    from wildtoolbench.bench.rules.reply import assistant_problems
    from wildtoolbench.nodes.generation.agent import agent_retry_hint, agent_text_problems

    hints = fragments("en")["retry_hints"]
    flat = assistant_problems("Nothing.", results='{"temp": 21}', use_results=True)
    assert agent_retry_hint(_state(), flat) == hints["reply_echo"]
    echo = assistant_problems("a b c d e f g h", user_texts=["so a b c d e f g h"])
    assert agent_retry_hint(_state(), echo) == hints["reply_echo"]
    both = assistant_problems("At 2024-05-03 10:12:00 天气.", env_info="2024-05-03 10:12:00 Friday")
    assert [p.rule for p in both] == ["reply.env_line", "text.language"]
    assert agent_retry_hint(_state(), both) == f"{hints['env_line']}; {hints['language']}"
    assert agent_retry_hint(_state(), agent_text_problems("", {})) == ""


def test_once_the_focus_tool_was_called_a_clarification_task_can_only_answer():
    tools = [{"type": "function", "function": ROSTER}]
    known = KnownValues([99924], {"teamId": [99924]}, ["teamId"], {"teamId": [99924]})
    done = [
        {"name": "ask_user_for_required_parameters", "arguments": {}, "step": 0},
        {"name": "getRoster", "arguments": {"teamId": 99924}, "step": 1},
    ]
    assert _names(planner_schema(tools, "CQ", done, focus=["getRoster"], known=known)) == ["prepare_to_answer"]


def test_the_answer_holds_only_its_answer_type():
    """A planner answer of the layer-4 measurement carried ``depends_on`` inside its arguments, which the
    dataset refuses: the grammar allows only ``answer_type`` and the rules reject anything else."""
    from wildtoolbench.bench.rules.decision import decision_errors

    schema = planner_schema([], "CC")
    answer = _call(schema, "prepare_to_answer")["properties"]["arguments"]
    assert answer["additionalProperties"] is False
    decision = {
        "thought": "t",
        "plan": "p",
        "actions": [{"name": "prepare_to_answer", "arguments": {"answer_type": "chat", "depends_on": []}}],
    }
    errors = decision_errors(decision, tools={}, layer_type="CC", nodes=[])
    assert any("answer_type must be the only argument" in e for e in errors), errors


def test_a_user_turn_that_pastes_the_assistant_reply_is_written_again():
    from wildtoolbench.nodes.generation.user import message_problems, retry_hint

    reply = "The synonyms of 'happy' are joyful, happy, pleased, contented, and amused."
    turn = "Thenymes of the English word 'happy' are joyful, happy, pleased, contented, and AMUS."
    problems = message_problems(_state(), turn, None, kind="next", assistant=[reply])
    assert problems == ['the message repeats "happy are joyful happy pleased contented" of the assistant\'s reply']
    assert retry_hint(_state(), problems) == (
        "do not repeat the assistant's words: say in a few words of your own what you want"
    )
    assert message_problems(_state(), "And what are its antonyms?", None, kind="next", assistant=[reply]) == []


def test_an_assistant_reply_that_restates_the_request_is_a_rule_problem():
    from wildtoolbench.nodes.generation.agent import agent_text_problems

    task = {"user_message": "Can you retrieve detailed information about a specific malware sample, Crysis 3?",
            "nodes": [{"name": "ask_user_for_required_parameters", "user_input": "The sample is named Crysis 3."}]}  # fmt: skip
    assert agent_text_problems("Please retrieve detailed information about a specific malware sample.", task) == [
        'repeats "retrieve detailed information about a specific malware sample" of the user\'s request instead '
        "of answering it"
    ]
    assert agent_text_problems("Crysis 3 is ransomware first seen in 2016; 51 of 70 engines detect it.", task) == []
    assert agent_text_problems("", task) == ["empty assistant message"]


def test_the_planner_grammar_gives_a_date_only_to_a_parameter_about_dates():
    products = {
        "name": "searchProducts",
        "parameters": {
            "type": "object",
            "properties": {
                "upc": {"type": "string", "description": "The Universal Product Code (UPC) of the product."},
                "startDate": {"type": "string", "description": "First day."},
            },
            "required": ["upc"],
        },
    }
    tools = [{"type": "function", "function": products}]
    known = KnownValues(["2024-10-22", "012345678905"], {})
    arguments = _call(planner_schema(tools, "ST", focus=["searchProducts"], known=known), "searchProducts")
    assert arguments["properties"]["arguments"]["properties"] == {
        "upc": {"enum": ["012345678905"]},
        "startDate": {"enum": ["2024-10-22", "012345678905"]},
    }


def test_the_tool_role_sees_earlier_results_of_the_tools_it_simulates_only():
    from wildtoolbench.nodes.generation.tool import tool_request

    nodes = [
        {"name": "getWeather", "arguments": {"city": "Paris"}, "step": 0, "observation": {"temp": 21}},
        {"name": "defineWord", "arguments": {"word": "apple"}, "step": 1, "observation": {"definition": "a fruit"}},
    ]
    state = _state(tasks=[{"layer_type": "MT", "user_message": "Paris weather, and define apple.", "nodes": nodes}])
    _, human = tool_request(state, [{"name": "getWeather", "arguments": {"city": "Oslo"}, "step": 2}])
    assert 'getWeather({"city": "Paris"}) -> {"temp": 21}' in human
    assert "a fruit" not in human  # shown another tool's result, a small model pastes it


def test_an_answer_may_repeat_the_question_and_a_question_the_request():
    from wildtoolbench.nodes.generation.agent import agent_text_problems
    from wildtoolbench.nodes.generation.user import message_problems

    question = "What is the base64 encoding of the malware sample file you want to submit?"
    ask = {"name": "ask_user_for_required_parameters", "arguments": {}, "step": 0, "observation": question}
    state = _state(tasks=[{"layer_type": "CQ", "user_message": "Submit my malware sample.", "nodes": [ask]}])
    answer = "The base64 encoding of the malware sample file is QmFzZTY0IQ==."
    from wildtoolbench.nodes.generation._common import assistant_replies

    assert assistant_replies(state) == []  # questions are not held against the answer
    assert message_problems(state, answer, None, kind="answer", assistant=assistant_replies(state)) == []
    task = {"user_message": "Could you please provide the definition of an English word for me?", "nodes": []}
    assert agent_text_problems("What is the definition of an English word for me to look up?", task, "question") == []


def test_the_reply_is_told_the_facts_of_the_results_last():
    from wildtoolbench.nodes.generation.agent import agent_request, result_points

    nodes = [
        {"name": "getSynonymsAntonyms", "arguments": {"word": "apple"}, "step": 0,
         "observation": {"synonyms": ["banana", "mango"], "antonyms": ["orange"], "meta": {"source": "wordnet"}}},
        {"name": "prepare_to_answer", "arguments": {"answer_type": "tool"}, "step": 1},
    ]  # fmt: skip
    assert result_points(nodes) == "synonyms: banana, mango; antonyms: orange; meta: source wordnet"
    state = _state(tasks=[{"layer_type": "ST", "user_message": "Synonyms of apple?", "nodes": nodes}])
    _, human = agent_request(state)
    assert human.rstrip().endswith(
        "What the results say: synonyms: banana, mango; antonyms: orange; meta: source wordnet"
    )


def test_the_retry_of_a_copied_result_does_not_see_the_result_it_pasted():
    from wildtoolbench.nodes.generation.tool import tool_request

    nodes = [{"name": "getWeather", "arguments": {"city": "Paris"}, "step": 0, "observation": {"temp": 21}}]
    tasks = [{"layer_type": "MT", "user_message": "Paris and Oslo weather.", "nodes": nodes}]
    call = [{"name": "getWeather", "arguments": {"city": "Oslo"}, "step": 1}]
    assert '{"temp": 21}' in tool_request(_state(tasks=tasks), call)[1]
    reason = "result 0 for getWeather copies the result of getWeather: write what ..."
    rejected = _results_rejected(reason, rules=("result.copies_other",))
    assert '{"temp": 21}' not in tool_request(_state(tasks=tasks, feedback=reason, transcript=[rejected]), call)[1]
    # The fix is chosen by the rule id, not by words the feedback quotes.
    quoted = 'result 0 for getWeather holds "copies the result of" as a value'
    assert (
        '{"temp": 21}'
        in tool_request(_state(tasks=tasks, feedback=quoted, transcript=[_results_rejected(quoted)]), call)[1]
    )


def test_the_assistant_does_not_repeat_its_reply_paste_the_date_or_switch_language():
    from wildtoolbench.nodes.generation.agent import agent_retry_hint, agent_text_problems

    reply = {"name": "prepare_to_answer", "arguments": {"answer_type": "tool"}, "step": 1,
             "observation": "The word is dog. Its synonyms are cat, bird, and fish."}  # fmt: skip
    synonyms = {"name": "getWordSynonyms", "arguments": {"word": "dog"}, "step": 0,
                "observation": {"synonyms": ["cat", "bird", "fish"]}}  # fmt: skip
    definition = {"name": "getWordDefinition", "arguments": {"word": "dog"}, "step": 0,
                  "observation": {"definition": "A dog is a domesticated mammal.", "word": "dog"}}  # fmt: skip
    answer = {"name": "prepare_to_answer", "arguments": {"answer_type": "tool"}, "step": 1}
    first = {"layer_type": "ST", "user_message": "Synonyms of dog?", "nodes": [synonyms, reply]}
    second = {"layer_type": "ST", "user_message": "What about its definition?", "nodes": [definition, answer]}
    state = _state(tasks=[first, second], env_info="2024-06-25 08:37:00 Tuesday")
    problems = agent_text_problems("The word is dog. Its synonyms are cat, bird, and fish.", second, "reply", state)
    assert problems == ['repeats "the word is dog its synonyms are cat" of an earlier reply']
    assert agent_retry_hint(state, problems) == (
        "answer this request with its own results; do not repeat your earlier reply"
    )
    question = "What is the ID of the team as of 2024-06-25 08:37:00 Tuesday?"
    assert agent_text_problems(question, second, "question", state) == [
        '"2024-06-25 08:37:00" copies the environment line'
    ]
    assert agent_text_problems("Which 单词 do you mean?", second, "question", state) == [
        '"单词" switches to Chinese in an English session'
    ]
    assert agent_text_problems("A dog is a domesticated mammal.", second, "reply", state) == []
    # the same results may be answered alike: the repeated words carry no fact this task lacks
    again = {"layer_type": "ST", "user_message": "And its synonyms once more?", "nodes": [synonyms, answer]}
    assert agent_text_problems("The word is dog. Its synonyms are cat, bird, and fish.", again, "reply", state) == []
    # a reply on tool results states something of them
    assert agent_text_problems("I'm sorry, but I can't assist with that request.", second, "reply", state) == [
        "states nothing of the tool results it answers with"
    ]


def test_a_question_lists_each_missing_parameter_once():
    from wildtoolbench.bench.rules.decision import decision_errors

    tools = {"getWordDefinition": DICTIONARY | {"name": "getWordDefinition"}}
    ask = {"name": "ask_user_for_required_parameters", "depends_on": [],
           "arguments": {"tool_name": "getWordDefinition", "missing_required_parameters": ["word", "word"]}}  # fmt: skip
    errors = decision_errors({"actions": [ask]}, tools=tools, layer_type="CQ", nodes=[])
    assert (
        "action 0 (ask_user_for_required_parameters): missing_required_parameters lists ['word'] more than once"
        in errors
    )
    schema = planner_schema(
        [{"type": "function", "function": tools["getWordDefinition"]}], "CQ", focus=["getWordDefinition"],
        known=KnownValues([], {}, ["word"]),
    )  # fmt: skip
    asked = next(
        c
        for c in schema["properties"]["actions"]["items"]["anyOf"]
        if c["properties"]["name"].get("const") == "ask_user_for_required_parameters"
    )
    assert asked["properties"]["arguments"]["properties"]["missing_required_parameters"]["maxItems"] == 1


def test_each_retry_samples_at_a_higher_temperature():
    from wildtoolbench.nodes.generation._common import retry_temperature
    from wildtoolbench.nodes.generation.context import Context

    assert [retry_temperature(Context(temperature=0.7), a) for a in range(4)] == [0.7, 1.0, 1.2, 1.2]
    assert [retry_temperature(Context(temperature=0.0), a) for a in range(3)] == [0.0, 0.3, 0.6]
    assert retry_temperature(Context(temperature=1.5), 2) == 1.5  # never lowered


def test_the_retry_of_a_pasted_definition_sees_signature_lines():
    """Measured (issue 25): shown the spec without descriptions, the tool model still returned objects
    shaped like it ({"name": ..., "parameters": {...}}) three times; the retry sees one line per tool."""
    from wildtoolbench.nodes.generation.tool import signature, tool_request

    spec = {"name": "f", "description": "Get a thing.", "parameters": {"type": "object", "properties": {
        "q": {"type": "string", "description": "Search text."}, "n": {"type": "integer"}, "x": {}}}}  # fmt: skip
    assert signature(spec) == "f(q: string, n: integer, x)"
    assert signature(ROSTER) == "getRoster(teamId: integer)"
    call = {"name": "defineWord", "arguments": {"word": "apple"}}
    _, first = tool_request(_state(), [call])
    assert DICTIONARY["description"] in first and '"name": "defineWord"' in first
    feedback = "result 0 for defineWord copies the tool's description: write the data defineWord returns"
    rejected = _results_rejected(feedback, rules=("result.copies_definition",))
    _, retry = tool_request(_state(feedback=feedback, transcript=[rejected]), [call])
    assert "defineWord(word: string)" in retry
    assert DICTIONARY["description"] not in retry and '"name"' not in retry and '"parameters"' not in retry


def test_a_placeholder_inside_a_chosen_object_gets_a_stand_in():
    """Measured (issue 25): the values request chose {"fieldName": "value", ...} for an object parameter;
    the message retries could not change it and the session failed. Now the leaf gets a stand-in."""
    import random

    from wildtoolbench.bench.generation_values import fallback_value
    from wildtoolbench.nodes.generation.user_drafts import mend_object

    chosen = {"fieldName": "value", "value": "dataValue", "meta": {"note": ""}, "count": 4}
    mended, reasons = mend_object(chosen, {"type": "object"}, [], rng=random.Random(1), language="en", where="data")
    assert reasons == [
        "data.fieldName = value is a placeholder, not a real value: choose a real one",
        "data.meta.note is empty",
    ]
    expected = random.Random(1)
    assert mended == {
        "fieldName": fallback_value("fieldName", {"type": "string"}, rng=expected, language="en"),
        "value": "dataValue",
        "meta": {"note": fallback_value("note", {"type": "string"}, rng=expected, language="en")},
        "count": 4,
    }
    assert mend_object({"city": "Oslo"}, {}, [], rng=random.Random(1), language="en", where="d") == (
        {"city": "Oslo"},
        [],
    )


async def test_the_checker_bans_the_optional_copy_of_a_shared_value():
    """A decision giving one value to query and upc is rejected and upc leaves the next try's grammar."""
    from wildtoolbench.nodes.generation.checker import checker

    search = {"name": "searchProducts", "description": "Search products.", "parameters": {"type": "object",
              "required": ["query"], "properties": {"query": {"type": "string"}, "upc": {"type": "string"}}}}  # fmt: skip
    decision = {"thought": "", "plan": "", "actions": [
        {"name": "searchProducts", "arguments": {"query": "apple", "upc": "apple"}, "depends_on": []}]}  # fmt: skip
    state = _state(
        tools=[{"type": "function", "function": search}],
        layer_types=("ST",),
        tasks=[{"layer_type": "ST", "user_message": "Find apple products, please.", "nodes": []}],
        pending={"kind": "decision", "id": "e0001", "decision": decision, "step": 0, "error": None},
    )
    update = await checker(state, None)
    assert update["verdict"] == "reject" and update["banned"] == [["searchProducts", "upc"]]
    assert "gives 'apple' to query and upc" in update["feedback"]


def test_a_message_that_copies_its_retry_instructions_is_refused():
    """Measured (issue 25): "Please repeat the assistant's words." and "Do not repeat the assistant's words:
    say in a few words of your own what youwant." came back as user turns after a retry."""
    from wildtoolbench.nodes.generation.user import message_problems
    from wildtoolbench.prompts import fragments

    state = _state()
    copied = "I wonder how people stay motivated. Do not repeat the assistant's words: say it."
    assert any("repeats the instructions" in p for p in message_problems(state, copied, None, kind="next"))
    for hint in fragments("en")["retry_hints"].values():  # every fix, pasted into a message, is caught
        problems = message_problems(state, f"Find the weather in Paris. {hint}.", None, kind="next")
        assert any("repeats the instructions" in p for p in problems), hint
    assert message_problems(state, "Find the weather in Paris, please.", None, kind="next") == []


def test_a_reply_that_copies_its_retry_fix_is_written_again():
    from wildtoolbench.nodes.generation.agent import agent_retry_hint, agent_text_problems
    from wildtoolbench.prompts import fragments

    synonyms = {"name": "getWordSynonyms", "arguments": {"word": "dog"}, "step": 0,
                "observation": {"synonyms": ["hound", "pup"]}}  # fmt: skip
    answer = {"name": "prepare_to_answer", "arguments": {"answer_type": "tool"}, "step": 1}
    task = {"layer_type": "ST", "user_message": "Synonyms of dog?", "nodes": [synonyms, answer]}
    fix = fragments("en")["retry_hints"]["reply_once"]
    (problem,) = agent_text_problems(f"Hound and pup; {fix}.", task, state=_state(tasks=[task]))
    assert problem == 'copies "say each fact once in" of its instructions instead of answering'  # first 5 words
    assert problem.rule == "reply.copies_hint"
    assert agent_retry_hint(_state(tasks=[task]), [problem]) == fragments("en")["retry_hints"]["reply_echo"]
    assert agent_text_problems("Its synonyms are hound and pup.", task, state=_state(tasks=[task])) == []


def test_a_chat_reply_that_repeats_the_user_is_told_to_answer_the_person():
    """Measured (issue 25): "thankss that was really helpful" came back three times under the fix
    "state the facts of the results ...", which a chat task has none of."""
    from wildtoolbench.bench.rules.reply import assistant_problems
    from wildtoolbench.nodes.generation.agent import agent_retry_hint
    from wildtoolbench.prompts import fragments

    hints = fragments("en")["retry_hints"]
    (problem,) = assistant_problems("thankss that was really helpful", user_texts=["thankss that was really helpful"])
    chat = {"layer_type": "CC", "user_message": "thankss that was really helpful",
            "nodes": [{"name": "prepare_to_answer", "arguments": {"answer_type": "chat"}, "step": 0}]}  # fmt: skip
    assert agent_retry_hint(_state(tasks=[chat]), [problem]) == hints["chat_echo"]
    tool = {"layer_type": "ST", "user_message": "Synonyms of dog?",
            "nodes": [{"name": "prepare_to_answer", "arguments": {"answer_type": "tool"}, "step": 1}]}  # fmt: skip
    assert agent_retry_hint(_state(tasks=[tool]), [problem]) == hints["reply_echo"]
