"""User-turn rules: a user turn that does not read as the user's (docs/generation.md §10, §11).

The patterns are data: ``(rule id, regular expression)`` per language, searched case-insensitively;
the Chinese side applies the English patterns too. The reason quotes the match and says why
(:data:`WHY`).
"""

from __future__ import annotations

import re

from wildtoolbench.bench.rules.catalog import SMALL, SMALL_STANDARD, Problem, Rule
from wildtoolbench.bench.rules.text import ENV_TIME, language_problems

_DOC = "docs/generation.md §10"
_CHECK = "rules.voice.voice_problems"

WHY = {
    "voice.thanks": "thanks the user for information, as the assistant does",
    "voice.as_ai": "speaks as an AI",
    "voice.asks_to_provide": "asks the user to provide information, as the assistant does",
    "voice.offers_help": "offers help, as the assistant does",
    "voice.stray_symbols": "holds a run of stray symbols instead of words",
    "voice.speaker_label": "labels itself as a speaker instead of speaking",
    "voice.declines": "declines, as the assistant does",
    "voice.presents_results": "presents results, as the assistant does",
    "voice.explains_how": "explains how to do it, as the assistant does",
    "voice.code_quote": "quotes code or a tool name, as the assistant does",
    "voice.asks_what_user_wants": "asks what the user wants, as the assistant does",
    "voice.apologises": "apologises, as the assistant does",
    "voice.offers_to_act": "offers to act, as the assistant does",
    "voice.advises": "advises or declines, as the assistant does",
    "voice.answers_as_assistant": "answers as the assistant does",
    "voice.placeholder_brackets": "holds a placeholder in brackets instead of a real value",
    "voice.placeholder_braces": "holds a placeholder in braces instead of a real value",
    "voice.env_line": "copies the environment line instead of asking for something",
    "voice.instructions": "repeats the instructions instead of asking for something",
    "voice.meta_assistant": "talks about the AI assistant instead of asking for something",
    "voice.meta_tools": "talks about the tools instead of asking for something",
    "voice.meta_capabilities": "asks what the assistant can do instead of asking for something",
}
"""Each voice rule's reason, after the quoted match."""

VOICE_RULES = (
    Rule("voice.thanks", "voice", ("user", "session"), SMALL, "thanks the user for information", _CHECK, _DOC),
    Rule("voice.as_ai", "voice", ("user", "session"), SMALL_STANDARD, "speaks as an AI", _CHECK, _DOC),
    Rule("voice.asks_to_provide", "voice", ("user", "session"), SMALL,
         "asks the user to provide information", _CHECK, _DOC),
    Rule("voice.offers_help", "voice", ("user", "session"), SMALL_STANDARD, "offers help", _CHECK, _DOC),
    Rule("voice.stray_symbols", "voice", ("user", "session"), SMALL_STANDARD,
         "a run of five or more stray symbols", _CHECK, _DOC),
    Rule("voice.speaker_label", "voice", ("user", "session"), SMALL_STANDARD,
         "opens with a speaker label (User:, Assistant:)", _CHECK, _DOC),
    Rule("voice.declines", "voice", ("user", "session"), SMALL,
         "declines to provide something, or has no access to it", _CHECK, _DOC),
    Rule("voice.presents_results", "voice", ("user", "session"), SMALL, "presents results or details", _CHECK,
         _DOC),
    Rule("voice.explains_how", "voice", ("user", "session"), SMALL,
         "explains how to do it (\"you can use\", \"to get X, you need\")", _CHECK, _DOC),
    Rule("voice.code_quote", "voice", ("user", "session"), SMALL, "any text in backticks", _CHECK, _DOC,
         languages=("en", "zh")),
    Rule("voice.asks_what_user_wants", "voice", ("user", "session"), SMALL, "asks what the user wants", _CHECK,
         _DOC),
    Rule("voice.apologises", "voice", ("user", "session"), SMALL, "apologises", _CHECK, _DOC),
    Rule("voice.offers_to_act", "voice", ("user", "session"), SMALL, "offers to act (\"would you like me to\")",
         _CHECK, _DOC),
    Rule("voice.advises", "voice", ("user", "session"), SMALL, "advises (\"you might want to\") or declines",
         _CHECK, _DOC),
    Rule("voice.answers_as_assistant", "voice", ("user", "session"), SMALL,
         "answers as the assistant (\"Sure, here is\", \"I can't help with\")", _CHECK, _DOC),
    Rule("voice.placeholder_brackets", "voice", ("user", "session"), SMALL_STANDARD,
         "a placeholder in brackets ([City])", _CHECK, _DOC, hints={"user": "placeholder"}),
    Rule("voice.placeholder_braces", "voice", ("user", "session"), SMALL_STANDARD,
         "a placeholder in braces ({city})", _CHECK, _DOC, hints={"user": "placeholder"}),
    Rule("voice.env_line", "voice", ("user", "session"), SMALL_STANDARD,
         "recites the environment line (its date and time, \"today's date is\")", _CHECK, _DOC,
         hints={"user": "env_line"}),
    Rule("voice.instructions", "voice", ("user", "session"), SMALL,
         "repeats the generator's instructions", _CHECK, _DOC),
    Rule("voice.meta_assistant", "voice", ("user", "session"), SMALL,
         "an opening message about the AI assistant", _CHECK, _DOC),
    Rule("voice.meta_tools", "voice", ("user", "session"), SMALL, "an opening message about the tools", _CHECK,
         _DOC),
    Rule("voice.meta_capabilities", "voice", ("user", "session"), SMALL,
         "an opening message asking what the assistant can do", _CHECK, _DOC),
    Rule("voice.echo", "voice", ("user", "session"), SMALL,
         "six words in a row copied from the assistant's replies", "rules.text.echo_problem", _DOC,
         hints={"user": "echo"}),
    Rule("voice.copies_hint", "voice", ("user",), SMALL_STANDARD,
         "copies words of its own retry instructions", "nodes.generation.user.message_problems", _DOC),
)  # fmt: skip

