"""Assistant-text rules: a question or reply that does not read as the assistant's (docs/generation.md §10, §11)."""

from __future__ import annotations

from wildtoolbench.bench.rules.catalog import SMALL, SMALL_STANDARD, Rule

_DOC = "docs/generation.md §10"
_CHECK = "generation_quality.assistant_problems"

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
         "a text that says one sentence twice", "generation_quality.repeated_sentence", _DOC,
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
