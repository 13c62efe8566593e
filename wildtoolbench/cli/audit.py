"""``wtb audit``: find the defects in a dataset that a model's failure cannot be told from (docs/audit.md).

Prints the findings as a table and a count per kind; ``--json`` writes them as JSON Lines,
``--write-errata`` drafts an errata file from them, ``--verified`` writes the verified split. Exit
status 0 whenever the audit ran, findings or not; 1 for a file that cannot be read at all; 2 for a
bad command line (docs/cli.md §2). The options only: :mod:`wildtoolbench.audit.command` does the work (docs/cli.md §1, §6).
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from wildtoolbench.cli import Lang, app, lang_option, tasks_option
from wildtoolbench.cli.data import pull_option
from wildtoolbench.common.exits import exit_on_error


class AuditRules(str, Enum):
    """``wtb audit --rules`` values (docs/audit.md §12)."""

    small = "small"
    standard = "standard"


@app.command("audit")
def audit_command(
    dataset: Path = typer.Argument(..., help="Dataset file (JSON Lines, one session per line), or wildtoolbench."),
    runs: list[Path] = typer.Option(
        [],
        "--runs",
        help="A run folder (wtb eval --out, its result.jsonl) or a result file; repeat for several runs. "
        "Tasks every run failed are reported as failed_by_all, with each run's first failing step.",
    ),
    json_out: Path | None = typer.Option(
        None,
        "--json",
        help='Write the findings to this file, JSON Lines {"id", "task", "kind", "severity", "message"}.',
    ),
    lang: Lang | None = lang_option(
        "Side of the dataset to audit (en: english_* fields, default; zh: the Chinese ones)."
    ),
    write_errata: Path | None = typer.Option(
        None,
        "--write-errata",
        help="Draft an errata file from the findings, for review (docs/audit.md §9.4): errors get a correction "
        "(exclude the task, or delete an unknown key), warnings a null one to decide.",
    ),
    errata: Path | None = typer.Option(
        None, "--errata", help="An errata file to check against the dataset and apply for --verified."
    ),
    verified: Path | None = typer.Option(
        None,
        "--verified",
        help="Write the verified split: the valid sessions, errata applied, without those that have an excluded "
        "task or an error finding (docs/audit.md §10).",
    ),
    stats: bool = typer.Option(
        False,
        "--stats",
        help="Print the dataset's coverage and diversity instead of the findings table (docs/coverage.md): task "
        "types, turn subtypes, DAG topologies, tools and tool categories, transitions, distinct-n and "
        "self-similarity of the user messages, argument values, beside the official set's figures.",
    ),
    stats_json: Path | None = typer.Option(
        None, "--stats-json", help="Write the coverage and diversity figures to this JSON file (implies --stats)."
    ),
    reference: Path | None = typer.Option(
        None,
        "--reference",
        help="The official dataset (a file, or wildtoolbench) to compare --stats with and to check for "
        "contamination (sessions repeating one of its sessions). Default: the official dataset when pulled, "
        "else the figures published on the project page.",
    ),
    rules: AuditRules | None = typer.Option(
        None,
        "--rules",
        case_sensitive=False,
        help="Apply the generation rule catalog instead (docs/audit.md §12): small (every rule, tuned for the bundled "
        "small model) or standard (the rules that catch defects of any model); lists each finding's rule id, "
        "session, task, step and value; --json writes them.",
    ),
    tasks: int | None = tasks_option(),
    pull: bool = pull_option(),
) -> None:
    """Audit a dataset (docs/audit.md): every check that tells a defect in the data from a model's failure,
    reported per session and task with a kind, a severity and a message. Validation problems are findings
    too: a file is audited as long as one of its lines is a JSON object.
    """
    from wildtoolbench.audit.command import audit as run_audit

    with exit_on_error():
        run_audit(
            dataset,
            runs,
            json_out=json_out,
            language=lang.value if lang else "en",
            write_errata=write_errata,
            errata=errata,
            verified=verified,
            tasks=tasks,
            pull=pull,
            stats=stats or stats_json is not None,
            stats_json=stats_json,
            reference=reference,
            rules=rules.value if rules is not None else None,
        )
