"""The rule-based quality check of generated sessions (bench/rules/, docs/generation.md §10),
on hand-made sessions: a good one, and the bad examples quoted in issue 25."""

from __future__ import annotations

import copy

import pytest

from wildtoolbench.bench.rules.text import echo_problem
from wildtoolbench.bench.rules.value import date_misplaced, described_options, is_concrete, placeholder_problem
from wildtoolbench.bench.rules.voice import voice_problems
from wildtoolbench.bench.rules_session import quality_summary, session_quality

WORDS = {
    "type": "function",
    "function": {
        "name": "getWordDefinitions",
        "description": "Get the definitions and example usages of a word in a specified language.",
        "parameters": {
            "type": "object",
            "properties": {
                "word": {"type": "string", "description": "The word to be queried."},
                "language": {"type": "string", "enum": ["en", "es"], "default": "en"},
            },
            "required": ["word"],
        },
    },
}


def _session(message: str, word: str, *, reply: str = "It means a round fruit.", chat: str = "Hi there!") -> dict:
    return {
        "id": "wild_tool_bench_0",
        "english_env_info": "2024-05-03 10:12:00 Friday",
        "english_tools": [WORDS],
        "english_tasks": [message, chat],
        "english_answer_list": [
            [
                {
                    "action": {"name": "getWordDefinitions", "arguments": {"word": word, "language": "en"}},
                    "observation": {"definitions": ["a round fruit"]},
                    "dependency_list": [],
                },
                {
                    "action": {"name": "prepare_to_answer", "arguments": {"answer_type": "tool"}},
                    "observation": reply,
                    "dependency_list": [0],
                },
            ],
            [
                {
                    "action": {"name": "prepare_to_answer", "arguments": {"answer_type": "chat"}},
                    "observation": "Hello!",
                    "dependency_list": [],
                }
            ],
        ],
    }


def test_a_real_user_session_passes():
    session = _session("What does the word 'apple' mean? I keep seeing it in my recipe book.", "apple")
    assert session_quality(session) == {
        "ok": True, "voice": [], "values": [], "concrete": [], "calls": [], "assistant": [], "rules": []
    }  # fmt: skip


def test_the_bad_session_of_issue_25_fails_every_check():
    # The first user message was a meta-question about the AI assistant and its tools, the chat turn
    # was in the assistant's voice, and the gold call was getWordDefinitions(word="example").
    session = _session(
        "What can the AI assistant do with all of these tools?",
        "example",
        chat="Thank you for providing me with the tools and the information. Please provide this information.",
    )
    result = session_quality(session)
    assert result["ok"] is False
    assert result["voice"] == [
        'task 0 user message: "the AI assistant" talks about the AI assistant instead of asking for something',
        'task 0 user message: "these tools" talks about the tools instead of asking for something',
        'task 1 user message: "Thank you for providing" thanks the user for information, as the assistant does',
        'task 1 user message: "Please provide this information" asks the user to provide information, '
        "as the assistant does",
        'task 1 user message: "the tools" talks about the tools instead of asking for something',
    ]
    # "example" occurs only in the tool's description, which is not the conversation
    assert result["values"] == [
        "task 0 getWordDefinitions: word = example appears nowhere in the conversation before the call"
    ]
    assert result["concrete"] == [
        "task 0 user message names no concrete value: 'What can the AI assistant do with all of these tools?'"
    ]
    summary = quality_summary([result, session_quality(_session("Define 'apple' for me, please.", "apple"))])
    assert summary == {
        "sessions": 2, "passing": 1, "voice": 1, "values": 1, "concrete": 1, "calls": 0, "assistant": 0,
        "rules": {"voice.meta_assistant": 1, "voice.meta_tools": 1, "voice.thanks": 1, "voice.asks_to_provide": 1,
                  "value.not_in_context": 1, "value.concrete": 1},
    }  # fmt: skip
    assert result["rules"] == ["voice.meta_assistant", "voice.meta_tools", "value.not_in_context", "value.concrete",
                               "voice.thanks", "voice.asks_to_provide", "voice.meta_tools"]  # fmt: skip


