"""The exit status of every ``wtb`` sub-command, from the exception that ended it (docs/cli.md §2).

The rule is written once, here, and every command applies it by running its body inside
:func:`exit_on_error` (a context manager; ``wtb eval``, ``score``, ``validate``, ``report``,
``data pull``, and ``wtb generate`` by the same call)::

    with exit_on_error():
        evaluate(options)

==========================================  ======  ============================================
exception that ends the command             status  printed on stderr
==========================================  ======  ============================================
none                                        0       (the command's own output)
``BadInput`` (raised in ``wildtoolbench/commands``)   1       its lines as given
``BadConfiguration`` (``wildtoolbench/commands``)      2       its lines as given
``InfrastructureErrors`` (eval, generate)  3       its lines as given (none: the run listed them)
``wildtoolbench.bench.schema.DatasetError``               1       each issue, ``file:line: field: message``, then
                                                    ``error: <file>: N problem(s) found``
``models.ConfigurationError``,              2       ``error: <message>``
``wildtoolbench.data.names.NotPulledError``
``wildtoolbench.data.official.DataError``,        1       ``error: <message>``
``wildtoolbench.reports.run_data.ReportError``,
``OSError``, ``ValueError``,
``RuntimeError``
``UsageError`` (typer's ``BadParameter``)   2       click's usage error naming the option
Ctrl-C, SIGTERM in :func:`resumable_run`    130     ``interrupted: <what is kept>; run the same ...``
==========================================  ======  ============================================

The rows are tried top to bottom and the first that matches wins (so a ``ConfigurationError``,
a ``ValueError``, exits 2, and a ``NotPulledError``, a ``DataError``, exits 2). click's own
exceptions (``typer.Exit``, usage errors such as :class:`UsageError`, ``typer.Abort``) pass through
unchanged, and so does any exception outside the table (a bug: its traceback is shown). A Ctrl-C
outside :func:`resumable_run` is click's (``Aborted!``, exit status 1).

This module imports only the standard library and typer, so the CLI modules import it at
start-up (docs/cli.md §1); the exception classes of the table are looked up in ``sys.modules``
(an exception of a class can only exist once its module is imported) and rich is imported only
to print a failure.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import typer

DONE = 0
"""Exit status of a command that did its work."""
BAD_INPUT = 1
"""Exit status when an input file's content is bad, the output folder holds a different run, or
official data could not be downloaded or verified; nothing is written."""
BAD_CONFIGURATION = 2
"""Exit status when the command line or the run's configuration is wrong; nothing is written."""
INFRASTRUCTURE_ERRORS = 3
"""Exit status of ``wtb eval`` and ``wtb generate`` when some sessions hit infrastructure errors (the same command retries them)."""
INTERRUPTED = 130
"""Exit status after an interruption (128 + SIGINT, the shell convention); the same command resumes."""


class Failure(Exception):
    """A failure the application layer reports itself: ``status`` is the exit status, ``lines`` the
    lines printed on stderr (in order, as given; none at all is allowed)."""

    status = BAD_INPUT

    def __init__(self, *lines: str) -> None:
        super().__init__("\n".join(lines))
        self.lines = list(lines)


class BadInput(Failure):
    """Exit status 1 with these lines, e.g. ``BadInput("runs/x: cannot write results: ...")`` or the
    ``"data.jsonl: 3 problem(s) found"`` that closes the issues ``wtb validate`` printed."""

    status = BAD_INPUT


class BadConfiguration(Failure):
    """Exit status 2 with these lines: the command line names inputs that cannot be used together,
    e.g. two run folders of other sessions for ``wtb compare`` (each reason its own ``error: ...`` line)."""

    status = BAD_CONFIGURATION


class InfrastructureErrors(Failure):
    """Exit status 3: the run finished, but some sessions hit infrastructure errors (already listed)."""

    status = INFRASTRUCTURE_ERRORS


class UsageError(typer.BadParameter):
    """A command-line value that is wrong in a way only the parsed values show (``--ids`` naming no
    session, a ``--dataset`` name of the wrong kind): click reports it in its usage format, naming
    ``option``, with exit status 2, as it does its own checks (docs/cli.md §2).

    Args:
        message: e.g. ``"names no session"``.
        option: the option or argument as the user wrote it, e.g. ``"--ids"`` or ``"path"``.
    """

    def __init__(self, message: str, option: str) -> None:
        super().__init__(message, param_hint=f"'{option}'")


