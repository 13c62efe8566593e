"""How many sessions a batch run keeps in flight when ``--concurrency`` is not given (docs/settings.md §2.1)."""

from __future__ import annotations

from wildtoolbench.models import max_concurrency


def default_concurrency(*specs: str | None) -> int:
    """The lowest concurrency the providers of ``specs`` advertise (``models.max_concurrency``: for
    ``local`` and ``gguf:`` the llama.cpp server's slots, ``WTB_LOCAL_PARALLEL``, default 1), else 4.

    ``wtb eval`` passes its candidate's spec, ``wtb generate`` the spec of every role with a model;
    ``None`` and empty specs are skipped.

    Raises:
        models.ConfigurationError: a malformed spec or an unknown provider.
    """
    limits = [limit for spec in specs if spec and (limit := max_concurrency(spec))]
    return min(limits, default=4)
