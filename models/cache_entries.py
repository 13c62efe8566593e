"""What the request cache trusts: its folder, its secret, and each entry it serves (docs/trials.md §8).

Three pieces, each a pure check that names what it refused:

- :func:`open_folder` resolves the cache folder (a symbolic link is followed and reported), creates it
  private (mode 0700) when it is missing, and refuses a folder owned by another user or writable by
  every user unless the caller trusts it (``wtb eval --cache-trust``).
- :func:`load_secret` reads, or creates once, the folder's secret: 32 random bytes in
  ``DIR/.wtb-cache-secret``, a regular file of the user with mode 0600 (created atomically, so two
  runs starting at once agree on one secret).
- :func:`seal` and :func:`unseal` write and read one entry: ``{"format", "key", "mac", "entry"}`` where
  ``mac`` is the HMAC-SHA256, under the secret, of the entry's key and of the compact JSON of ``entry``
  in its own key order. :func:`unseal` raises :class:`EntryRejected` (with a rule id of
  :data:`ENTRY_RULES`) for an entry that is not a regular file, too large, not JSON, of another format,
  stored under another key's name, whose MAC does not match, or whose fields are not those of a reply.

The reply is stored in its original key order (no ``sort_keys``), so a served reply is the reply the
first run recorded, byte for byte.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wildtoolbench.models.registry import ConfigurationError

ENTRY_FORMAT = 2
"""The layout of a sealed entry (1: the unauthenticated entries before issue 38, read as misses)."""

SECRET_NAME = ".wtb-cache-secret"
"""The file of the cache's secret, inside the cache folder."""

MAX_ENTRY_BYTES = 64 * 1024 * 1024
"""An entry file larger than this is rejected unread."""

MAX_TOKENS = 10**9
"""Largest token count an entry may carry for one request (a billion tokens: no model has such a context)."""

_KEY = re.compile(r"[0-9a-f]{64}")
_SECRET = re.compile(rb"[0-9a-f]{64}\n?")

ENTRY_RULES: dict[str, str] = {
    "cache.not-a-file": "the entry is a symbolic link, a folder, a device or a FIFO, not a regular file",
    "cache.too-large": f"the entry is larger than {MAX_ENTRY_BYTES} bytes",
    "cache.unreadable": "the entry is not complete UTF-8 JSON (truncated, torn, or not JSON)",
    "cache.format": f"the entry is not of format {ENTRY_FORMAT} (an older cache, or not an entry)",
    "cache.swapped": "the entry names another key than its file (copied or moved over another entry)",
    "cache.mac": "the entry's MAC does not match its content under this cache's secret (modified, or made elsewhere)",
    "cache.field": "a field of the entry is missing or not of its type and range (token counts 0..10**9)",
}
"""The reasons an entry is refused (a reported miss), by rule id (docs/trials.md §8)."""


class EntryRejected(Exception):
    """An entry that is not served: ``rule`` is an id of :data:`ENTRY_RULES`, ``detail`` says what was found."""

    def __init__(self, rule: str, detail: str = ""):
        super().__init__(f"{rule}: {ENTRY_RULES[rule]}" + (f" ({detail})" if detail else ""))
        self.rule = rule
        self.detail = detail


class CacheFolderError(ConfigurationError):
    """The cache folder or its secret cannot be used (``wtb eval`` exits 2 and names the path and the fix)."""


@dataclass(frozen=True)
class Folder:
    """A checked cache folder: ``path`` (resolved), ``given`` (as the user wrote it) and ``link`` (``True``
    when ``given`` went through a symbolic link)."""

    path: Path
    given: Path
    link: bool


def open_folder(root: str | os.PathLike[str], *, trust: bool = False) -> Folder:
    """Resolve, create when missing (mode 0700) and check the cache folder ``root`` (docs/trials.md §8).

    Args:
        root: the folder of ``--cache``.
        trust: ``--cache-trust``: use a folder of another user or one every user can write.

    Returns:
        The :class:`Folder` (its ``link`` is true when a symbolic link was followed: the caller reports it).

    Raises:
        CacheFolderError: ``root`` exists and is not a folder (a file, ``/dev/null``), cannot be made, or
            (without ``trust``) is owned by another user or writable by every user.
    """
    given = Path(root)
    path = given.resolve()
    link = path != given.absolute()
    if path.exists() and not path.is_dir():
        raise CacheFolderError(f"--cache {given}: exists and is not a folder")
    if not path.exists():
        try:
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise CacheFolderError(f"--cache {given}: cannot make the folder: {exc.strerror or exc}") from exc
    info = path.stat()
    if not trust:
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            raise CacheFolderError(
                f"--cache {given}: the folder {path} belongs to another user (uid {info.st_uid}): its entries could "
                "have been written by them; use a folder of your own, or add --cache-trust if you trust that user"
            )
        if info.st_mode & stat.S_IWOTH:
            raise CacheFolderError(
                f"--cache {given}: the folder {path} is writable by every user (mode {stat.S_IMODE(info.st_mode):o}): "
                "make it private (chmod o-w), or add --cache-trust"
            )
    return Folder(path, given, link)


