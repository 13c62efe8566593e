"""``ablate.html``: the Ablation view of one ``wtb ablate`` run (docs/variants.md §6.7): a forest plot of
the factor effects (with the paraphrase control's band when it was run), the transitions curve, and
every pair whose verdict changed with both trajectories side by side. Self-contained HTML (inline SVG)."""

from __future__ import annotations

import html
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

MAX_SHOWN_PAIRS = 300
"""Pairs whose trajectories are shown (the discordant ones first); the others are counted."""


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    pyplot.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "wtb-ablate", "font.size": 9})
    return pyplot


def _svg(figure: Any) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    _pyplot().close(figure)
    text = buffer.getvalue()
    return text[text.find("<svg") :].strip()


def forest_plot(effects: Sequence[Mapping[str, Any]]) -> str:
    """SVG: one row per factor and level, the difference (points) with its interval; a dashed line at 0
    and, when the control was run, its interval as a grey band."""
    pyplot = _pyplot()
    rows = [e for e in effects if e["factor"] != "paraphrase"]
    figure, axis = pyplot.subplots(figsize=(6.5, 0.45 * max(len(rows), 1) + 0.8))
    control = next((e["control"] for e in rows if e.get("control")), None)
    if control and control["ci_low"] is not None:
        axis.axvspan(control["ci_low"], control["ci_high"], color="0.85", label="paraphrase control")
    axis.axvline(0, color="0.4", linestyle="--", linewidth=0.8)
    for y, e in enumerate(reversed(rows)):
        if e["ci_low"] is not None:
            axis.plot([e["ci_low"], e["ci_high"]], [y, y], color="#1f5f8b", linewidth=2)
        axis.plot([e["difference"]], [y], "o", color="#1f5f8b")
    axis.set_yticks(range(len(rows)), [f"{e['factor']} {e['level'] or ''}".strip() for e in reversed(rows)])
    axis.set_xlim(-105, 105)
    axis.set_xlabel("target-task accuracy, variant - origin (points), 95% session-clustered interval")
    return _svg(figure)


def transitions_plot(curve: Sequence[Mapping[str, Any]]) -> str:
    """SVG: target-task accuracy against the change in transitions before the target, with intervals."""
    pyplot = _pyplot()
    figure, axis = pyplot.subplots(figsize=(5, 3))
    xs = [p["level"] for p in curve]
    ys = [p["accuracy"] for p in curve]
    low = [p["accuracy"] - p["ci_low"] if p["ci_low"] is not None else 0 for p in curve]
    high = [p["ci_high"] - p["accuracy"] if p["ci_high"] is not None else 0 for p in curve]
    axis.errorbar(xs, ys, yerr=[low, high], marker="o", capsize=3, color="#1f5f8b")
    axis.set_xticks(xs)
    axis.set_ylim(0, 105)
    axis.set_xlabel("transitions before the target, change from the origin")
    axis.set_ylabel("target-task accuracy (%)")
    return _svg(figure)


def _records(run: Path) -> dict[str, Mapping[str, Any]]:
    found: dict[str, Mapping[str, Any]] = {}
    path = run / "result.jsonl"
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                found.setdefault(record["id"], record)  # the first trial
    return found


def _trajectory(record: Mapping[str, Any] | None, task: int) -> str:
    if record is None or not isinstance(record.get("result"), list) or task >= len(record["result"]):
        return "<p>(no record)</p>"
    result = record["result"][task]
    log = result.get("inference_log") or {}
    lines = [f"user: {(log.get('begin_of_current_task') or {}).get('content', '')}"]
    for key in sorted((k for k in log if k.startswith("step_")), key=lambda k: int(k.split("_")[1])):
        output = (log[key] or {}).get("inference_output") or {}
        calls = [f"{c['function']['name']}({c['function']['arguments']})" for c in output.get("tool_calls") or []]
        said = "; ".join(calls) if calls else (output.get("content") or "")
        lines.append(f"{key}: {said}  [{output.get('current_action_name_label', '?')}]")
    lines.append(f"label: {result.get('action_name_label')}")
    return "<pre>" + html.escape("\n".join(lines)) + "</pre>"


def _pairs_section(document: Mapping[str, Any], pairs: Sequence[Mapping[str, Any]], run: Path) -> str:
    records = _records(run)
    verdict = {}
    for record_id, record in records.items():
        for index, task in enumerate(record.get("result") or [] if isinstance(record.get("result"), list) else []):
            verdict[(record_id, index)] = task.get("action_name_label") == "correct"
    changed = [
        p
        for p in pairs
        if verdict.get((p["origin"], p["origin_task"])) != verdict.get((p["variant"], p["target_task"]))
    ]
    shown = changed[:MAX_SHOWN_PAIRS]
    parts = [f"<h2>Pairs whose verdict changed ({len(changed)} of {len(pairs)}, first trial)</h2>"]
    if len(changed) > len(shown):
        parts.append(f"<p>{len(changed) - len(shown)} more not shown.</p>")
    for p in shown:
        anchor = html.escape(p["pair"])
        parts.append(
            f'<details id="{anchor}"><summary>{html.escape(p["factor"])} {html.escape(p["level"] or "")}: '
            f"{html.escape(p['origin'])} task {p['origin_task']} -> {anchor} task {p['target_task']}</summary>"
            f'<div class="pair"><div><h3>origin</h3>{_trajectory(records.get(p["origin"]), p["origin_task"])}</div>'
            f"<div><h3>variant</h3>{_trajectory(records.get(p['variant']), p['target_task'])}</div></div></details>"
        )
    return "\n".join(parts)


def _interval(effect: Mapping[str, Any]) -> str:
    if effect["ci_low"] is None:
        return "-"
    return f"[{effect['ci_low']:+.1f}, {effect['ci_high']:+.1f}]"


def ablation_page(document: Mapping[str, Any], pairs: Sequence[Mapping[str, Any]], run: Path) -> str:
    """The HTML of ``ablate.html`` (docs/variants.md §6.7) for an ``ablate.json`` document, its pairs and
    its run folder (the trajectories come from the run's ``result.jsonl``)."""
    rows = "".join(
        f"<tr><td>{html.escape(e['factor'])}</td><td>{html.escape(e['level'] or '-')}</td><td>{e['pairs']}</td>"
        f"<td>{e['origin_accuracy']:.1f}</td><td>{e['variant_accuracy']:.1f}</td><td>{e['difference']:+.1f}</td>"
        f"<td>{_interval(e)}</td><td>{e['p_value']:.3g}</td></tr>"
        for e in document["effects"]
    )
    curve = transitions_plot(document["transitions_curve"]) if document.get("transitions_curve") else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Ablation: {html.escape(str(document.get("model")))}</title>
<style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}}.pair{{display:grid;grid-template-columns:1fr 1fr;gap:1em}}
pre{{white-space:pre-wrap;font-size:12px;background:#f6f6f6;padding:6px}}</style></head><body>
<h1>Ablation of {html.escape(str(document.get("model")))}</h1>
<p>Difference = variant - origin, target-task accuracy in points; {html.escape(document["interval"])};
p: {html.escape(document["test"])}. Control (paraphrase): {"run" if any(e.get("control") for e in document["effects"]) else "not run"}.</p>
<h2>Effects</h2>{forest_plot(document["effects"])}
<table><tr><th>factor</th><th>level</th><th>pairs</th><th>origin</th><th>variant</th><th>difference</th><th>95% CI</th><th>p</th></tr>{rows}</table>
{"<h2>Transitions</h2>" + curve if curve else ""}
{_pairs_section(document, pairs, run)}
</body></html>
"""