def test_values_may_come_from_answers_results_and_the_schema():
    session = _session("I need a definition for a word I heard today.", "apple")
    ask = {
        "action": {
            "name": "ask_user_for_required_parameters",
            "arguments": {"tool_name": "getWordDefinitions", "missing_required_parameters": ["word"]},
        },
        "observation": "Which word would you like me to look up?",
        "dependency_list": [],
        "user_input": "The word is apple.",
    }
    clarify = copy.deepcopy(session)
    clarify["english_answer_list"][0].insert(0, ask)
    result = session_quality(clarify)
    assert result["values"] == [] and result["concrete"] == []  # "en" is the schema's default and enum member
    unanswered = copy.deepcopy(clarify)
    unanswered["english_answer_list"][0][0]["user_input"] = "A fruit, I think."
    assert session_quality(unanswered)["values"] == [
        "task 0 getWordDefinitions: word = apple appears nowhere in the conversation before the call"
    ]


def test_user_voice_phrases():
    assert voice_problems("As an AI, I cannot browse.") == ['"As an AI" speaks as an AI']
    assert voice_problems("How can I help you today?") == ['"How can I help" offers help, as the assistant does']
    assert voice_problems("Please provide synonyms for 'happy'.") == []  # a user may say please provide
    # excerpts of the local model's user turns (issue 25 measurement)
    assert voice_problems("I'm looking for Kroger products. Would you like to retrieve this data?") == [
        '"Would you like to" offers to act, as the assistant does'
    ]
    assert voice_problems("To retrieve the datasets, you can follow these steps: 1. Visit the site") == [
        '"you can follow these steps" explains how to do it, as the assistant does'
    ]
    assert voice_problems("What tools do you have?") == []  # only an opening message is held to the meta rule
    assert voice_problems("What are the tools you have?", opening=True) == [
        '"the tools" talks about the tools instead of asking for something'
    ]
    assert voice_problems("感谢您提供这些信息，请提供您的城市。", "zh") == [
        '"感谢您提供" thanks the user for information, as the assistant does',
        '"请提供" asks the user to provide information, as the assistant does',
    ]


def test_concrete_requests_and_placeholders():
    assert is_concrete("Look up flights to Oslo on May 3.")
    assert is_concrete("define serendipity", ["serendipity"])
    assert not is_concrete("can you help me with something?")
    assert placeholder_problem("example") == "is a placeholder, not a real value: choose a real one"
    assert placeholder_problem("the word to be queried", ["the word to be queried."]) == (
        "copies the description, not a real value: choose a real one (a real word, city, name or date)"
    )
    assert placeholder_problem("synonyms", ["type: synonyms or antonyms"]) == ""


def test_the_one_valid_session_of_the_measurement_fails_the_check():
    # wtb generate --samples 10 --layers 2 on the bundled model (issue 25): valid, oracle replay 100%,
    # but the user asks the assistant for details and the gold call's values are empty strings.
    session = _session(
        "I'm looking for Kroger product data based on the following search parameters: product name, UPC code, "
        "or city. Please provide the details you need.",
        "",
    )
    result = session_quality(session)
    assert result["voice"] == [
        'task 0 user message: "Please provide the details" asks the user to provide information, as the assistant does'
    ]
    assert result["values"] == ["task 0 getWordDefinitions: word is an empty string"]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("Please let me know if you'd like assistance with this request.", "offers help"),
        ("I'll do my best to find it.", "offers help"),
        ("To find them, you can use the search tool.", "explains how to do it"),
        ("The `getCurrentPlayerRoster` tool returns the roster.", "quotes code or a tool name"),
        ("I apologize, but the message does not state 99924.", "apologises"),
        ("Are there any specific topics or genres you'd like to explore?", "asks what the user wants"),
        ("The topic is Climate change. I'm sorry, but I cannot open it.", "apologises"),
        ("In order to retrieve the roster of a team, you need the team ID.", "explains how to do it"),
        ("I think you might want to try using a synonym for 'curious'.", "advises or declines"),
        ("Please let me know if you need any further assistance.", "offers help"),
        ("Is there something else I can do for you?", "offers help"),
        ("Thanksgiving, we're here to help!", "offers help"),
        ("User: Please provide the name of the file.", "labels itself"),
        ("I'd like synonyms of a word, but I can't provide that right now.", "declines"),
    ],
)
def test_voice_rule_catches_what_a_small_model_writes_as_the_user(text, why):
    found = voice_problems(text, "en", opening=True)
    assert found and any(why in reason for reason in found), found