def load_secret(folder: Path, *, trust: bool = False) -> bytes:
    """The cache's secret: read from ``folder/.wtb-cache-secret``, or made there (32 random bytes as hex,
    mode 0600, created atomically) when the file does not exist (docs/trials.md §8).

    Args:
        folder: the checked cache folder (:func:`open_folder`).
        trust: ``--cache-trust``: accept a secret file of another user or readable by others.

    Returns:
        The secret's bytes (the 64 hex digits).

    Raises:
        CacheFolderError: the secret cannot be made or read, is not a regular file (a symbolic link), is
            not 64 hex digits, or (without ``trust``) belongs to another user or can be read by others.
    """
    path = folder / SECRET_NAME
    if not os.path.lexists(path):
        _make_secret(path)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise CacheFolderError(
            f"--cache: cannot read the cache secret {path}: {exc.strerror or exc} (it must be a regular file "
            "you can read; delete it to start a new cache)"
        ) from exc
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise CacheFolderError(f"--cache: the cache secret {path} is not a regular file")
        if not trust and hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            raise CacheFolderError(
                f"--cache: the cache secret {path} belongs to another user (uid {info.st_uid}); add --cache-trust "
                "to use it"
            )
        if not trust and info.st_mode & 0o077:
            raise CacheFolderError(
                f"--cache: the cache secret {path} can be read or written by others (mode "
                f"{stat.S_IMODE(info.st_mode):o}): chmod 600 it, or add --cache-trust"
            )
        data = handle.read(200)
    if not _SECRET.fullmatch(data):
        raise CacheFolderError(
            f"--cache: the cache secret {path} is not 64 hex digits (delete it, and the entries, to start a new cache)"
        )
    return data.strip()


