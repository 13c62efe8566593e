"""Does a generated session read as a real user talking to an assistant? A rule-based quality check (docs/generation.md §10).

Five checks on a session in the dataset schema (docs/dataset.md; the ``english_*`` fields hold the
generated text in the session's language):

- **role voice**: no user turn (a task's message or an answer to a question) sounds like the
  assistant ("Thank you for providing ...", "As an AI ...", "Please provide ...", "How can I help
  you?"), is a meta-question about the assistant or its tools ("What can the AI assistant do?"),
  copies the environment line, or its message copies six words in a row of an earlier reply of the
  assistant (:func:`echo_problem`);
- **values in context**: every scalar argument value of every gold call appears in what was said
  before the call (the environment string, the user's messages and answers, the assistant's
  questions and replies, earlier tool results and calls), by the matching rules of
  ``wildtoolbench.bench.audit_context`` (docs/audit.md §5.2); a value the tool's schema offers (``enum``,
  ``default``) counts as known. The tool's own description does not: a value copied from it
  (``word="example"``) was not asked for. A date goes only to a parameter about dates
  (:func:`date_misplaced`), and no call gives one text value to two parameters
  (:func:`shared_value_errors`);
- **concrete requests**: the first message of every tool task whose calls take values names at
  least one of the task's gold argument values, or holds a concrete detail (a number, a quoted name,
  a proper name), unless the assistant asked for the values;
- **calls**: no task repeats a call, no result copies the result of a different call;
- **assistant**: no final reply copies eight words in a row of the user's request or answers or of an
  earlier reply or says one sentence twice, and no question or reply pastes the environment line
  (:func:`assistant_problems`).

The checks themselves are the rule catalog's (``wildtoolbench.bench.rules``: one module per family,
applied to a finished session by ``wildtoolbench.bench.rules_session``), the same ones the roles' outputs
are judged by as the session is generated, so a rejected output is written again with a fix. This module
keeps the check names of the quality report and the results text the reply rules read.

Pure module: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from wildtoolbench.bench.audit_context import as_text
from wildtoolbench.bench.terms import PSEUDO_TOOLS

QUALITY_CHECKS = ("voice", "values", "concrete", "calls", "assistant")
"""The checks of the quality check (``wildtoolbench.bench.rules_session.session_quality``), in report order."""


def results_text(nodes: Iterable[Mapping[str, Any]]) -> str:
    """The tool results of a task's nodes as one text (dataset nodes with ``action`` or graph nodes with
    ``name``; the pseudo tools' texts left out), for :func:`assistant_problems`."""
    out = []
    for node in nodes:
        action = node.get("action") if isinstance(node.get("action"), Mapping) else node
        if action.get("name") not in PSEUDO_TOOLS and node.get("observation") is not None:
            out.append(as_text(node["observation"]))
    return " ".join(out)
