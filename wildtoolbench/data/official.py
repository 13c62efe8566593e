"""The official WildToolBench files, pinned to one commit of the public repository.

Each file is known by its path in the repository and its git blob id (the SHA-1 of
``b"blob <size>\\0" + content``, what ``git hash-object`` prints), so a download, a copy from a
local clone or a file put into the cache by hand is accepted only when its bytes are exactly the
pinned ones.

Cache layout: ``<cache>/data/<commit>/<repository path>``, where ``<cache>`` is ``$WTB_CACHE_DIR``
(else ``$XDG_CACHE_HOME/wtb``, else ``~/.cache/wtb``; the same root as the bundled model). A file
enters the cache atomically: it is written to a temporary file in the same folder, verified, then
renamed over the final name, so the cache never holds a partial or unverified file.

Environment:

- ``WTB_DATA_URL``: base URL under which the repository paths are fetched (default: the raw-file
  URL of the pinned commit on GitHub). For mirrors and tests.
- ``WTB_DATA_MAX_BYTES``: the most bytes one file may have (default :data:`DEFAULT_MAX_BYTES`); a
  download or copy that goes past it stops there (docs/cli.md §5).
- ``WTB_DATA_PINS``: a JSON file ``{"<name>": {"path": ..., "blob": ..., "kind": ...}}`` whose
  entries replace the built-in pins of the same name (``kind``, ``dataset`` or ``tools``, may be
  left out for a built-in name). A testing and mirroring aid: with it, files that are not the
  official ones are accepted under the official names.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO
from urllib.parse import quote

from wildtoolbench.models.llama.bundled import cache_dir

REPOSITORY = "yupeijei1997/WildToolBench"
"""The public repository (GitHub owner/name)."""
REPOSITORY_URL = f"https://github.com/{REPOSITORY}"
COMMIT = "80a5f427fb26c9a14eb419ccb565675671650065"
"""The pinned commit of :data:`REPOSITORY`."""
DEFAULT_BASE_URL = f"https://raw.githubusercontent.com/{REPOSITORY}/{COMMIT}"
URL_ENV = "WTB_DATA_URL"
PINS_ENV = "WTB_DATA_PINS"
FILE_KINDS = ("dataset", "tools")
OFFICIAL_DATASET = "wildtoolbench"
"""The pin name of the official dataset file."""
MAX_BYTES_ENV = "WTB_DATA_MAX_BYTES"
DEFAULT_MAX_BYTES = 256 << 20
"""Size limit of one pulled file (256 MiB; the official files are far smaller), docs/cli.md §5."""

_CHUNK = 1 << 20
_BLOB_ID = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class Pin:
    """One official file: its name (as ``--dataset`` / ``--tools`` accept it), kind (``dataset`` or
    ``tools``), path in the repository (POSIX, relative) and git blob id at :data:`COMMIT`."""

    name: str
    kind: str
    path: str
    blob: str


OFFICIAL_PINS: tuple[Pin, ...] = (
    Pin(
        "wildtoolbench",
        "dataset",
        "wild-tool-bench/data/Wild-Tool-Bench.jsonl",
        "e91dd1c50a2a9ee8661a8564e11cbd6cd61f795a",
    ),
    Pin(
        "wildtoolbench-en",
        "tools",
        "multi-agent-framework/tools/tools_en.jsonl",
        "53da9728ecbb947b2cbb3b14cebe40b1ac7ea9a4",
    ),
    Pin(
        "wildtoolbench-zh",
        "tools",
        "multi-agent-framework/tools/tools_zh.jsonl",
        "1871eab0bd51b7cd72e1ca0b9680adfcff6faa11",
    ),
)


class DataError(Exception):
    """An official file could not be put into (or found in) the cache; the message names the file."""


class PinsError(DataError):
    """The pin table given by ``$WTB_DATA_PINS`` is unreadable or malformed."""


class VerificationError(DataError):
    """A file's bytes do not match its pinned blob id (tampered, truncated or another commit)."""


class DownloadError(DataError):
    """The server answered with an error or the transfer broke off."""


class TooLargeError(DownloadError):
    """A file is larger than the size limit (:func:`max_bytes`); nothing was kept."""


