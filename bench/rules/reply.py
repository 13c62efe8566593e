"""Assistant-text rules: a question or reply that does not read as the assistant's (docs/generation.md §10, §11).

The family's catalog entries and the checks that apply them: the catalog is the one home of the
rules (the checker and the roles call these functions; nothing else defines a rule).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from wildtoolbench.bench.rules.catalog import SMALL, SMALL_STANDARD, Problem, Rule
from wildtoolbench.bench.rules.text import CJK, ENV_TIME, echo_problem, language_problems, word_tokens

_DOC = "docs/generation.md §10"
_CHECK = "rules.reply.assistant_problems"

REPLY_RULES = (
    Rule("reply.echo_request", "reply", ("agent", "session"), SMALL,
         "a reply that copies eight words in a row of the user's request or answers", _CHECK, _DOC,
         hints={"agent": "reply_echo"}),
    Rule("reply.echo_earlier", "reply", ("agent", "session"), SMALL,
         "a reply that copies eight words of an earlier reply with a fact this task's results lack", _CHECK, _DOC,
         hints={"agent": "reply_again"}),
    Rule("reply.template_slot", "reply", ("agent", "session"), SMALL_STANDARD,
         "a template slot left in the text ({teamId})", _CHECK, _DOC, hints={"agent": "reply_values"}),
    Rule("reply.identifier_only", "reply", ("agent", "session"), SMALL,
         "a reply on results that is one snake_case token", _CHECK, _DOC, hints={"agent": "reply_echo"}),
    Rule("reply.repeats_sentence", "reply", ("agent", "session"), SMALL,
         "a text that says one sentence twice", "rules.reply.repeated_sentence", _DOC,
         hints={"agent": "reply_once"}),
    Rule("reply.prompt_label", "reply", ("agent", "session"), SMALL_STANDARD,
         "a text holding a label of its own request (\"what the results say\")", _CHECK, _DOC,
         hints={"agent": "reply_echo"}),
    Rule("reply.ends_colon", "reply", ("agent", "session"), SMALL,
         "a text ending with a colon before it says anything", _CHECK, _DOC, hints={"agent": "reply_echo"}),
    Rule("reply.no_result_facts", "reply", ("agent", "session"), SMALL,
         "a reply on tool results that states no word of them", _CHECK, _DOC, hints={"agent": "reply_echo"}),
    Rule("reply.env_line", "reply", ("agent", "session"), SMALL,
         "a text that pastes the environment line's date and time", _CHECK, _DOC, hints={"agent": "env_line"}),
    Rule("reply.copies_hint", "reply", ("agent",), SMALL_STANDARD,
         "copies five words of its own retry instructions", "nodes.generation.agent.agent_text_problems", _DOC,
         hints={"agent": "reply_echo"}),
)  # fmt: skip


_TEMPLATE = re.compile(r"\{\s*[A-Za-z_]\w*\s*\}")
"""A template slot left in a text (``{teamId}``): a placeholder, not a value (a JSON object has quotes)."""


_IDENTIFIER = re.compile(r"[A-Za-z0-9]+(_[A-Za-z0-9]+){2,}")
"""A reply that is one snake_case token (``ahmed_khan_age_25_30``): a name, not a sentence."""


_SENTENCE_END = re.compile(r"[.!?;。！？；\n]+")


def repeated_sentence(text: str, *, words: int = 4) -> str:
    """The first sentence a text says twice (``"The dataset ID is 18406. The dataset ID is 18406."``),
    compared by its words (case and punctuation aside); ``""`` when none is (docs/generation.md §10).

    Args:
        text: a question or reply of the assistant.
        words: a sentence counts from this many words (a Chinese character is a word), so a repeated
            short line ("Yes.") does not.

    Returns:
        The repeated sentence as first written (without its end mark), or ``""``.
    """
    seen: dict[tuple[str, ...], str] = {}
    for sentence in _SENTENCE_END.split(text or ""):
        tokens = tuple(word_tokens(sentence))
        if len(tokens) < words:
            continue
        if tokens in seen:
            return seen[tokens]
        seen[tokens] = sentence.strip()
    return ""


PROMPT_LABELS = {"en": ("what the results say",), "zh": ("结果的要点",)}
"""Labels of the assistant's own request (the ``result_points`` fragment): a text holding one copies
its request instead of answering (lower-cased; the Chinese side checks the English labels too)."""


def assistant_problems(
    text: str,
    *,
    user_texts: Sequence[str] = (),
    replies: Sequence[tuple[str, str]] = (),
    results: str = "",
    use_results: bool = False,
    env_info: str = "",
    language: str = "en",
) -> list[str]:
    """Why a text of the assistant does not read as an assistant's reply (empty list = it does;
    docs/generation.md §10).

    Args:
        text: the question or reply.
        user_texts: the user's request and answers of this task: a run of eight words copied from them,
            or the whole text being one of them word for word, is a restated request.
        replies: the assistant's earlier replies, each with the text of its task's tool results: a run
            of eight words copied from one (or the whole text being one word for word) counts when it
            carries a fact of that earlier task (a word of its results) that this task's ``results``
            do not hold; two tasks with the same results may well be answered alike.
        results: the text of this task's tool results.
        use_results: the text is a reply built on tool results (``answer_type`` ``tool``): it must hold a
            word of three letters or more (or a Chinese character) of ``results`` (a refusal or a generic
            line does not).
        env_info: the environment line: its date and time must not be pasted (unless a tool result or the
            user states that very date and time: a result's ``timestamp`` may equal it).
        language: ``en`` or ``zh``; an English session's text holds no Chinese.

    A text that holds a label of its own request (:data:`PROMPT_LABELS`), ends with a colon ("... is
    as follows:"), says one sentence twice (:func:`repeated_sentence`) or holds a template slot
    (``{teamId}``) is a problem too, and so is a reply on results that is one snake_case token.

    Returns:
        One reason per problem, quoting the copied words.
    """
    found = []
    copied = echo_problem(text, user_texts, words=8)
    whole = word_tokens(text)
    if not copied and whole and any(whole == word_tokens(said) for said in user_texts):
        copied = " ".join(whole)  # a short request given back word for word ("Have a wonderful day!")
    if copied:
        found.append(Problem(f'repeats "{copied}" of the user\'s request instead of answering it', "reply.echo_request"))
    now = set(word_tokens(results))
    for reply, facts in replies:
        again = echo_problem(text, [reply], words=8)
        if not again and whole and whole == word_tokens(reply):
            again = " ".join(whole)  # a short reply given again word for word ("teamId: 99924")
        if again and set(again.split()) & (set(word_tokens(facts)) - now):
            found.append(Problem(f'repeats "{again}" of an earlier reply', "reply.echo_earlier"))
            break
    template = _TEMPLATE.search(text or "")
    if template:
        found.append(
            Problem(f'"{template.group(0)}" is a placeholder in braces instead of a real value', "reply.template_slot")
        )
    if use_results and _IDENTIFIER.fullmatch((text or "").strip()):
        found.append(Problem("is an identifier, not a sentence: it says nothing in words", "reply.identifier_only"))
    twice = repeated_sentence(text)
    if twice:
        found.append(Problem(f'repeats its own sentence "{twice}"', "reply.repeats_sentence"))
    lowered = (text or "").lower()
    for label in dict.fromkeys((*PROMPT_LABELS.get(language, ()), *PROMPT_LABELS["en"])):
        short = label.split(" ", 1)[-1] if " " in label else label  # "the results say:" too
        if label in lowered or re.search(re.escape(short) + r"\s*[:：]", lowered):
            found.append(Problem(f'"{label}" copies a label of its request instead of answering', "reply.prompt_label"))
    if (text or "").rstrip().endswith((":", "：")):
        found.append(Problem("ends with a colon, before it says anything", "reply.ends_colon"))
    if use_results and now and not any((len(t) >= 3 or CJK.match(t)) and t in now for t in word_tokens(text)):
        found.append(Problem("states nothing of the tool results it answers with", "reply.no_result_facts"))
    stamp = ENV_TIME.search(env_info or "")
    said = (results, *user_texts)
    if stamp and stamp.group(0) in (text or "") and not any(stamp.group(0) in t for t in said):
        found.append(Problem(f'"{stamp.group(0)}" copies the environment line', "reply.env_line"))
    return found + language_problems(text, language)