def _make_secret(path: Path) -> None:
    tmp = path.with_name(f"{SECRET_NAME}.{secrets.token_hex(8)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_hex(32).encode("ascii") + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileExistsError):  # another run made it first: both use that one
            os.link(tmp, path)
    except OSError as exc:
        raise CacheFolderError(f"--cache: cannot make the cache secret {path}: {exc.strerror or exc}") from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _compact(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("ascii")


def _mac(secret: bytes, key: str, entry: Mapping[str, Any]) -> str:
    message = b"wtb-cache/%d\n%s\n" % (ENTRY_FORMAT, key.encode("ascii")) + _compact(entry)
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def seal(secret: bytes, key: str, entry: Mapping[str, Any]) -> bytes:
    """The file content of ``entry`` stored under ``key``: JSON ``{"format", "key", "mac", "entry"}``.

    Raises:
        EntryRejected: ``entry`` is not a valid entry (:func:`check_entry`), so it is not stored.
    """
    check_entry(entry, key)
    sealed = {"format": ENTRY_FORMAT, "key": key, "mac": _mac(secret, key, entry), "entry": entry}
    return json.dumps(sealed, ensure_ascii=False, allow_nan=False).encode("utf-8", "surrogatepass") + b"\n"


def read_entry_file(path: Path) -> bytes | None:
    """The bytes of the entry file ``path``, or ``None`` when there is none (a plain miss).

    Raises:
        EntryRejected: the path is not a regular file (``cache.not-a-file``: a link, a FIFO, a device,
            a folder) or is larger than :data:`MAX_ENTRY_BYTES` (``cache.too-large``).
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:  # ELOOP: a symbolic link; EISDIR; EACCES
        raise EntryRejected("cache.not-a-file", exc.strerror or str(exc)) from exc
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise EntryRejected("cache.not-a-file", f"mode {info.st_mode:o}")
        if info.st_size > MAX_ENTRY_BYTES:
            raise EntryRejected("cache.too-large", f"{info.st_size} bytes")
        return handle.read(MAX_ENTRY_BYTES + 1)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, value in pairs:
        if name in found:
            raise ValueError(f"key {name!r} appears twice")
        found[name] = value
    return found


def unseal(secret: bytes, key: str, data: bytes) -> dict[str, Any]:
    """The entry stored in ``data`` (an entry file's bytes) under ``key``, verified (docs/trials.md §8).

    Returns:
        The entry (``{"trial", "spec", "session", "request_index", "reply"}``) in its stored key order.

    Raises:
        EntryRejected: ``cache.unreadable``, ``cache.format``, ``cache.swapped``, ``cache.mac`` or
            ``cache.field`` (checked in that order; the MAC before any field is trusted).
    """
    try:
        sealed = json.loads(data.decode("utf-8"), object_pairs_hook=_unique, parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise EntryRejected("cache.unreadable", str(exc)[:120]) from exc
    if (
        not isinstance(sealed, dict)
        or sealed.get("format") != ENTRY_FORMAT
        or set(sealed)
        != {
            "format",
            "key",
            "mac",
            "entry",
        }
    ):
        raise EntryRejected("cache.format")
    if sealed["key"] != key:
        raise EntryRejected("cache.swapped", f"it names {str(sealed['key'])[:70]!r}")
    entry, mac = sealed["entry"], sealed["mac"]
    if not isinstance(entry, dict) or not isinstance(mac, str):
        raise EntryRejected("cache.format")
    try:
        expected = _mac(secret, key, entry)
    except (ValueError, TypeError) as exc:
        raise EntryRejected("cache.field", str(exc)[:120]) from exc
    if not hmac.compare_digest(expected, mac):
        raise EntryRejected("cache.mac")
    check_entry(entry, key)
    return entry


def _whole(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def check_entry(entry: Mapping[str, Any], key: str) -> None:
    """Check every field of an entry (docs/trials.md §8): ``trial`` a whole number >= 1; ``spec``, ``session``
    text or null; ``request_index`` a whole number >= 0 or null; ``reply`` with ``response`` (``content``
    text, a list or null, ``tool_calls`` a list of objects or null, ``reasoning_content`` text or null, no
    other key), ``input_tokens`` / ``output_tokens`` whole numbers 0..:data:`MAX_TOKENS`, ``model`` text or
    null and ``models`` a list of text.

    Raises:
        EntryRejected: ``cache.field`` naming the first field that is wrong; ``cache.format`` for a
            ``key`` that is not 64 hex digits.
    """
    if not _KEY.fullmatch(key):
        raise EntryRejected("cache.format", "the key is not 64 hex digits")

    def wrong(field: str) -> EntryRejected:
        return EntryRejected("cache.field", field)

    if set(entry) != {"trial", "spec", "session", "request_index", "reply"}:
        raise wrong("entry keys " + ", ".join(sorted(map(str, entry))))
    if not _whole(entry["trial"], 1, 10**6):
        raise wrong("trial")
    for name in ("spec", "session"):
        if entry[name] is not None and not isinstance(entry[name], str):
            raise wrong(name)
    if entry["request_index"] is not None and not _whole(entry["request_index"], 0, 10**9):
        raise wrong("request_index")
    reply = entry["reply"]
    if not isinstance(reply, dict) or set(reply) != {"response", "input_tokens", "output_tokens", "model", "models"}:
        raise wrong("reply")
    for name in ("input_tokens", "output_tokens"):
        if not _whole(reply[name], 0, MAX_TOKENS):
            raise wrong(f"reply.{name} = {str(reply[name])[:40]}")
    if reply["model"] is not None and not isinstance(reply["model"], str):
        raise wrong("reply.model")
    if not isinstance(reply["models"], list) or not all(isinstance(m, str) for m in reply["models"]):
        raise wrong("reply.models")
    response = reply["response"]
    if not isinstance(response, dict) or set(response) != {"content", "tool_calls", "reasoning_content"}:
        raise wrong("reply.response")
    if response["content"] is not None and not isinstance(response["content"], (str, list)):
        raise wrong("reply.response.content")
    calls = response["tool_calls"]
    if calls is not None and not (isinstance(calls, list) and all(isinstance(c, dict) for c in calls)):
        raise wrong("reply.response.tool_calls")
    if response["reasoning_content"] is not None and not isinstance(response["reasoning_content"], str):
        raise wrong("reply.response.reasoning_content")


__all__ = [
    "ENTRY_FORMAT",
    "ENTRY_RULES",
    "MAX_ENTRY_BYTES",
    "MAX_TOKENS",
    "SECRET_NAME",
    "CacheFolderError",
    "EntryRejected",
    "Folder",
    "check_entry",
    "load_secret",
    "open_folder",
    "read_entry_file",
    "seal",
    "unseal",
]