def max_bytes() -> int:
    """The size limit of one pulled file: ``$WTB_DATA_MAX_BYTES`` when set, else :data:`DEFAULT_MAX_BYTES`
    (docs/cli.md §5).

    Raises:
        DataError: the variable is not a positive integer.
    """
    raw = os.environ.get(MAX_BYTES_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_BYTES
    if not raw.isdigit() or int(raw) < 1:
        raise DataError(f"{MAX_BYTES_ENV}={raw!r}: not a positive number of bytes")
    return int(raw)


def _too_large(pin: Pin, origin: str, limit: int, more: str = "") -> TooLargeError:
    return TooLargeError(
        f"{pin.path}: {origin} {more or 'sends more than'} {limit} bytes, the size limit ({MAX_BYTES_ENV}); "
        "nothing was written to the cache"
    )


class _Limited:
    """A binary file handle that refuses to take more than ``limit`` bytes in all."""

    def __init__(self, handle: IO[bytes], limit: int, error: Callable[[], Exception]) -> None:
        self._handle, self._left, self._error = handle, limit, error

    def write(self, data: bytes) -> int:
        if len(data) > self._left:
            raise self._error()
        self._left -= len(data)
        return self._handle.write(data)


class OfflineError(DataError):
    """The server could not be reached. ``url`` is what to download, ``target`` where to put it."""

    def __init__(self, message: str, *, url: str, target: Path) -> None:
        super().__init__(message)
        self.url = url
        self.target = target


@dataclass(frozen=True)
class PullResult:
    """Where a pinned file is now (``path``, in the cache) and how it got there: ``action`` is
    ``"cached"`` (already there and verified), ``"downloaded"`` or ``"copied"``; ``origin`` is the
    URL or local file it came from (empty for ``"cached"``)."""

    pin: Pin
    path: Path
    action: str
    origin: str = ""


ProgressCallback = Callable[[Pin, int, int | None], None]
"""Download progress callback: ``(pin, bytes received so far, total bytes or None when unknown)``."""


def git_blob_id(path: Path) -> str:
    """Git blob id of the file at ``path``: lowercase hex SHA-1 of ``b"blob <size>\\0" + content``.

    Raises ``OSError`` when the file cannot be read.
    """
    with open(path, "rb") as handle:
        digest = hashlib.sha1(b"blob %d\0" % os.fstat(handle.fileno()).st_size)
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def pin_table(pins_file: Path | None = None) -> dict[str, Pin]:
    """The pins by name: :data:`OFFICIAL_PINS`, with the entries of ``pins_file`` (default:
    ``$WTB_DATA_PINS`` when set) replacing or adding pins of the same name.

    Raises:
        PinsError: the file cannot be read, is not JSON of the documented shape, or a path is not a
            relative POSIX path inside the repository, a blob id is not 40 hex digits, or a kind
            is missing (new name) or not ``dataset`` / ``tools``.
    """
    table = {pin.name: pin for pin in OFFICIAL_PINS}
    if pins_file is None:
        env = os.environ.get(PINS_ENV)
        if not env:
            return table
        pins_file = Path(env)
    try:
        entries = json.loads(Path(pins_file).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PinsError(f"{pins_file}: cannot read the pin table: {exc}") from None
    if not isinstance(entries, dict):
        raise PinsError(f"{pins_file}: expected a JSON object {{name: {{path, blob, kind}}}}")
    for name, entry in entries.items():
        where = f"{pins_file}: {name}"
        if not isinstance(entry, dict):
            raise PinsError(f"{where}: expected an object with path and blob")
        known = table.get(name)
        kind = entry.get("kind", known.kind if known else None)
        path, blob = entry.get("path"), entry.get("blob")
        if kind not in FILE_KINDS:
            raise PinsError(f"{where}: kind must be one of {', '.join(FILE_KINDS)}, got {kind!r}")
        if not isinstance(path, str) or not _is_repository_path(path):
            raise PinsError(f"{where}: path must be a relative path inside the repository, got {path!r}")
        if not isinstance(blob, str) or not _BLOB_ID.fullmatch(blob):
            raise PinsError(f"{where}: blob must be a git blob id (40 lowercase hex digits), got {blob!r}")
        table[name] = Pin(name, kind, path, blob)
    return table


def _is_repository_path(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return (
        bool(parts) and not path.startswith("/") and "\\" not in path and all(p not in ("", ".", "..") for p in parts)
    )


def select_pins(only: str | None = None, table: Mapping[str, Pin] | None = None) -> list[Pin]:
    """The pins of one kind (``only``: ``"dataset"`` or ``"tools"``), or all of them (``None``), in
    table order; ``table`` defaults to :func:`pin_table`. Raises ``ValueError`` for another kind."""
    if only is not None and only not in FILE_KINDS:
        raise ValueError(f"unknown kind {only!r}: expected one of {', '.join(FILE_KINDS)}")
    pins = (table if table is not None else pin_table()).values()
    return [pin for pin in pins if only is None or pin.kind == only]


def base_url() -> str:
    """``$WTB_DATA_URL`` (without a trailing slash), else the raw-file URL of the pinned commit."""
    return (os.environ.get(URL_ENV) or DEFAULT_BASE_URL).rstrip("/")


def file_url(pin: Pin, base: str | None = None) -> str:
    """URL of ``pin``'s file: its repository path under ``base`` (default :func:`base_url`)."""
    return f"{(base or base_url()).rstrip('/')}/{quote(pin.path)}"


def data_dir() -> Path:
    """Cache folder of the pinned commit's files: ``<cache>/data/<commit>`` (not created here)."""
    return cache_dir() / "data" / COMMIT


def cache_path(pin: Pin) -> Path:
    """Where ``pin``'s file lives in the cache: ``<cache>/data/<commit>/<repository path>``."""
    return data_dir().joinpath(*PurePosixPath(pin.path).parts)


def cached_file(pin: Pin) -> Path | None:
    """``pin``'s cache path when the file is there and matches the pinned blob id, else ``None``.

    The file is hashed on every call (a few milliseconds per megabyte). Raises ``OSError`` only
    when an existing file cannot be read.
    """
    path = cache_path(pin)
    if not path.is_file():
        return None
    return path if git_blob_id(path) == pin.blob else None


def pull_file(
    pin: Pin, *, source: Path | None = None, progress: ProgressCallback | None = None, client: object = None
) -> PullResult:
    """Make sure ``pin``'s file is in the cache, verified; a verified cached file is left alone.

    Inputs: ``source``, a local folder laid out like the repository (a clone or checkout of
    :data:`REPOSITORY`; a file with the same base name directly in the folder is accepted too),
    to copy from instead of downloading; ``progress``, called as bytes arrive; ``client``, an
    ``httpx.Client`` to reuse (default: a new one for this file).

    Returns a :class:`PullResult` with the cache path.

    Raises:
        OfflineError: the server could not be reached (message: the URL and the cache path).
        DownloadError: an HTTP error status, or the transfer broke off or came short.
        TooLargeError: the file is larger than :func:`max_bytes` (announced or as it arrives).
        VerificationError: the bytes do not match the pinned blob id.
        DataError: ``source`` has no such file.
        OSError: the cache cannot be written.
    In every error case nothing is left in the cache for this file.
    """
    target = cache_path(pin)
    if cached_file(pin) is not None:
        return PullResult(pin, target, "cached")
    limit = max_bytes()
    if source is not None:
        origin = local_source(pin, source)

        def copy(handle: IO[bytes]) -> None:
            with open(origin, "rb") as src:
                limited = _Limited(handle, limit, lambda: _too_large(pin, str(origin), limit, "holds more than"))
                shutil.copyfileobj(src, limited, _CHUNK)  # type: ignore[misc]

        hint = f" (check out commit {COMMIT} in {source})"
        _install(pin, target, copy, str(origin), hint)
        return PullResult(pin, target, "copied", str(origin))
    url = file_url(pin)
    _install(pin, target, lambda handle: _download(pin, url, handle, progress, client, limit), url, "")
    return PullResult(pin, target, "downloaded", url)


def pull_files(
    pins: Sequence[Pin], *, source: Path | None = None, progress: ProgressCallback | None = None
) -> Iterator[tuple[Pin, PullResult | DataError | OSError]]:
    """:func:`pull_file` for each pin in turn, yielding ``(pin, result or error)`` as each ends.

    Errors are yielded, not raised, so one bad file does not hide the others. Once the server
    proved unreachable, the remaining files that are not cached get an :class:`OfflineError`
    without another connection attempt (each names its URL and cache path).
    """
    import httpx

    offline: OfflineError | None = None
    with httpx.Client(
        follow_redirects=True, timeout=httpx.Timeout(60.0, connect=15.0), headers={"User-Agent": "wtb-data-pull"}
    ) as client:
        for pin in pins:
            try:
                if offline is not None and source is None and cached_file(pin) is None:
                    raise offline_error(pin, str(offline.__cause__ or "not reachable"))
                yield pin, pull_file(pin, source=source, progress=progress, client=client)
            except OfflineError as exc:
                offline = offline or exc
                yield pin, exc
            except (DataError, OSError) as exc:
                yield pin, exc


def local_source(pin: Pin, folder: Path) -> Path:
    """The file for ``pin`` in a local ``folder``: ``folder/<repository path>``, else
    ``folder/<base name>``. Raises :class:`DataError` naming both places when neither exists."""
    nested = Path(folder).joinpath(*PurePosixPath(pin.path).parts)
    flat = Path(folder) / PurePosixPath(pin.path).name
    for candidate in (nested, flat):
        if candidate.is_file():
            return candidate
    raise DataError(f"{pin.path}: not found in {folder} (looked for {nested} and {flat})")


def offline_error(pin: Pin, reason: str) -> OfflineError:
    """The one-line offline instruction for ``pin``: what to download (URL) and where to put it."""
    url, target = file_url(pin), cache_path(pin)
    return OfflineError(
        f"{pin.path}: cannot reach the server ({reason}); download {url} and save it as {target}",
        url=url,
        target=target,
    )


def _download(
    pin: Pin,
    url: str,
    handle: IO[bytes],
    progress: ProgressCallback | None,
    client: object,
    limit: int = DEFAULT_MAX_BYTES,
) -> None:
    """Stream ``url`` into ``handle``, at most ``limit`` bytes; raise Offline/Download/TooLargeError
    (see :func:`pull_file`)."""
    import httpx

    own = client is None
    http = httpx.Client(follow_redirects=True, timeout=httpx.Timeout(60.0, connect=15.0)) if own else client
    received = 0
    response = None
    try:
        with http.stream("GET", url) as response:  # type: ignore[union-attr]
            if response.status_code != 200:
                raise DownloadError(f"{pin.path}: {url} answered HTTP {response.status_code} {response.reason_phrase}")
            declared = response.headers.get("Content-Length")
            expected = int(declared) if declared and declared.isdigit() else None
            if expected is not None and expected > limit:  # refused before a byte is written
                raise _too_large(pin, url, limit, f"announces {expected} bytes, more than")
            # With a content encoding the header counts encoded bytes: no total for the bar then.
            total = expected if not response.headers.get("Content-Encoding") else None
            if progress:
                progress(pin, 0, total)
            for chunk in response.iter_bytes(_CHUNK):
                if received + len(chunk) > limit:  # an endless or oversized answer stops at the limit
                    raise _too_large(pin, url, limit)
                handle.write(chunk)
                received += len(chunk)
                if progress:
                    progress(pin, received, total)
            if expected is not None and response.num_bytes_downloaded < expected:
                raise DownloadError(
                    f"{pin.path}: incomplete download from {url}: {response.num_bytes_downloaded} of {expected} bytes"
                )
    except (httpx.ConnectError, httpx.ConnectTimeout, httpx.ProxyError) as exc:
        raise offline_error(pin, f"{type(exc).__name__}: {exc}") from exc
    except httpx.HTTPError as exc:
        raw = response.num_bytes_downloaded if response is not None else 0
        raise DownloadError(
            f"{pin.path}: incomplete download from {url}, broke off after {raw} bytes: {type(exc).__name__}: {exc}"
        ) from exc
    finally:
        if own:
            http.close()  # type: ignore[union-attr]


def _install(pin: Pin, target: Path, write: Callable[[IO[bytes]], None], origin: str, hint: str) -> None:
    """Write a temporary file beside ``target`` with ``write``, verify it against ``pin``, rename it.

    The temporary file is created with mode 0666 minus the umask (like any new file). On any error
    it is removed, with the folders this call created, and the error propagates.
    """
    missing = [folder for folder in (target.parent, *target.parent.parents) if not folder.exists()]
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}.part")
    done = False
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        got = git_blob_id(temp)
        if got != pin.blob:
            size = temp.stat().st_size
            raise VerificationError(
                f"{pin.path}: the {size} bytes from {origin} have git blob id {got}, expected {pin.blob}{hint}; "
                "nothing was written to the cache"
            )
        os.replace(temp, target)
        done = True
    finally:
        if not done:
            try:
                temp.unlink()
            except FileNotFoundError:
                pass
            for folder in missing:  # deepest first; stop at the first one that is not empty
                try:
                    folder.rmdir()
                except OSError:
                    break
