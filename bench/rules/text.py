"""Text rules of any speaker: the wrong language, and broken text (docs/generation.md §10, §11).

The broken-text rules (``text.cut_off``, ``text.parameter_fragment``, ``text.stray_bracket``) judge the
kept sessions under every profile (the quality check) and the roles' outputs under ``standard`` only,
so that the ``small`` profile generates what it did before the catalog.
"""

from __future__ import annotations

from wildtoolbench.bench.rules.catalog import SMALL, SMALL_STANDARD, STANDARD, Rule

_DOC = "docs/generation.md §10"
_BROKEN = "rules.broken.broken_text"
_BY_ROLE = {"user": STANDARD, "agent": STANDARD}

TEXT_RULES = (
    Rule("text.language", "text", ("user", "agent", "session"), SMALL,
         "Chinese in an English session's text", "generation_quality.voice_problems", _DOC, languages=("en",),
         hints={"user": "language", "agent": "language"}),
    Rule("text.cut_off", "text", ("user", "agent", "session"), SMALL_STANDARD,
         "a text cut off mid-sentence (\"...with the days set to\")", _BROKEN, _DOC, role_profiles=_BY_ROLE),
    Rule("text.parameter_fragment", "text", ("user", "agent", "session"), SMALL_STANDARD,
         "a cut-off piece of a parameter name (\"for a yearly_consum\")", _BROKEN, _DOC, role_profiles=_BY_ROLE),
    Rule("text.stray_bracket", "text", ("user", "agent", "session"), SMALL_STANDARD,
         "a closing bracket that nothing opened, or one left open (\"proceed to} Central\")", _BROKEN, _DOC,
         role_profiles=_BY_ROLE),
)  # fmt: skip