def test_voice_rule_lets_a_user_ask():
    for text in ("Can you check the weather in Paris on 2024-05-08?", "I would like to see the Tokyo roster.",
                 "Also, what about Berlin?", "It's team 99924.", "Sorry, I meant Tokyo.",
                 "To be honest, you should see Paris."):  # fmt: skip
        assert voice_problems(text, "en", opening=True) == [], text


def test_made_up_value_shapes_are_placeholders():
    for value in ("your_api_key", "my file", "<city>", "{name}", "base64_encoded_malware_sample_file", "Spike}"):
        assert placeholder_problem(value), value
    for value in ("The Beatles", "user_42", "QmFyZWFsIFdvcmxkIQ==", "Paris", "2024-05-08"):
        assert placeholder_problem(value) == "", value


def test_described_options_read_lists_and_defaults():
    assert described_options("The format, such as CSV, JSON, or XML.") == ["CSV", "JSON", "XML"]
    assert described_options("The delivery method of the malware, default is 'email'") == ["email"]
    assert described_options("Language such as en, zh or fr") == ["en", "zh", "fr"]


def test_described_options_leave_out_format_templates():
    # a Kroger tool's location (tools_en.jsonl): 'City, State' is the shape of a value, not a value
    text = "The location of the user, used to find nearby Kroger stores. The format is 'City, State'."
    assert described_options(text) == []
    assert described_options("The end date, in the format of 'YYYY-MM-DD'.") == []
    assert described_options("日期，格式为'YYYY-MM-DD'") == []
    assert described_options("Output format, e.g. 'json' or 'xml'") == ["json", "xml"]
    assert described_options("The format of the returned data, supporting 'XML', 'CSV'") == ["XML", "CSV"]


def test_echo_finds_a_run_of_words_copied_from_the_other_speaker():
    # the local model's second user turn pasted the assistant's reply (issue 25 measurement)
    reply = "The synonyms of 'happy' are joyful, happy, pleased, contented, and amused."
    turn = "Thenymes of the English word 'happy' are joyful, happy, pleased, contented, and AMUS."
    assert echo_problem(turn, [reply]) == "happy are joyful happy pleased contented"
    assert echo_problem("What about the antonyms of 'happy'?", [reply]) == ""
    # an assistant reply is held to eight words: "the current weather in Paris" is fine
    request = "Can you get the current weather in Paris for tomorrow?"
    assert echo_problem("The current weather in Paris for tomorrow is sunny, 21 degrees.", [request], words=8) == ""
    assert echo_problem("Please get the current weather in Paris for tomorrow, please.", [request], words=8) == (
        "get the current weather in paris for tomorrow"
    )
    # Chinese: a character is half a word, so twelve characters make a run of six words
    assert (
        echo_problem("我想查询北京明天的天气情况怎么样呢", ["你想查询北京明天的天气情况怎么样"])
        == "想查询北京明天的天气情况"
    )
    assert echo_problem("北京明天的天气", ["北京明天的天气情况"]) == ""


def test_a_date_goes_only_to_a_parameter_about_dates():
    upc = {"type": "string", "description": "The Universal Product Code (UPC) of the product."}
    assert date_misplaced("upc", upc, "2024-10-22")
    assert not date_misplaced("upc", upc, "012345678905")
    assert not date_misplaced("startDate", {"type": "string"}, "2024-10-22")
    assert not date_misplaced("since", {}, "2024-10-22")
    assert not date_misplaced("range", {"description": "Start day, YYYY-MM-DD"}, "2024-10-22")
    assert not date_misplaced("出发", {"description": "出发日期"}, "2024-10-22")


def _two_calls(first: dict, second: dict, *, second_name: str = "getWordDefinitions") -> dict:
    session = _session("What does the word 'apple' mean? And 'pear'?", "apple")
    nodes = session["english_answer_list"][0]
    nodes[0]["observation"] = {"definitions": ["a round fruit of the rose family"], "source": "dictionary"}
    nodes.insert(1, {"action": {"name": second_name, "arguments": second}, "observation": nodes[0]["observation"],
                     "dependency_list": []})  # fmt: skip
    nodes[0]["action"]["arguments"] = first
    return session


