"""The llama.cpp server behind ``gguf:`` and ``local``: one child process per model file and options.

llama-cpp-python's OpenAI-compatible server is started on a free loopback port, once per process
per (model file, server options), and shared by every session and role. It is stopped at
interpreter exit (``atexit``) or by :func:`stop_all_servers`; a watchdog in the child
(:mod:`models._llama_child`) also exits when this process disappears (even after ``SIGKILL``).

Why a child process and not llama.cpp in-process: the graphs use one model path (langchain-openai
over HTTP) for local and remote models; a crash in the native library cannot take the run down;
its CPU work runs outside this process's GIL; and the server serialises requests itself.

Server options come from ``ModelSettings.extra`` keys :data:`SERVER_KEYS` or the environment:
``WTB_LOCAL_N_CTX`` (default 8192), ``WTB_LOCAL_THREADS`` (default 2), ``WTB_LOCAL_CHAT_FORMAT``
(default: the GGUF's template), ``WTB_LOCAL_PROMPT_CACHE`` (default off, see :class:`ServerOptions`),
``WTB_LOCAL_START_TIMEOUT`` seconds (default 180), ``WTB_LOCAL_VERBOSE=1`` (server log in ``<cache>/logs``).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from models.bundled import INSTALL_HINT, LocalModelUnavailable, cache_dir

DEFAULT_N_CTX = 8192
DEFAULT_THREADS = 2
DEFAULT_START_TIMEOUT = 180.0
#: Size limit of llama-cpp-python's RAM prompt-state cache when enabled (counts KV state only).
PROMPT_CACHE_BYTES = 256 << 20
#: ``ModelSettings.extra`` keys that configure the server (not passed to ``ChatOpenAI``).
SERVER_KEYS = ("n_ctx", "n_threads", "chat_format", "prompt_cache")


class LocalServerError(RuntimeError):
    """The llama.cpp server did not start, died, or did not become healthy in time."""


_CHILD_SCRIPT = Path(__file__).with_name("_llama_child.py")


@dataclass(frozen=True)
class ServerOptions:
    """Options of one llama.cpp server.

    Attributes:
        n_ctx: context window in tokens.
        n_threads: CPU threads for generation (prompt processing uses all cores).
        chat_format: llama-cpp-python ``--chat_format``; ``None`` (default) uses the chat
            template stored in the GGUF file (for the bundled Qwen2.5 model: its native tool
            format, whose text tool calls :class:`LocalChatOpenAI` lifts into tool calls).
        prompt_cache: add llama-cpp-python's RAM cache of prompt states (``--cache``). Off by
            default: llama.cpp already reuses the longest common prefix with the previous request
            (enough for the consecutive steps of one conversation), and in 0.3.36 each cached
            state also copies a logits matrix (``n_tokens x vocabulary`` floats, about 180 MB at
            300 tokens) that the cache's size limit does not count, so memory grows by that much
            per request.
        verbose: let the server log timings and prefix-cache hits (to its log file, then kept).
    """

    n_ctx: int = DEFAULT_N_CTX
    n_threads: int = DEFAULT_THREADS
    chat_format: str | None = None
    prompt_cache: bool = False
    verbose: bool = False


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ValueError(f"environment variable {name} must be an integer, got {raw!r}") from exc


def _env_flag(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    return raw.strip().lower() not in ("0", "false", "no", "off")


def server_options(extra: dict[str, Any] | None = None) -> ServerOptions:
    """Server options from ``extra`` (keys :data:`SERVER_KEYS`), else the environment, else defaults."""
    extra = extra or {}
    return ServerOptions(
        n_ctx=int(extra.get("n_ctx", _env_int("WTB_LOCAL_N_CTX", DEFAULT_N_CTX))),
        n_threads=int(extra.get("n_threads", _env_int("WTB_LOCAL_THREADS", DEFAULT_THREADS))),
        chat_format=extra.get("chat_format", os.environ.get("WTB_LOCAL_CHAT_FORMAT") or None),
        prompt_cache=bool(extra.get("prompt_cache", _env_flag("WTB_LOCAL_PROMPT_CACHE", False))),
        verbose=_env_flag("WTB_LOCAL_VERBOSE", False),
    )


def require_llama_server() -> None:
    """Check that llama-cpp-python and its ``server`` extra are importable (without importing them).

    Raises:
        LocalModelUnavailable: naming the missing module and saying to install the ``local`` extra.
    """
    for module in ("llama_cpp", "fastapi", "pydantic_settings", "starlette_context", "uvicorn", "sse_starlette"):
        if importlib.util.find_spec(module) is None:
            raise LocalModelUnavailable(
                f"{module!r} is not installed (needed by llama-cpp-python's server); {INSTALL_HINT}"
            )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalServer:
    """A running ``llama_cpp.server`` child process on ``127.0.0.1:<port>``.

    Attributes:
        model_path: the GGUF file served.
        options: the :class:`ServerOptions` it was started with.
        port: loopback TCP port.
        base_url: ``http://127.0.0.1:<port>/v1``.
        process: the ``subprocess.Popen`` handle.
        log_path: file receiving the server's stdout and stderr.
        startup_seconds: wall time from spawn to the first healthy answer.
    """

    def __init__(self, model_path: Path, options: ServerOptions, *, start_timeout: float) -> None:
        self.model_path = model_path
        self.options = options
        logs = cache_dir() / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        fd, log_name = tempfile.mkstemp(prefix="llama-server-", suffix=".log", dir=logs)
        os.close(fd)
        self.log_path = Path(log_name)
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.base_url = ""
        self.startup_seconds = 0.0
        self.request_lock = threading.Lock()
        self._async_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )
        last_error: Exception | None = None
        for _attempt in range(2):  # a second try covers losing the free port to another process
            try:
                self._start(start_timeout)
                return
            except LocalServerError as exc:
                last_error = exc
                self.stop(remove_log=False)
        assert last_error is not None
        raise last_error

    def _command(self) -> list[str]:
        opts = self.options
        args = [
            "--model",
            str(self.model_path),
            "--model_alias",
            self.model_path.stem,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(opts.n_ctx),
            "--n_threads",
            str(opts.n_threads),
            # Logits for the last token only: no (n_ctx x vocab) score matrix, faster prompt eval.
            "--logits_all",
            "false",
            "--verbose",
            "true" if opts.verbose else "false",
        ]
        if opts.chat_format:
            args += ["--chat_format", opts.chat_format]
        if opts.prompt_cache:
            args += ["--cache", "true", "--cache_type", "ram", "--cache_size", str(PROMPT_CACHE_BYTES)]
        return [sys.executable, str(_CHILD_SCRIPT), str(os.getpid()), *args]

    def _start(self, start_timeout: float) -> None:
        self.port = _free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        started = time.monotonic()
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                self._command(), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, close_fds=True
            )
        deadline = started + start_timeout
        with httpx.Client(timeout=2.0, trust_env=False) as client:
            while True:
                code = self.process.poll()
                if code is not None:
                    raise LocalServerError(
                        f"llama.cpp server for {self.model_path} exited with code {code} while starting; "
                        f"log {self.log_path}:\n{self.log_tail()}"
                    )
                try:
                    if client.get(f"{self.base_url}/models").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise LocalServerError(
                        f"llama.cpp server for {self.model_path} not healthy after {start_timeout:.0f} s "
                        f"(set WTB_LOCAL_START_TIMEOUT to wait longer); log {self.log_path}:\n{self.log_tail()}"
                    )
                time.sleep(0.2)
        self.startup_seconds = time.monotonic() - started

    def async_request_lock(self) -> asyncio.Lock:
        """The lock that serialises this server's requests within the running event loop."""
        loop = asyncio.get_running_loop()
        with _servers_lock:
            lock = self._async_locks.get(loop)
            if lock is None:
                lock = self._async_locks[loop] = asyncio.Lock()
        return lock

    def log_tail(self, lines: int = 20) -> str:
        """Last ``lines`` lines of the server log ("" when unreadable)."""
        try:
            return "\n".join(self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    @property
    def pid(self) -> int | None:
        """Process id of the server child (``None`` before start)."""
        return self.process.pid if self.process else None

    def alive(self) -> bool:
        """True while the child process runs."""
        return self.process is not None and self.process.poll() is None

    def stop(self, *, timeout: float = 10.0, remove_log: bool = True) -> None:
        """Terminate the child (SIGTERM, then SIGKILL after ``timeout`` s) and wait for it; idempotent.

        The log file is removed after a clean stop unless ``remove_log`` is false or
        ``WTB_LOCAL_VERBOSE=1`` (then it is kept for reading the timings).
        """
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=timeout)
        if remove_log and not self.options.verbose:
            self.log_path.unlink(missing_ok=True)


