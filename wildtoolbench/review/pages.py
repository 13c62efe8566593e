"""The HTML pages of the review app, built on the server (docs/review.md §2).

Every text that comes from the dataset, the findings or a reviewer goes through :func:`h` (HTML
escaping, quotes included) before it is written into a page; values are shown as text inside
``<pre>`` elements and never as markup. The pages load one stylesheet and one script from the app
itself (``/assets/``), nothing from elsewhere, and hold no inline script or style (the Content
Security Policy of :mod:`wildtoolbench.review.app` forbids them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from wildtoolbench.bench.rules import count_findings, finding_doc, finding_label
from wildtoolbench.bench.schema import fields_for
from wildtoolbench.review.agreement import PairAgreement, task_status
from wildtoolbench.review.dag import dag_svg
from wildtoolbench.review.store import SessionRow, Verdict

KEYS_SESSION: tuple[tuple[str, str], ...] = (
    ("j / k", "next / previous task"),
    ("a", "accept the current task"),
    ("r", "reject the current task (type the reason, Enter saves, Esc cancels)"),
    ("A", "accept every task of the session you have not judged yet"),
    ("f / F", "select the next / previous editable field of the current task"),
    ("e", "edit the selected field (Ctrl+Enter saves, Esc cancels)"),
    ("n / p", "next / previous session of the queue"),
    ("u", "back to the queue"),
    ("?", "show or hide these keys"),
)
"""The session page's keys (docs/review.md §2.3)."""

KEYS_QUEUE: tuple[tuple[str, str], ...] = (
    ("j / k", "select the next / previous session"),
    ("Enter", "open the selected session"),
    ("g", "agreement between reviewers"),
    ("x", "export"),
    ("?", "show or hide these keys"),
)
"""The queue page's keys (docs/review.md §2.3)."""


def h(value: Any) -> str:
    """``value`` as HTML text: ``&``, ``<``, ``>``, ``"`` and ``'`` escaped (docs/review.md §9)."""
    return escape("" if value is None else str(value), quote=True)


def _pretty(value: Any) -> str:
    compact = json.dumps(value, ensure_ascii=False)
    return compact if len(compact) <= 100 else json.dumps(value, ensure_ascii=False, indent=2)


def page(title: str, body: str, *, token: str, reviewer: str | None, nav: str = "") -> str:
    """A whole page: head (stylesheet, script, the server's request token), the header with the reviewer's
    name, and ``body`` (already escaped HTML; docs/review.md §2)."""
    who = (
        f'reviewing as <strong id="reviewer-name">{h(reviewer)}</strong> '
        '<button type="button" id="change-reviewer" class="link">change</button>'
        if reviewer
        else '<span id="reviewer-name" class="missing">no reviewer name yet</span>'
    )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="wtb-token" content="{h(token)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{h(title)} · wtb review</title>"
        '<link rel="stylesheet" href="/assets/review.css"><script src="/assets/review.js" defer></script></head>\n'
        f'<body data-reviewer="{h(reviewer or "")}">'
        '<header class="top"><a class="brand" href="/">wtb review</a>'
        f'<nav>{nav}<a href="/">queue</a><a href="/agreement">agreement</a><a href="/export">export</a>'
        '<button type="button" class="link" id="show-keys">keys (?)</button></nav>'
        f'<span class="who">{who}</span></header>\n'
        '<div id="flash" role="status" aria-live="polite" hidden></div>\n'
        f"<main>{body}</main>\n"
        '<dialog id="name-dialog"><form method="dialog" id="name-form"><label>Your reviewer name '
        '<input id="name-input" name="name" maxlength="40" autocomplete="off" required></label>'
        '<p class="hint">1-40 letters, digits, spaces or . @ \' - _ ; every verdict and edit is saved under it.</p>'
        '<button type="submit">start reviewing</button></form></dialog>\n'
        "</body></html>\n"
    )


