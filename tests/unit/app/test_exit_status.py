"""The one exit-status rule of every ``wtb`` sub-command (``wildtoolbench.common.exits``, docs/cli.md §2)."""

from __future__ import annotations

import os
import signal

import pytest
import typer
from typer.testing import CliRunner

from wildtoolbench.bench.generation import GenerationInputError
from wildtoolbench.bench.schema import DatasetError, DatasetIssue
from wildtoolbench.common.exits import (
    BAD_CONFIGURATION,
    BAD_INPUT,
    INFRASTRUCTURE_ERRORS,
    INTERRUPTED,
    BadInput,
    InfrastructureErrors,
    UsageError,
    exit_on_error,
    exit_status,
    resumable_run,
)
from wildtoolbench.data.names import NotPulledError
from wildtoolbench.data.official import DataError, VerificationError
from wildtoolbench.models import ConfigurationError
from wildtoolbench.reports.run_data import ReportError


def test_the_statuses_are_those_of_docs_cli():
    assert (BAD_INPUT, BAD_CONFIGURATION, INFRASTRUCTURE_ERRORS, INTERRUPTED) == (1, 2, 3, 130)


def test_a_bad_dataset_prints_every_issue_and_exits_1():
    issues = [
        DatasetIssue("d.jsonl", 2, "english_tasks", "Field required"),
        DatasetIssue("d.jsonl", 5, "(json)", "invalid JSON: Expecting value (column 1)"),
        DatasetIssue("d.jsonl", None, None, "file holds no sessions"),
    ]
    assert exit_status(DatasetError(issues)) == (
        1,
        [
            "d.jsonl:2: english_tasks: Field required",
            "d.jsonl:5: (json): invalid JSON: Expecting value (column 1)",
            "d.jsonl: file holds no sessions",
            "error: d.jsonl: 3 problem(s) found",
        ],
    )


@pytest.mark.parametrize(
    ("exc", "status"),
    [
        (ConfigurationError("unknown model provider 'nosuch'"), 2),  # a ValueError, yet the configuration
        (NotPulledError("wildtoolbench: not downloaded yet", name="wildtoolbench", command="wtb data pull"), 2),
        (DataError("wildtoolbench: download failed"), 1),
        (VerificationError("wildtoolbench: blob id differs"), 1),
        (ReportError("runs/x/metric.json: missing"), 1),
        (OSError("runs/x: Permission denied"), 1),
        (ValueError("runs/x/result.jsonl holds results of model a, not 'b'"), 1),
        (RuntimeError("--langsmith-dataset needs LANGSMITH_API_KEY"), 1),
        (GenerationInputError("tools.jsonl:2: not JSON"), 1),  # a ValueError like any other
    ],
)
def test_errors_with_a_message_print_error_colon_message(exc, status):
    assert exit_status(exc) == (status, [f"error: {exc}"])


def test_failures_of_the_application_layer_carry_their_lines():
    assert exit_status(BadInput("a.jsonl:1: x: bad", "a.jsonl: 1 problem(s) found")) == (
        1,
        ["a.jsonl:1: x: bad", "a.jsonl: 1 problem(s) found"],
    )
    assert exit_status(InfrastructureErrors()) == (3, [])


@pytest.mark.parametrize(
    "exc",
    [typer.Exit(code=0), typer.Exit(code=3), typer.Abort(), UsageError("names no session", "--ids"), KeyError("bug")],
)
def test_click_exceptions_and_bugs_are_left_alone(exc):
    assert exit_status(exc) is None


def test_exit_on_error_prints_the_lines_on_stderr_and_exits(capsys):
    with pytest.raises(typer.Exit) as raised, exit_on_error():
        raise ConfigurationError("--server and --langsmith-dataset cannot be combined")
    assert raised.value.exit_code == 2
    assert capsys.readouterr().err == "error: --server and --langsmith-dataset cannot be combined\n"

    with pytest.raises(typer.Exit) as raised, exit_on_error():
        raise InfrastructureErrors()
    assert raised.value.exit_code == 3 and capsys.readouterr().err == ""