PATTERNS_EN: tuple[tuple[str, str], ...] = (
    ("voice.thanks", r"\bthank(s| you) (so much |very much )?for (providing|sharing|the information|your (patience|question|request))"),  # noqa: E501
    ("voice.as_ai", r"\bas an ai\b"),
    ("voice.asks_to_provide", r"\b(please|could you|can you) (please )?provide (me with )?(your|this information|the (following|necessary|required|missing)|more (details|information)|the details)\b"),  # noqa: E501
    ("voice.offers_help", r"\bhow (can|may|could) i (help|assist)\b"),
    ("voice.offers_help", r"\bi('d| would| will|'ll)? ?be (happy|glad) to (help|assist)\b"),
    ("voice.offers_help", r"\b(is there )?(anything|something) else i can (help|do|assist)\b"),
    ("voice.offers_help", r"\bi('m| am) here to help\b"),
    ("voice.stray_symbols", r"([^\w\s.])(\s*\1){4,}"),
    ("voice.offers_help", r"\bif you need (any )?(further |more |other )?(help|assistance)\b|\bwe('re| are) here to help\b"),  # noqa: E501
    ("voice.speaker_label", r"^\s*(user|assistant)\s*:"),
    ("voice.declines", r"\bi('m| am) unable to provide\b|\bi can('|no)?t provide (that|these|this|them)\b"),
    ("voice.offers_help", r"\bi (can|will|'ll) help you\b"),
    ("voice.presents_results", r"\bhere (is|are) (the|your) (information|results?|details)\b"),
    ("voice.offers_help", r"\bfeel free to (ask|let me know)\b"),
    ("voice.offers_help", r"\b(let me know )?if you('d| would)? (like|need|want) (any )?(assistance|help|me to)\b|\bi('ll| will) do my best\b"),  # noqa: E501
    ("voice.explains_how", r"\byou can (use|utili[sz]e|try|call|query)\b"),
    ("voice.code_quote", r"`[^`]*`"),
    ("voice.asks_what_user_wants", r"\byou('d| would)? like to (explore|know|learn|discuss|see|find|try|ask)\b|\bwhat (else )?can i (do|find|get) for you\b"),  # noqa: E501
    ("voice.apologises", r"\b(i apologi[sz]e|my apologies)\b"),
    ("voice.offers_to_act", r"\bwould you like (me )?to\b|\bdo you want me to\b"),
    ("voice.explains_how", r"\byou can follow these steps\b|\byou would use the following\b|\bhere'?s how you can\b"),
    ("voice.declines", r"\bi (do not|don't) have (access|the (ability|capability))\b"),
    ("voice.apologises", r"\bi'?m sorry,? but\b"),
    ("voice.advises", r"\byou (might|may) want to\b|\bi('m| am) not able to do that\b"),
    ("voice.explains_how", r"\b(in order )?to (retrieve|get|find|use|access|query|call|check|obtain|search|look up|see)\b[^.?!]{0,60}, you (need|will need|have to|must|should)\b"),  # noqa: E501
    ("voice.answers_as_assistant", r"\bi('m| am) sorry,? but i can('|no)?t\b|\bi can('|no)?t (help|provide|assist) (you|with)\b|\bsure, here (is|are)\b"),  # noqa: E501
    ("voice.asks_to_provide", r"\b(provide|give|tell) (me )?(with )?(the |more )?(exact|specific) \w+( \w+)? (that )?you (want|need|would like)\b"),  # noqa: E501
    ("voice.offers_help", r"\bif you need any (additional|further|more|other) (information|details|help|assistance)\b"),
    ("voice.offers_help", r"\bif you have any (other |further |more )?questions\b|\bneed (any )?further assistance\b"),
    ("voice.asks_what_user_wants", r"\bis there (a|any) specific \w+( or \w+)? (that )?you (want|would like|need)\b"),
    ("voice.placeholder_brackets", r"\[[A-Z][\w ]{0,30}\]"),
    ("voice.placeholder_braces", r"\{\s*[A-Za-z_]\w*\s*\}"),
    ("voice.env_line", r"\bcurrent (date|time)( and (time|date))? is\b|\btoday'?s date is\b"),
    ("voice.instructions", r"\byour message must give\b|\b(so|as) the assistant (has|needs|must) to ask|\byour previous message was rejected\b|\bwas refused because\b|\bwrite it again\b|\bwhat you want:|\bleave \w+ out\b|\brepeat the assistant'?s words\b|\bin (a few )?words of your own\b|\b(every value|the values) of the draft\b|\bthe person'?s own (request|words)\b"),  # noqa: E501
)  # fmt: skip
META_EN: tuple[tuple[str, str], ...] = (
    ("voice.meta_assistant", r"\b(the|an|this|your) ai( assistant)?\b"),
    ("voice.meta_tools", r"\b(the |these |your |available )(tools|functions)\b"),
    ("voice.meta_capabilities", r"\bwhat can you do\b"),
    ("voice.meta_tools", r"\btool list\b"),
)
PATTERNS_ZH: tuple[tuple[str, str], ...] = (
    ("voice.thanks", r"感谢您?提供"),
    ("voice.as_ai", r"作为一?个?\s*ai"),
    ("voice.asks_to_provide", r"请(您)?提供"),
    ("voice.offers_help", r"(我|我们)(可以|能|将)?(为您|帮您|帮助您)"),
    ("voice.offers_help", r"有什么(可以|能)(帮|为)"),
    ("voice.presents_results", r"以下是(您的|查询)"),
    ("voice.env_line", r"当前(的)?(日期|时间)(和时间)?(是|为)"),
    ("voice.instructions", r"重复助手说过的话|用你自己的(几句)?话|草稿里的"),
)
META_ZH: tuple[tuple[str, str], ...] = (
    ("voice.meta_assistant", r"ai\s*助手"),
    ("voice.meta_tools", r"(这些|可用的|你的)(工具|函数)"),
    ("voice.meta_capabilities", r"你能做什么"),
)