def test_calls_check_finds_a_repeated_call_and_a_copied_result():
    repeated = _two_calls({"word": "apple"}, {"word": "apple"})
    assert session_quality(repeated)["calls"] == ["task 0 getWordDefinitions: node 1 repeats the call of node 0"]
    copied = _two_calls({"word": "apple"}, {"word": "pear"})
    assert session_quality(copied)["calls"] == [
        "task 0 getWordDefinitions: node 1's result copies the result of an earlier, different call"
    ]
    distinct = copy.deepcopy(copied)
    distinct["english_answer_list"][0][1]["observation"] = {"definitions": ["a sweet fruit"], "source": "dictionary"}
    short = _two_calls({"word": "apple"}, {"word": "pear"})
    for node in short["english_answer_list"][0][:2]:
        node["observation"] = {"found": True}  # two calls may both answer {"found": true}
    assert session_quality(short)["calls"] == []
    assert session_quality(distinct)["calls"] == []


def test_assistant_check_finds_a_reply_that_restates_the_request():
    # the local model's final reply repeated the request (issue 25 measurement)
    message = "Can you retrieve detailed information about a specific malware sample, including the sample source?"
    session = _session(message, "apple", reply="Please retrieve detailed information about a specific malware sample.")
    result = session_quality(session)
    assert result["assistant"] == [
        'task 0 reply 1: repeats "retrieve detailed information about a specific malware sample" of the user\'s request '
        "instead of answering it",
        "task 0 reply 1: states nothing of the tool results it answers with",
    ]
    assert result["ok"] is False


def test_the_environment_line_is_no_request():
    assert voice_problems("A list of sentences for 'curious'. Current date and time is 2024-04-01 01:56:00.") == [
        '"Current date and time is" copies the environment line instead of asking for something'
    ]
    assert voice_problems("当前日期是2024年4月1日，帮我查天气。", "zh") == [
        '"当前日期是" copies the environment line instead of asking for something'
    ]


def test_an_english_session_stays_english_and_replies_do_not_repeat():
    # the local model's English user turn "... example sentences for a specific单词,? and also synonyms."
    assert voice_problems("Retrieve example sentences for a specific单词, and also synonyms.") == [
        '"单词" switches to Chinese in an English session'
    ]
    assert voice_problems("帮我查一下北京的天气", "zh") == []
    session = _session("What does the word 'apple' mean?", "apple", reply="It means a round fruit, a sweet one too.")
    session["english_answer_list"][1][0]["observation"] = "It means a round fruit, a sweet one too."  # the chat reply
    assert session_quality(session)["assistant"] == [
        'task 1 reply 0: repeats "it means a round fruit a sweet one" of an earlier reply'
    ]


def test_a_result_that_pastes_its_tool_definition_is_no_data():
    """The tool role returned the tool's own definition as the result of getWordExamples (issue 25
    measurement): the quality check and the result rules find it; data that merely names the word
    does not count."""
    from wildtoolbench.bench.generation_checks import tools_by_name
    from wildtoolbench.bench.rules.result import results_errors

    session = _session("What does the word 'apple' mean?", "apple")
    pasted = {"description": "Get the definitions and example usages of a word in a specified language.",
              "name": "getWordDefinitions", "parameters": {"word": "apple"}}  # fmt: skip
    session["english_answer_list"][0][0]["observation"] = pasted
    assert session_quality(session)["calls"] == [
        "task 0 getWordDefinitions: node 0's result copies the tool's description"
    ]
    call = {"name": "getWordDefinitions", "arguments": {"word": "apple"}}
    functions = tools_by_name([WORDS])
    assert results_errors([pasted], [call], functions=functions) == [
        "result 0 for getWordDefinitions copies the tool's description: write the data getWordDefinitions returns "
        "for these arguments"
    ]
    assert results_errors([{"definitions": ["a round fruit"], "word": "apple"}], [call], functions=functions) == []
    assert results_errors([pasted], [call]) == []  # without the tool list: not checked