def keys_help(keys: Sequence[tuple[str, str]]) -> str:
    """The keys overlay (hidden until ``?``)."""
    rows = "".join(f"<tr><td><kbd>{h(k)}</kbd></td><td>{h(v)}</td></tr>" for k, v in keys)
    return f'<div id="keys" class="keys" hidden><h2>Keys</h2><table>{rows}</table><p>Esc or ? closes this.</p></div>'


# --------------------------------------------------------------------------- the queue


def counts(findings: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """``(errors, warnings)`` among a session's findings."""
    errors = sum(1 for f in findings if f.get("severity") == "error")
    return errors, len(findings) - errors


def priority(row: SessionRow) -> tuple[int, int, int]:
    """The queue's sort key (docs/review.md §2.1): more error findings first, then more warnings, then
    dataset order."""
    errors, warnings = counts(row.findings)
    return (-errors, -warnings, row.pos)


def _task_count(row: SessionRow) -> int:
    tasks = row.current.get("english_tasks")
    return len(tasks) if isinstance(tasks, list) else 0


def _by_task(verdicts: Sequence[Verdict]) -> dict[tuple[int, int], dict[str, Verdict]]:
    out: dict[tuple[int, int], dict[str, Verdict]] = {}
    for verdict in verdicts:
        out.setdefault((verdict.pos, verdict.task), {})[verdict.reviewer] = verdict
    return out


QUEUE_ROWS = 500
"""Sessions on one page of the queue (docs/review.md §2.1)."""


def queue_page(
    rows: Sequence[SessionRow],
    verdicts: Sequence[Verdict],
    *,
    token: str,
    reviewer: str | None,
    meta: Mapping[str, str],
    page_number: int = 0,
) -> str:
    """The queue (docs/review.md §2.1): every session, those with findings first (:func:`priority`), with
    its findings counted by rule id (by kind where no rule applies) and a line counting every finding so, each task's status and how many tasks the current reviewer has judged;
    :data:`QUEUE_ROWS` sessions a page (``page_number`` from 0), with links to the others."""
    by_task = _by_task(verdicts)
    reviewers_of: dict[int, set[str]] = {}
    for (pos, _), judged in by_task.items():
        reviewers_of.setdefault(pos, set()).update(judged)
    ordered = sorted(rows, key=priority)
    pages_count = max(1, -(-len(ordered) // QUEUE_ROWS))
    page_number = min(max(page_number, 0), pages_count - 1)
    first = page_number * QUEUE_ROWS
    shown = ordered[first : first + QUEUE_ROWS]
    body_rows = []
    for index, row in enumerate(shown):
        errors, warnings = counts(row.findings)
        kind_text = " ".join(
            f'<span class="kind">{h(label)}{f" ×{n}" if n > 1 else ""}</span>'
            for label, n in count_findings(row.findings).items()
        )
        statuses = []
        mine = 0
        for task in range(_task_count(row)):
            judged = by_task.get((row.pos, task), {})
            status = task_status({name: v.verdict for name, v in judged.items()})
            statuses.append(f'<span class="st st-{status}" title="task {task + 1}: {status}">{task + 1}</span>')
            mine += 1 if reviewer and reviewer in judged else 0
        reviewers = sorted(reviewers_of.get(row.pos, ()))
        invalid = "" if row.valid else ' <span class="badge bad">invalid</span>'
        edited = f' <span class="badge">v{row.version}</span>' if row.version > 1 else ""
        body_rows.append(
            f'<tr class="qrow{" sel" if index == 0 else ""}" data-href="/session/{row.pos}">'
            f'<td><a href="/session/{row.pos}">{h(row.sid or f"(line {row.line})")}</a>{invalid}{edited}</td>'
            f'<td class="num{" err" if errors else ""}">{errors}</td><td class="num{" warn" if warnings else ""}">{warnings}</td>'
            f"<td>{kind_text}</td><td>{''.join(statuses)}</td>"
            f'<td class="num">{mine}/{_task_count(row)}</td><td>{h(", ".join(reviewers))}</td></tr>'
        )
    total_findings = sum(len(r.findings) for r in rows)
    with_findings = sum(1 for r in rows if r.findings)
    by_rule = count_findings(f for r in rows for f in r.findings)
    rule_summary = (
        '<p class="legend" id="findings-by-rule">findings by rule id (kind where no rule applies): '
        + " · ".join(f'<span class="kind">{h(label)}</span> {n}' for label, n in by_rule.items())
        + "</p>"
        if by_rule
        else ""
    )
    pending = (
        ""
        if meta.get("audit", "done") == "done"
        else f'<p class="legend" id="audit-progress">audit in progress: {h(meta.get("audited", "0"))} of {len(rows)} '
        "session(s) audited, duplicates last; reload for the findings found so far (docs/review.md §3)</p>"
    )
    links = []
    if page_number > 0:
        links.append(f'<a href="/?page={page_number - 1}" id="queue-prev">‹ previous</a>')
    if page_number + 1 < pages_count:
        links.append(f'<a href="/?page={page_number + 1}" id="queue-next">next ›</a>')
    paging = (
        ""
        if pages_count == 1
        else f'<p class="legend">sessions {first + 1}-{first + len(shown)} of {len(ordered)} · {" · ".join(links)}</p>'
    )
    body = (
        pending
        + paging
        + (
            f'<h1>Queue <span class="sub">{h(meta.get("dataset", ""))} · {len(rows)} session(s), '
            f"{with_findings} with findings ({total_findings} finding(s)) · side {h(meta.get('language', 'en'))}</span></h1>"
            '<table class="queue" id="queue"><thead><tr><th>session</th><th>errors</th><th>warnings</th>'
            "<th>findings</th><th>tasks</th><th>judged by you</th><th>reviewers</th></tr></thead>"
            f"<tbody>{''.join(body_rows)}</tbody></table>"
            + rule_summary
            +
            '<p class="legend"><span class="st st-accepted">t</span> accepted <span class="st st-rejected">t</span> '
            'rejected <span class="st st-open">t</span> open · sessions with error findings come first</p>'
            + keys_help(KEYS_QUEUE)
        )
    )
    return page("queue", body, token=token, reviewer=reviewer)


# --------------------------------------------------------------------------- a session


_NODE_FIELD = re.compile(r"^(?:english_)?answer_list\[(\d+)\]\[(\d+)\]")


def _field(path: str, value: Any, *, label: str, flagged: bool, missing: bool = False, text_mode: bool = False) -> str:
    mode = "text" if text_mode and isinstance(value, str) else "json"
    shown = value if mode == "text" else _pretty(value)
    return (
        f'<div class="field{" flagged" if flagged else ""}" data-path="{h(path)}" data-mode="{mode}" tabindex="-1">'
        f'<div class="field-head"><span class="field-label">{h(label)}</span>'
        f'<code class="path">{h(path)}</code><button type="button" class="edit link">edit</button></div>'
        f'<pre class="value{" missing" if missing else ""}">{h(shown)}</pre></div>'
    )


def _is_flagged(path: str, fields: Sequence[str]) -> bool:
    return any(f == path or f.startswith(path + ".") or f.startswith(path + "[") for f in fields)


def _finding_item(finding: Mapping[str, Any]) -> str:
    """One finding: its rule id (its kind where no rule applies), severity, docs section and message
    (docs/review.md §2.2)."""
    severity = str(finding.get("severity"))
    label = finding_label(finding)
    doc = finding_doc(finding)
    return (
        f'<li class="finding {h(severity)}" data-kind="{h(finding.get("kind"))}" data-rule="{h(label)}">'
        f'<span class="kind">{h(label)}</span> <span class="sev">{h(severity)}</span>'
        + (f' <span class="doc">{h(doc)}</span>' if doc else "")
        + f'<div class="msg">{h(finding.get("message"))}</div></li>'
    )


def _verdict_items(judged: Mapping[str, Verdict], version: int) -> str:
    if not judged:
        return '<p class="none">no verdict yet</p>'
    items = []
    for name, verdict in sorted(judged.items()):
        stale = f' <span class="badge">on v{verdict.version}</span>' if verdict.version != version else ""
        reason = f'<div class="reason">{h(verdict.reason)}</div>' if verdict.reason else ""
        items.append(
            f'<li class="verdict v-{h(verdict.verdict)}" data-reviewer="{h(name)}"><strong>{h(name)}</strong> '
            f"{h(verdict.verdict)}{stale}{reason}</li>"
        )
    return f'<ul class="verdicts">{"".join(items)}</ul>'


def _node_html(side: Any, t: int, n: int, node: Any, fields: Sequence[str], flagged_nodes: set[int]) -> str:
    """Gold node ``n`` of task ``t``: its action, dependencies and editable arguments, observation and user reply
    (flagged where an audit finding names them; docs/review.md §2.2)."""
    node = node if isinstance(node, Mapping) else {}
    action = node.get("action") if isinstance(node.get("action"), Mapping) else {}
    base = f"{side.answer_list}[{t}][{n}]"
    deps = node.get("dependency_list")
    parts = [
        _field(
            f"{base}.action.arguments",
            action.get("arguments"),
            label="arguments",
            flagged=_is_flagged(f"{base}.action.arguments", fields),
        ),
        _field(
            f"{base}.observation",
            node.get("observation"),
            label="observation",
            flagged=_is_flagged(f"{base}.observation", fields),
            text_mode=True,
        ),
    ]
    if "user_input" in node:
        parts.append(
            _field(
                f"{base}.user_input",
                node.get("user_input"),
                label="user reply",
                flagged=_is_flagged(f"{base}.user_input", fields),
                text_mode=True,
            )
        )
    return (
        f'<div class="node{" flagged" if n in flagged_nodes else ""}" id="t{t}n{n}">'
        f'<div class="node-head"><span class="nidx">#{n}</span> <code class="aname">{h(action.get("name"))}</code>'
        f' <span class="deps">after {h(", ".join(map(str, deps)) if isinstance(deps, list) and deps else "nothing")}</span></div>'
        f"{''.join(parts)}</div>"
    )


def _tool_html(tool: Any) -> str:
    """A tool of the session: its name and description, its parameters folded below."""
    function = tool.get("function") if isinstance(tool, Mapping) and isinstance(tool.get("function"), Mapping) else {}
    return (
        f'<details class="tool"><summary><code>{h(function.get("name"))}</code> '
        f'<span class="desc">{h(function.get("description"))}</span></summary>'
        f'<pre class="value">{h(_pretty(function.get("parameters")))}</pre></details>'
    )


def session_page(
    row: SessionRow,
    verdicts: Sequence[Verdict],
    *,
    token: str,
    reviewer: str | None,
    language: str,
    neighbours: tuple[int | None, int | None],
    position: tuple[int, int],
) -> str:
    """One session (docs/review.md §2.2): the environment, the tools, and per task the user message, the
    gold DAG drawn, every gold node with its editable arguments, observation and reply, the task's
    audit findings beside it, and each reviewer's verdict with the accept / reject controls."""
    side = fields_for(language)
    session = row.current
    by_task = _by_task(verdicts)
    tasks = session.get(side.tasks) if isinstance(session.get(side.tasks), list) else []
    answers = session.get(side.answer_list) if isinstance(session.get(side.answer_list), list) else []
    types = session.get(side.task_types) if isinstance(session.get(side.task_types), list) else []
    subtypes = session.get(side.turn_subtypes) if isinstance(session.get(side.turn_subtypes), list) else []
    fields = [str(f.get("field")) for f in row.findings if f.get("field")]
    whole = [f for f in row.findings if f.get("task") is None]
    count = max(len(tasks), len(answers))
    sections = []
    for t in range(count):
        nodes = answers[t] if t < len(answers) and isinstance(answers[t], list) else []
        flagged_nodes = {int(m.group(2)) for f in fields if (m := _NODE_FIELD.match(f)) and int(m.group(1)) == t}
        task_type = types[t] if t < len(types) else "?"
        subtype = f" · {h(subtypes[t - 1])}" if 0 < t <= len(subtypes) else ""
        message = tasks[t] if t < len(tasks) else ""
        rows_html = [_node_html(side, t, n, node, fields, flagged_nodes) for n, node in enumerate(nodes)]
        task_findings = [f for f in row.findings if f.get("task") == t]
        judged = by_task.get((row.pos, t), {})
        mine = judged.get(reviewer) if reviewer else None
        sections.append(
            f'<section class="task" id="t{t}" data-task="{t}">'
            f'<div class="task-main"><h2>Task {t + 1} <span class="sub">{h(task_type)}{subtype}</span></h2>'
            + _field(
                f"{side.tasks}[{t}]",
                message,
                label="user message",
                flagged=_is_flagged(f"{side.tasks}[{t}]", fields),
                text_mode=True,
            )
            + f'<div class="dag-wrap">{dag_svg(nodes, t, flagged_nodes)}</div>'
            + f'<div class="nodes">{"".join(rows_html)}</div></div>'
            f'<aside class="task-side"><div class="side-inner"><h3>Findings ({len(task_findings)})</h3>'
            + (
                f'<ul class="findings">{"".join(_finding_item(f) for f in task_findings)}</ul>'
                if task_findings
                else '<p class="none">none</p>'
            )
            + f"<h3>Verdicts</h3>{_verdict_items(judged, row.version)}"
            f'<div class="actions"><button type="button" class="accept{" on" if mine and mine.verdict == "accept" else ""}">accept (a)</button>'
            f'<button type="button" class="reject{" on" if mine and mine.verdict == "reject" else ""}">reject (r)</button>'
            '<form class="reason-form" hidden><input class="reason" maxlength="2000" placeholder="why is it rejected? Enter saves">'
            "</form></div></div></aside></section>"
        )
    tools = session.get(side.tools) if isinstance(session.get(side.tools), list) else []
    tool_items = [_tool_html(tool) for tool in tools]
    previous, following = neighbours
    nav = (f'<a id="prev-session" href="/session/{previous}">← prev (p)</a>' if previous is not None else "") + (
        f'<a id="next-session" href="/session/{following}">next (n) →</a>' if following is not None else ""
    )
    edited = (
        f" · version {row.version}, last edited by {h(row.updated_by)} at {h(row.updated_at)}"
        if row.version > 1
        else " · version 1 (as read)"
    )
    invalid = "" if row.valid else ' <span class="badge bad">invalid: not exported until fixed</span>'
    body = (
        f'<div id="session" data-pos="{row.pos}" data-version="{row.version}" data-sid="{h(row.sid or "")}">'
        f'<h1>{h(row.sid or "(no id)")}{invalid} <span class="sub">{position[0] + 1} of {position[1]} in the queue · '
        f"line {row.line}{edited}</span></h1>"
        + (
            f'<div class="whole"><h3>Findings about the whole session</h3><ul class="findings">'
            f"{''.join(_finding_item(f) for f in whole)}</ul></div>"
            if whole
            else ""
        )
        + f'<details class="env" open><summary>Environment</summary><pre class="value">{h(session.get(side.env_info))}</pre></details>'
        f'<details class="tools"><summary>Tools ({len(tools)})</summary>{"".join(tool_items)}</details>'
        f"{''.join(sections)}</div>" + keys_help(KEYS_SESSION)
    )
    return page(row.sid or "session", body, token=token, reviewer=reviewer, nav=nav)


# --------------------------------------------------------------------------- agreement and export


def _number(value: float | None, undefined: str = "undefined") -> str:
    return undefined if value is None else f"{value:.3f}"


def agreement_page(
    pairs: Sequence[PairAgreement],
    verdicts: Sequence[Verdict],
    rows: Mapping[int, SessionRow],
    *,
    token: str,
    reviewer: str | None,
) -> str:
    """Agreement between reviewers (docs/review.md §8): each reviewer's accepts and rejects, and for each
    pair the tasks both judged, the observed agreement, Cohen's kappa and the tasks they disagree on."""
    per: dict[str, dict[str, int]] = {}
    for verdict in verdicts:
        per.setdefault(verdict.reviewer, {"accept": 0, "reject": 0})[verdict.verdict] += 1
    reviewer_rows = "".join(
        f"<tr><td>{h(name)}</td><td class='num'>{c['accept']}</td><td class='num'>{c['reject']}</td></tr>"
        for name, c in sorted(per.items())
    )
    pair_rows = []
    for pair in pairs:
        links = ", ".join(
            f'<a href="/session/{pos}#t{task}">{h(rows[pos].sid if pos in rows else pos)} task {task + 1}</a>'
            for pos, task in pair.disagreements
        )
        pair_rows.append(
            f'<tr class="pair"><td>{h(pair.first)}</td><td>{h(pair.second)}</td><td class="num">{pair.n}</td>'
            f'<td class="num">{_number(pair.observed, "-")}</td><td class="num kappa">{_number(pair.kappa)}</td>'
            f"<td>{links or '-'}</td></tr>"
        )
    body = (
        "<h1>Agreement between reviewers</h1>"
        '<table class="plain"><thead><tr><th>reviewer</th><th>accepted</th><th>rejected</th></tr></thead>'
        f"<tbody>{reviewer_rows or '<tr><td colspan=3>no verdict yet</td></tr>'}</tbody></table>"
        '<h2>Pairs</h2><table class="plain" id="agreement"><thead><tr><th>reviewer</th><th>reviewer</th>'
        "<th>tasks both judged</th><th>observed agreement</th><th>Cohen's kappa</th><th>disagreements</th></tr></thead>"
        f"<tbody>{''.join(pair_rows) or '<tr><td colspan=6>fewer than two reviewers</td></tr>'}</tbody></table>"
        '<p class="hint">Kappa is (p<sub>o</sub> − p<sub>e</sub>) / (1 − p<sub>e</sub>) over the tasks both '
        "reviewers judged; undefined when both gave one and the same verdict to every such task.</p>"
    )
    return page("agreement", body, token=token, reviewer=reviewer)


def export_page(summary: Mapping[str, Any], *, token: str, reviewer: str | None, files: Sequence[str]) -> str:
    """What an export would hold now (docs/review.md §7), with links to download each file."""
    links = "".join(f'<li><a href="/export/{h(name)}" download>{h(name)}</a></li>' for name in files)
    left = "".join(f"<li>{h(item['session'])}: {h(item['why'])}</li>" for item in summary.get("left_out", [])[:200])
    body = (
        "<h1>Export</h1>"
        f'<p id="export-summary">{summary["exported"]} of {summary["sessions"]} session(s) would be exported '
        f"(every task accepted by a reviewer and rejected by none, the session valid); "
        f"{summary['rejected']} with a rejected task, {summary['open']} with an open task, "
        f"{summary['invalid']} invalid; {summary['edited']} exported session(s) were edited.</p>"
        f'<ul class="files">{links}</ul>'
        '<p class="hint">The same files on disk: <code>wtb review DATASET --export OUT</code>.</p>'
        f"<h2>Left out</h2><ul>{left or '<li>nothing</li>'}</ul>"
    )
    return page("export", body, token=token, reviewer=reviewer)


__all__ = [
    "KEYS_QUEUE",
    "KEYS_SESSION",
    "agreement_page",
    "counts",
    "export_page",
    "h",
    "keys_help",
    "page",
    "priority",
    "queue_page",
    "session_page",
]