_CONFIGURATION = (
    ("wildtoolbench.models.registry", "ConfigurationError"),
    ("wildtoolbench.data.names", "NotPulledError"),
)
"""Classes whose exceptions are the run's configuration (exit status 2), as ``(module, class name)``."""
_BAD_INPUT = (("wildtoolbench.data.official", "DataError"), ("wildtoolbench.reports.runs", "ReportError"))
"""Classes whose exceptions are bad input (exit status 1) besides ``OSError``, ``ValueError`` and ``RuntimeError``."""


def _loaded(names: tuple[tuple[str, str], ...]) -> tuple[type, ...]:
    """The classes of ``names`` whose modules are imported (the others cannot have been raised)."""
    found = (getattr(sys.modules.get(module), name, None) for module, name in names)
    return tuple(cls for cls in found if isinstance(cls, type))


def exit_status(exc: BaseException) -> tuple[int, list[str]] | None:
    """The exit status and stderr lines for ``exc``, by the table of this module (docs/cli.md §2).

    Args:
        exc: the exception that ended a command.

    Returns:
        ``(status, lines)``, e.g. ``(2, ["error: unknown model provider 'x' ..."])``; ``None`` for an
        exception the rule leaves alone (click's own, ``KeyboardInterrupt``, a bug).
    """
    if isinstance(exc, (typer.Exit, typer.Abort, typer.TyperException)):
        return None
    if isinstance(exc, Failure):
        return exc.status, list(exc.lines)
    schema = sys.modules.get("wildtoolbench.bench.schema")
    if schema is not None and isinstance(exc, schema.DatasetError):
        files = list(dict.fromkeys(issue.file for issue in exc.issues))
        where = ", ".join(files) or "the dataset"
        closing = f"error: {where}: {len(exc.issues)} problem(s) found"
        return BAD_INPUT, [*(str(issue) for issue in exc.issues), closing]
    if isinstance(exc, _loaded(_CONFIGURATION)):
        return BAD_CONFIGURATION, [f"error: {exc}"]
    if isinstance(exc, (*_loaded(_BAD_INPUT), OSError, ValueError, RuntimeError)):
        return BAD_INPUT, [f"error: {exc}"]
    return None


def _exit(status: int, lines: list[str]) -> typer.Exit:
    """Print ``lines`` on stderr (rich, no markup: the text as written) and return the ``typer.Exit`` to raise."""
    if lines:
        from rich.console import Console

        console = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)  # "openai:x:" is no emoji code
        for line in lines:
            console.print(line, markup=False)
    return typer.Exit(code=status)


@contextmanager
def exit_on_error() -> Iterator[None]:
    """Run a command's body; an exception that ends it becomes its exit status (:func:`exit_status`).

    Everything the body and the failure lines print goes through the project's redaction
    (:func:`wildtoolbench.tracing.redaction.redacted_terminal`, docs/settings.md §8).

    Raises:
        typer.Exit: with the status of the table, after its lines are printed on stderr.
        Exception: click's own exceptions and any exception outside the table, unchanged.
    """
    from wildtoolbench.tracing.redaction import redacted_terminal

    with redacted_terminal():
        try:
            yield
        except Exception as exc:
            mapped = exit_status(exc)
            if mapped is None:
                raise
            raise _exit(*mapped) from None


def _sigterm_as_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@contextmanager
def resumable_run(kept: Callable[[], str]) -> Iterator[None]:
    """Run a long run's body with SIGTERM treated like Ctrl-C; on either, print a resume hint and exit 130.

    Results are written per session as they finish (``result.jsonl`` of ``wtb eval``,
    ``sessions/<key>/outcome.json`` of ``wtb generate``), so an interrupted run loses at most the
    sessions in flight; running the same command again picks up where it stopped.

    Args:
        kept: called after the interruption; returns a phrase saying what is on disk, e.g.
            ``"3 of 6 sessions are in runs/x/result.jsonl"``.

    Raises:
        typer.Exit: with code 130 after an interruption (the hint is printed on stderr first).
    """
    previous = signal.getsignal(signal.SIGTERM)
    try:
        signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
    except ValueError:  # not the main thread (e.g. called from a worker): leave SIGTERM alone
        previous = None
    try:
        yield
    except KeyboardInterrupt:
        hint = (
            f"interrupted: {kept()}; run the same command again to resume (finished sessions are kept, "
            "the ones in flight are run again)."
        )
        raise _exit(INTERRUPTED, [hint]) from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