def test_a_reply_may_not_hold_its_request_label_or_stop_at_a_colon():
    from wildtoolbench.bench.rules.reply import PROMPT_LABELS, assistant_problems
    from wildtoolbench.prompts import fragments

    for language in ("en", "zh"):  # the labels are the agent request's own (prompts/*/fragments.json)
        assert fragments(language)["labels"]["result_points"].lower() in PROMPT_LABELS[language]
    results = '{"synonyms": ["banana", "pear"]}'
    leaked = "What the results say: synonyms: banana, pear"
    assert assistant_problems(leaked, results=results, use_results=True) == [
        '"what the results say" copies a label of its request instead of answering'
    ]
    assert assistant_problems("The synonyms of apple are as follows:", results=results, use_results=True) == [
        "ends with a colon, before it says anything"
    ]
    assert assistant_problems("The results say: synonyms: banana, pear", results=results, use_results=True) == [
        '"what the results say" copies a label of its request instead of answering'
    ]
    assert assistant_problems("The results say the synonyms are banana and pear.", results=results) == []
    assert assistant_problems("Its synonyms are banana and pear.", results=results, use_results=True) == []


def test_a_short_earlier_reply_given_again_is_a_repeat():
    """A chat task's reply was the last task's facts line again ("teamId: 99924", issue 25 measurement)."""
    from wildtoolbench.bench.rules.reply import assistant_problems

    earlier = [("teamId: 99924", '{"teamId": 99924}')]
    assert assistant_problems("teamId: 99924", replies=earlier) == ['repeats "teamid 99924" of an earlier reply']
    assert assistant_problems("teamId: 99924", replies=earlier, results='{"teamId": 99924}') == []  # same results
    assert assistant_problems("Team 99924 has 26 players.", replies=earlier) == []


def test_what_the_demo_tool_lists_drew_from_the_small_model():
    """Sessions generated on bench/data/demo_tools.jsonl passed the check while reading badly: the user
    offering help, a run of stray braces, a request value and tool results copied from the schema."""
    from wildtoolbench.bench.rules.result import copies_definition
    from wildtoolbench.bench.rules.value import described, placeholder_problem

    offer = "Thanks. Is there anything else I can assist you with today? I'm here to help you with this data."
    assert [why.split('" ', 1)[1] for why in voice_problems(offer, "en", opening=True)] == [
        "offers help, as the assistant does",
        "offers help, as the assistant does",
    ]
    garbled = "Reserve it at Central for member 21674. } } } } } } } } sms"
    assert voice_problems(garbled, "en") == ['"} } } } } } } }" holds a run of stray symbols instead of words']
    assert voice_problems("Hold it at Central... and text me, please!", "en") == []
    catalog = {
        "name": "searchCatalog",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "Search text."},
            "title": {"type": "string", "description": "Title of the book."}}},
    }  # fmt: skip
    assert placeholder_problem("Search text", described([catalog])).startswith("copies the description")
    assert placeholder_problem("Dune", described([catalog])) == ""
    assert copies_definition({"title": "Title of the book", "isbn": "9780441013593"}, catalog) is True
    assert copies_definition({"title": "Dune", "author": "Frank Herbert"}, catalog) is False
    reshaped = {"description": "The following are books:", "name": "searchCatalog", "parameters": {"query": "x"}}
    assert copies_definition(reshaped, catalog) is True
    assert copies_definition({"name": "searchCatalog", "results": ["Dune"]}, catalog) is False


def test_a_lone_full_width_mark_is_no_chinese():
    assert voice_problems("Which word do you mean？", "en") == []
    assert voice_problems("The word is 单词？", "en") == ['"单词？" switches to Chinese in an English session']


def test_a_reply_that_says_one_sentence_twice_is_written_again():
    from wildtoolbench.bench.rules import hints
    from wildtoolbench.bench.rules.reply import assistant_problems, repeated_sentence

    results = '{"datasetId": 18406}'
    twice = "The dataset ID is 18406. The dataset ID is 18406."
    assert repeated_sentence(twice) == "The dataset ID is 18406"
    (problem,) = assistant_problems(twice, results=results, use_results=True)
    assert problem == 'repeats its own sentence "The dataset ID is 18406"'
    assert problem.rule == "reply.repeats_sentence" and hints([problem], "agent") == ["reply_once"]
    # Case and punctuation aside; a short line ("Yes.") said twice and different sentences are fine.
    assert repeated_sentence("the dataset ID is 18406!\nThe dataset id is 18406?") == "the dataset ID is 18406"
    assert repeated_sentence("Yes. Yes. The dataset ID is 18406.") == ""
    assert assistant_problems("The dataset ID is 18406. It was created in 2021.", results=results) == []
    # Chinese: a character is a word, 。 ends a sentence.
    assert repeated_sentence("数据集编号是18406。数据集编号是18406。") == "数据集编号是18406"


