"""A small valid session for tests that need one without ../shared."""

from __future__ import annotations

import copy


def _node(name, arguments, observation, deps=(), **extra):
    node = {"action": {"name": name, "arguments": arguments}, "observation": observation, "dependency_list": list(deps)}
    node.update(extra)
    return node


def make_session(session_id: str = "wild_tool_bench_0") -> dict:
    """A small valid session: a float argument, a nested argument, a clarification, a chat turn."""
    tools = [
        {
            "type": "function",
            "function": {
                "name": "getWeather",
                "description": "Weather of a city.",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}, "lat": {"type": "float"}},
                    "required": ["city"],
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": "bookTable",
                "description": "Book a table.",
                "parameters": {
                    "type": "object",
                    "properties": {"place": {"type": "string"}, "people": {"type": "integer"}},
                    "required": ["place", "people"],
                },
            },
        },
    ]
    answers = [
        [
            _node("getWeather", {"lat": 47.5, "city": "Seattle"}, {"temp": 14, "rain": 0.5}),
            _node("getWeather", {"city": "Paris"}, "sunny"),
            _node("prepare_to_answer", {"answer_type": "tool"}, "Rainy in Seattle, sunny in Paris.", [0, 1]),
        ],
        [
            _node(
                "ask_user_for_required_parameters",
                {"tool_name": "bookTable", "missing_required_parameters": ["people"]},
                "For how many people?",
                user_input="Four.",
            ),
            _node("bookTable", {"place": "Chez Nous", "people": 4}, {"ok": True}, [0]),
            _node("prepare_to_answer", {"answer_type": "tool"}, "Booked.", [1]),
        ],
        [_node("prepare_to_answer", {"answer_type": "chat"}, "You're welcome!")],
        [
            _node("getWeather", {"city": "Oslo"}, "cold"),
            _node("bookTable", {"place": "Oslo Fish", "people": 2}, "booked", [0]),
            _node("prepare_to_answer", {"answer_type": "tool"}, "Cold; booked.", [1]),
        ],
    ]
    return {
        "id": session_id,
        "english_env_info": "2024-05-03 10:12:00 Friday",
        "english_tools": tools,
        "english_tasks": ["Weather in Seattle and Paris?", "Book Chez Nous.", "Thanks!", "Oslo weather, then book."],
        "english_answer_list": answers,
        "english_task_types": ["Parallel Multi-Tool", "Clarify", "Chat", "Sequential Multi-Tool"],
        "english_turn_subtypes": ["Partial Information", "Coreferential Reference", "Long-Range Dependency"],
        "env_info": "2024-05-03 10:12:00 星期五",
        "tools": copy.deepcopy(tools),
        "tasks": ["Weather in Seattle and Paris?", "Book Chez Nous.", "Thanks!", "Oslo weather, then book."],
        "answer_list": copy.deepcopy(answers),
        "task_types": ["多工具", "澄清", "闲聊", "多工具"],
        "turn_subtypes": ["省略成分", "指代", "长期记忆"],
    }
