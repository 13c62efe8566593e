"""``wtb eval --cache DIR [--cache-trust]``: the request cache opened for a run (docs/trials.md §8)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any


def open_request_cache(folder: Path, *, trust: bool = False, candidate: Any = None) -> Any:
    """The :class:`wildtoolbench.models.cache.RequestCache` of ``folder``, checked (docs/trials.md §8); a
    folder reached through a symbolic link is reported on stderr with the folder it resolves to.

    Args:
        folder: ``--cache DIR``.
        trust: ``--cache-trust``: accept another user's folder or one every user can write.
        candidate: the run's candidate: the cache is then a
            :class:`wildtoolbench.runner.shared_cache.IndexedCache` that also indexes its entries by session-trial
            (worker processes and server runs use it, docs/trials.md §8.1).

    Raises:
        wildtoolbench.models.cache_entries.CacheFolderError: (a ``models.ConfigurationError``, exit 2) not a
            folder (a file, ``/dev/null``), cannot be made, not trusted, or its secret cannot be used.
    """
    from wildtoolbench.models.cache import RequestCache

    if candidate is not None:
        from wildtoolbench.runner.shared_cache import IndexedCache

        cache = IndexedCache(folder, candidate, trust=trust)
    else:
        cache = RequestCache(folder, trust=trust)
    if cache.link:
        print(f"wtb: warning: --cache {folder} is a symbolic link: the cache is {cache.root}", file=sys.stderr)
    return cache


__all__ = ["open_request_cache"]