def test_a_request_must_name_something_only_when_its_calls_take_values():
    vague = _session("Can you look that up for me?", "apple")
    assert session_quality(vague)["concrete"] == [
        "task 0 user message names no concrete value: 'Can you look that up for me?'"
    ]
    # The same request for a call that takes no values has nothing to name.
    bare = copy.deepcopy(vague)
    bare["english_answer_list"][0][0]["action"]["arguments"] = {}
    assert session_quality(bare)["concrete"] == []


def test_template_slots_identifier_replies_and_a_pasted_clock_are_caught():
    """Measured on the seeded run (issue 25): "{teamId}" in a question and its answer, a reply
    "ahmed_khan_age_25_30_25_34", a request ending "getMethod: 2024-01-19 12:02:00 Friday"."""
    from wildtoolbench.bench.rules import hints
    from wildtoolbench.bench.rules.reply import assistant_problems

    question = "What is the roster of the team with the ID: {teamId}?"
    (problem,) = assistant_problems(question)
    assert problem == '"{teamId}" is a placeholder in braces instead of a real value'
    assert problem.rule == "reply.template_slot" and hints([problem], "agent") == ["reply_values"]
    assert voice_problems("The team ID is {teamId}.") == [
        '"{teamId}" holds a placeholder in braces instead of a real value'
    ]
    assert assistant_problems('The result is {"teamId": 99924}.') == []  # JSON has quotes: no slot
    results = '{"age": 25, "ageRange": "25-34"}'
    (flat,) = assistant_problems("ahmed_khan_age_25_30_25_34", results=results, use_results=True)
    assert flat == "is an identifier, not a sentence: it says nothing in words"
    assert flat.rule == "reply.identifier_only" and hints([flat], "agent") == ["reply_echo"]
    assert assistant_problems("His age is about 25, in the range 25-34.", results=results, use_results=True) == []
    env = "2024-01-19 12:02:00 Friday"
    pasted = "The definition of the word 'algorithm'. getMethod: 2024-01-19 12:02:00 Friday."
    (clock,) = voice_problems(pasted, env_info=env)
    assert clock == '"2024-01-19 12:02:00" copies the environment line instead of asking for something'
    assert clock.rule == "voice.env_line" and hints([clock], "user") == ["env_line"]
    assert voice_problems("Book a table for 2024-01-19, please.", env_info=env) == []  # a date is said, not the clock


def test_one_text_value_for_two_parameters_is_refused():
    """Measured (issue 25): searchProducts(query="apple", upc="apple"), getWordDefinition(word=..., partOfSpeech=...)."""
    from wildtoolbench.bench.rules.decision import decision_errors
    from wildtoolbench.bench.rules.value import shared_value_errors

    assert shared_value_errors({"query": "apple", "upc": "Apple"}) == [
        "gives 'apple' to query and upc: each parameter takes its own value (leave out an optional one nobody gave)"
    ]
    assert shared_value_errors({"a": "xyz", "b": "xyz"})[0].rule == "value.shared"
    # Dates, numbers and short codes may repeat (a one-day range); distinct values are fine.
    assert shared_value_errors({"start": "2024-05-03", "end": "2024-05-03", "n": "10", "m": "10"}) == []
    assert shared_value_errors({"from": "en", "to": "en"}) == [] and shared_value_errors({"a": "x1", "b": "y"}) == []
    tools = {"getWordDefinitions": WORDS["function"]}
    decision = {"actions": [{"name": "getWordDefinitions", "arguments": {"word": "algorithm", "language": "algorithm"},
                             "depends_on": []}]}  # fmt: skip
    assert any(
        "each parameter takes its own value" in e
        for e in decision_errors(decision, tools=tools, layer_type="ST", nodes=[])
    )
    session = _session("Define 'algorithm', please.", "algorithm")
    session["english_answer_list"][0][0]["action"]["arguments"] = {"word": "algorithm", "language": "algorithm"}
    assert any("each parameter takes its own value" in v for v in session_quality(session)["values"])


def test_a_user_naming_the_address_the_assistant_gave_is_no_echo():
    """Measured (issue 25): a follow-up naming "https://github.com/langchain-ai/langgraph" of the reply
    was rejected as six copied words; an address is one word."""
    reply = "The repository https://github.com/langchain-ai/langgraph has 9,000 stars."
    assert echo_problem("How many forks does https://github.com/langchain-ai/langgraph have?", [reply]) == ""
    assert echo_problem(
        "The repository https://github.com/langchain-ai/langgraph has 9,000 stars, right?", [reply]
    ) == ("the repository https://github.com/langchain-ai/langgraph has 9 000")