_servers: dict[tuple[str, ServerOptions], LocalServer] = {}
_servers_lock = threading.Lock()


def other_local_servers(proc: str | os.PathLike[str] = "/proc", exclude: Sequence[int | None] = ()) -> list[int]:
    """Process ids of llama.cpp servers started by this project, other than those in ``exclude``.

    Reads ``/proc/<pid>/cmdline`` (Linux; elsewhere, or without permission, the list is empty).
    Two servers on the same cores slow each other down far more than their share of the CPU
    suggests, so :func:`get_server` warns when it finds one that this process did not start.
    """
    ours = {pid for pid in exclude if pid is not None}
    found: list[int] = []
    root = Path(proc)
    with contextlib.suppress(OSError):
        for entry in root.iterdir():
            if not entry.name.isdigit() or int(entry.name) in ours or int(entry.name) == os.getpid():
                continue
            with contextlib.suppress(OSError):
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                if any(arg.endswith(_CHILD_SCRIPT.name.encode()) for arg in argv[:3]):
                    found.append(int(entry.name))
    return sorted(found)


def get_server(model_path: str | os.PathLike[str], options: ServerOptions | None = None) -> LocalServer:
    """Return the process-wide server for ``model_path`` with ``options``, starting it on first use.

    Thread-safe; a server that died is replaced by a new one. Start waits for health for at most
    ``WTB_LOCAL_START_TIMEOUT`` seconds (default 180).

    Raises:
        FileNotFoundError: ``model_path`` is not a file.
        LocalModelUnavailable: llama-cpp-python (server extra) is not installed.
        LocalServerError: the server exited or did not become healthy in time (with its log tail).
    """
    path = Path(model_path).expanduser().resolve()
    if not path.is_file():
        raise FileNotFoundError(f"GGUF model file not found: {path}")
    require_llama_server()
    options = options or server_options()
    key = (str(path), options)
    with _servers_lock:
        server = _servers.get(key)
        if server is not None and server.alive():
            return server
        timeout = float(os.environ.get("WTB_LOCAL_START_TIMEOUT") or DEFAULT_START_TIMEOUT)
        others = other_local_servers(exclude=[s.pid for s in _servers.values()])  # _servers_lock is held
        if others:
            print(
                f"wtb: warning: {len(others)} other local model server(s) already running on this machine "
                f"(pid {', '.join(map(str, others))}); sharing the CPU makes every run several times slower",
                file=sys.stderr,
            )
        server = LocalServer(path, options, start_timeout=timeout)
        _servers[key] = server
        return server


def running_servers() -> list[LocalServer]:
    """The servers this process has started and not stopped."""
    with _servers_lock:
        return [s for s in _servers.values() if s.alive()]


def stop_all_servers() -> None:
    """Stop every server this process started (also registered with ``atexit``)."""
    with _servers_lock:
        servers = list(_servers.values())
        _servers.clear()
    for server in servers:
        server.stop()


atexit.register(stop_all_servers)
