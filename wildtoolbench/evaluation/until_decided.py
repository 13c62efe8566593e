"""``wtb eval --until-decided``: trials added round by round until the comparison with a finished run is
decided or the budget is spent (docs/trials.md §7)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

import wildtoolbench.runner as runner
from wildtoolbench.evaluation.plan import EvalPlan
from wildtoolbench.evaluation.run import finish_run, run_sessions
from wildtoolbench.scoring.run import score_run

_err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def run_until_decided(plan: EvalPlan) -> dict[str, Any]:
    """``wtb eval --until-decided --baseline RUN_B --max-trials K``: add trials of this run's candidate, round
    by round, only for the sessions the stopping rule picks, until the comparison with the finished run RUN_B
    is decided or the budget is spent (``wildtoolbench.bench.sequential.sequential_decision``, docs/trials.md §7).

    Each round runs the session-trials the rule asked for (resumable like any run; the cache serves what was
    paid for), scores the run, and looks at the paired evidence. RUN_B is not run again (``rerun=("a",)``):
    a baseline with ``--trials`` of its own is compared far more sharply. At the end the run is scored and
    printed as any run, then the decision and the requests saved against ``K`` full trials, also written to
    ``OUT/until_decided.json``.

    Returns:
        The ``until_decided.json`` document: ``{"baseline", "max_trials", "decision", "estimate", "low",
        "high", "rounds": [...], "session_trials", "full_session_trials", "requests", "full_requests_estimate"}``.

    Raises:
        BadInput: RUN_B cannot be read (exit 1). BadConfiguration: RUN_B holds other sessions, another
            scoring mode or side (exit 2). InfrastructureErrors: a round left infrastructure errors (exit 3,
            after scoring). As :func:`run_sessions` otherwise.
    """
    from wildtoolbench.bench.sequential import CONTINUE, sequential_decision
    from wildtoolbench.common.exits import BadConfiguration, BadInput
    from wildtoolbench.common.files import write_json_atomic
    from wildtoolbench.common.run_folder import UNTIL_DECIDED_FILE
    from wildtoolbench.comparison.runs import RunFolderError, RunsNotComparable, check_comparable, read_run

    options, context = plan.options, plan.context
    scoring = context.strategy.name
    assert options.baseline is not None and options.max_trials is not None
    try:
        baseline = read_run(options.baseline, scoring)
    except RunFolderError as exc:
        raise BadInput(*exc.issues) from None
    ids = runner.session_ids(plan.sessions)
    missing = sorted(set(ids) ^ set(baseline.tasks))
    if missing:
        raise BadConfiguration(
            f"error: not comparable: the baseline {options.baseline} and this selection differ in {len(missing)} "
            f"session(s), first {missing[0]}; select the baseline's sessions (--ids / --limit)"
        )
    wanted = dict.fromkeys(ids, 1)
    rounds: list[dict[str, Any]] = []
    while True:
        summary = run_sessions(plan, wanted)
        if summary.infrastructure_errors:
            finish_run(plan, summary)  # scores what there is, lists the errors, exits 3
        score_run(
            plan.dataset, summary.result_path, plan.out, tasks=plan.tasks, scoring=scoring, language=context.language
        )
        try:
            mine = read_run(plan.out, scoring)
            check_comparable(mine, baseline)
        except RunFolderError as exc:
            raise BadInput(*exc.issues) from None
        except RunsNotComparable as exc:
            raise BadConfiguration(*(f"error: not comparable: {reason}" for reason in exc.reasons)) from None
        look = sequential_decision(mine.verdicts, baseline.verdicts, max_trials=options.max_trials, rerun=("a",))
        counts = {session_id: len(values) for (session_id, _), values in mine.verdicts.items()}
        rounds.append({"session_trials": sum(counts.values()), "requests": summary.requests, **_look(look)})
        _err.print(
            f"round {len(rounds)}: {sum(counts.values())} session-trials; task accuracy difference "
            f"{look.estimate * 100:+.2f} points, confidence sequence [{look.low * 100:+.2f}, {look.high * 100:+.2f}]: "
            f"{look.decision}"
            + (f", {len(look.rerun['a'])} sessions get another trial" if look.decision == CONTINUE else ""),
            markup=False,
        )
        if look.decision != CONTINUE:
            break
        for session_id in look.rerun["a"]:
            wanted[session_id] = counts[session_id] + 1
    if len(rounds) > 1:  # the run summary is the last round's; say so before the totals contradict it
        _err.print(
            f"round {len(rounds)} of {len(rounds)}: its run summary below counts this round's session-trials and "
            "requests; the totals of every round follow it",
            markup=False,
        )
    finish_run(plan, summary)
    paid = _paid_requests(plan.out)
    session_trials = sum(counts.values())
    per_trial = paid / session_trials if session_trials else 0.0
    full = len(ids) * options.max_trials
    document = {
        "baseline": str(options.baseline),
        "max_trials": options.max_trials,
        **_look(look),
        "rounds": rounds,
        "session_trials": session_trials,
        "full_session_trials": full,
        "requests": paid,
        "full_requests_estimate": round(per_trial * full),
    }
    write_json_atomic(plan.out / UNTIL_DECIDED_FILE, document)
    typer.echo(until_decided_text(document))
    return document


def _look(look: Any) -> dict[str, Any]:
    return {"decision": look.decision, "estimate": look.estimate, "low": look.low, "high": look.high}


def _paid_requests(out: Path) -> int:
    """Model requests the records of every trial in ``out`` paid for (their ``usage``)."""
    import json

    from wildtoolbench.common.run_folder import TRIALS_RESULT_FILE

    total = 0
    for name in (runner.RESULT_FILE, TRIALS_RESULT_FILE):
        path = out / name
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    usage = json.loads(line).get("usage") or {}
                    total += int(usage.get("requests", 0) or 0)
    return total


def until_decided_text(document: Mapping[str, Any]) -> str:
    """The lines ``wtb eval --until-decided`` ends with (docs/trials.md §7): the decision with its confidence
    sequence, then session-trials and model requests against ``--max-trials`` full trials."""
    saved_trials = document["full_session_trials"] - document["session_trials"]
    full = document["full_requests_estimate"]
    saved = full - document["requests"]
    share = f", {saved / full * 100:.1f}%" if full else ""
    return "\n".join(
        [
            f"until decided: {document['decision']} against {document['baseline']} after {len(document['rounds'])} "
            f"rounds (task accuracy {document['estimate'] * 100:+.2f} points, confidence sequence "
            f"[{document['low'] * 100:+.2f}, {document['high'] * 100:+.2f}]; docs/trials.md §7)",
            f"session-trials: {document['session_trials']} of {document['full_session_trials']} for "
            f"{document['max_trials']} full trials ({saved_trials} saved); model requests: {document['requests']}, "
            f"about {full} for {document['max_trials']} full trials (about {saved} saved{share})",
        ]
    )