def test_the_optional_parameter_of_a_shared_value_is_left_out_of_the_next_try():
    from wildtoolbench.bench.rules.value import shared_value_bans

    search = {"name": "searchProducts", "parameters": {"type": "object", "required": ["query"], "properties": {
        "query": {"type": "string"}, "upc": {"type": "string"}, "location": {"type": "string"}}}}  # fmt: skip
    tools = {"searchProducts": search}
    decision = {"actions": [{"name": "searchProducts", "arguments": {"upc": "apple", "query": "Apple"}}]}
    assert shared_value_bans(decision, tools) == [["searchProducts", "upc"]]
    both_optional = {"actions": [{"name": "searchProducts", "arguments": {"upc": "kroger", "location": "kroger"}}]}
    assert shared_value_bans(both_optional, tools) == [["searchProducts", "location"]]
    search["parameters"]["required"] = ["query", "upc"]  # both required: nothing to leave out
    assert shared_value_bans(decision, tools) == []
    assert shared_value_bans({"actions": [{"name": "unknown", "arguments": {"a": "xyz", "b": "xyz"}}]}, tools) == []


@pytest.mark.parametrize(
    "text",
    [
        "Please repeat the assistant's words. You need to specify the typing speed.",
        "I wonder how people stay motivated. Say in a few words of your own what you want.",
        "I'd like the weather at JFK. Please let me know if you have any questions or need further assistance.",
    ],
)
def test_measured_user_turns_that_repeat_instructions_or_offer_help(text):
    assert voice_problems(text) != []


def test_a_date_for_a_time_of_day_is_misplaced_at_any_depth():
    """Measured (walkthrough, issue 25): schedule = {"start_time": "2024-01-30", ...} where start_time is
    "Start time, HH:MM (24-hour)"."""
    from wildtoolbench.bench.rules.value import leaf_schema

    start = {"type": "string", "description": "Start time, HH:MM (24-hour)."}
    assert date_misplaced("start_time", start, "2024-01-30")
    assert not date_misplaced("start_time", start, "08:30")
    assert not date_misplaced("start_time", {"type": "string", "description": "Start, YYYY-MM-DD HH:MM."}, "2024-01-30")
    assert not date_misplaced("startTime", {"type": "string"}, "2024-01-30")  # a name about time, no format: fine
    properties = {"schedule": {"type": "object", "properties": {"start_time": start}},
                  "stops": {"type": "array", "items": {"type": "object", "properties": {"city": {"type": "string"}}}}}  # fmt: skip
    assert leaf_schema(properties, "schedule.start_time") == ("start_time", start)
    assert leaf_schema(properties, "stops[0].city") == ("city", {"type": "string"})
    assert leaf_schema(properties, "nowhere.x") == ("x", None)


def test_a_planned_date_range_ends_after_it_starts():
    """Measured (walkthrough, issue 25): "The start date is 2024-01-30. The end date is 2024-01-20."."""
    from wildtoolbench.bench.generation_values import ordered_ranges

    assert ordered_ranges({"meter_id": "98672", "start_date": "2024-01-30", "end_date": "2024-01-20"}) == {
        "meter_id": "98672", "start_date": "2024-01-20", "end_date": "2024-01-30"}  # fmt: skip
    assert ordered_ranges({"dateFrom": "2024-02-01", "dateTo": "2024-01-02"}) == {
        "dateFrom": "2024-01-02", "dateTo": "2024-02-01"}  # fmt: skip
    assert ordered_ranges({"checkin": "2024-03-09", "checkout": "2024-03-02"})["checkin"] == "2024-03-02"
    in_order = {"start_date": "2024-01-01", "end_date": "2024-01-20", "start_city": "Oslo", "end_city": "Bergen"}
    assert ordered_ranges(in_order) == in_order
    # Different stems are no range: a start date and an end time are left alone.
    assert ordered_ranges({"start_date": "2024-05-02", "end_time": "2024-05-01"}) == {
        "start_date": "2024-05-02", "end_time": "2024-05-01"}  # fmt: skip