_PATTERNS = {
    "en": [(re.compile(p, re.IGNORECASE), rule) for rule, p in PATTERNS_EN],
    "zh": [(re.compile(p, re.IGNORECASE), rule) for rule, p in (*PATTERNS_ZH, *PATTERNS_EN)],
}


_META = {
    "en": [(re.compile(p, re.IGNORECASE), rule) for rule, p in META_EN],
    "zh": [(re.compile(p, re.IGNORECASE), rule) for rule, p in (*META_ZH, *META_EN)],
}


def voice_problems(text: str, language: str = "en", *, opening: bool = False, env_info: str = "") -> list[str]:
    """Why a user turn does not sound like the user (empty list = it does; docs/generation.md §10).

    Args:
        text: one user message or answer.
        language: ``en`` or ``zh`` (the Chinese side also applies the English phrases).
        opening: the message opens a task: a meta-question about the assistant or its tools is a
            problem too (an answer to a question may mention them).
        env_info: the environment line: a turn that holds its date and time (``2024-01-19 12:02``)
            pasted it; a person does not recite the clock.

    Returns:
        One reason per phrase found, quoting it: ``'"Thank you for providing" thanks the user for
        information, as the assistant does'``.
    """
    found = []
    patterns = _PATTERNS.get(language, _PATTERNS["en"]) + (_META.get(language, _META["en"]) if opening else [])
    for pattern, rule in patterns:
        match = pattern.search(text or "")
        if match:
            found.append(Problem(f'"{match.group(0)}" {WHY[rule]}', rule, text=match.group(0)))
    stamp = ENV_TIME.search(env_info or "")
    if stamp and stamp.group(0)[:16] in (text or ""):
        found.append(
            Problem(
                f'"{stamp.group(0)}" copies the environment line instead of asking for something',
                "voice.env_line",
                text=stamp.group(0),
            )
        )
    found += language_problems(text, language)
    return found