def test_lines_are_printed_as_written_by_rich(capsys):
    """No markup and no emoji codes: brackets stay, and so does ``:smile:`` (a spec such as ``openai:x:``
    in a message was drawn as an emoji, issue 24 finding 6)."""
    with pytest.raises(typer.Exit), exit_on_error():
        raise BadInput("a [b] :smile: line openai:x: spec")
    assert capsys.readouterr().err == "a [b] :smile: line openai:x: spec\n"


def test_exit_on_error_lets_other_exceptions_through():
    with pytest.raises(KeyError), exit_on_error():
        raise KeyError("a bug shows its traceback")
    with pytest.raises(typer.Exit) as raised, exit_on_error():
        raise typer.Exit(code=0)
    assert raised.value.exit_code == 0


def test_a_usage_error_is_reported_by_click_naming_the_option():
    app = typer.Typer(rich_markup_mode=None)  # plain click help and errors, as `wtb` has

    @app.command()
    def run(ids: str = typer.Option("", "--ids")) -> None:
        with exit_on_error():
            raise UsageError("names no session", "--ids")

    result = CliRunner().invoke(app, ["--ids", ","])
    assert result.exit_code == 2
    assert "Error: Invalid value for '--ids': names no session" in result.output
    assert "Usage: " in result.output and "Traceback" not in result.output


def test_an_interrupted_run_prints_what_is_kept_and_exits_130(capsys):
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(typer.Exit) as raised, resumable_run(lambda: "3 of 6 sessions are in runs/x/result.jsonl"):
        raise KeyboardInterrupt
    assert raised.value.exit_code == 130
    assert capsys.readouterr().err == (
        "interrupted: 3 of 6 sessions are in runs/x/result.jsonl; run the same command again to resume "
        "(finished sessions are kept, the ones in flight are run again).\n"
    )
    assert signal.getsignal(signal.SIGTERM) is before


def test_sigterm_during_a_run_is_an_interruption(capsys):
    with pytest.raises(typer.Exit) as raised, resumable_run(lambda: "nothing"):
        os.kill(os.getpid(), signal.SIGTERM)  # the handler runs in this thread before the next line
        raise AssertionError("SIGTERM did not interrupt")
    assert raised.value.exit_code == 130
    assert capsys.readouterr().err.startswith("interrupted: nothing; run the same command again")


@pytest.mark.parametrize(
    ("succeeded", "failed", "infrastructure", "status"),
    [
        (1, 1, 0, 0),  # a session the models' output failed is a result, like an inference error of wtb eval
        (0, 2, 0, 1),  # nothing generated, and running again would fail the same way
        (1, 1, 1, 3),  # a model request failed for good: the same command generates it again
        (0, 2, 2, 3),
        (0, 2, 1, 3),
    ],
)
def test_wtb_generate_tells_infrastructure_failures_from_results(
    monkeypatch, capsys, succeeded, failed, infrastructure, status
):
    from types import SimpleNamespace

    from wildtoolbench.generation import command
    from wildtoolbench.runner.generation import GenerationSummary

    summary = GenerationSummary(
        "out", succeeded, failed, "s.jsonl", "f.jsonl", "r.jsonl", infrastructure_failures=infrastructure
    )
    monkeypatch.setattr(command, "prepare_generation", lambda options: SimpleNamespace(kept=lambda: "kept"))
    monkeypatch.setattr(command, "run_generation", lambda run: summary)
    import wildtoolbench.generation.audit as generation_audit

    audited = SimpleNamespace(kept=succeeded)
    monkeypatch.setattr(generation_audit, "audit_generation", lambda out, policy, reference: audited)
    monkeypatch.setattr(generation_audit, "closing_line", lambda result: "audit: skipped")
    options = SimpleNamespace(out="out", audit="drop", audit_reference=None)
    try:
        with exit_on_error():
            command.generate(options)
    except typer.Exit as exc:
        assert exc.exit_code == status
    else:
        assert status == 0
    err = capsys.readouterr().err
    assert (f"{infrastructure} session(s) failed on infrastructure" in err) is (status == 3)
