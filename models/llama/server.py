"""The llama.cpp server behind ``gguf:`` and ``local``: one child process per model and options.

llama.cpp's own C++ server, from the prebuilt ``xllamacpp`` wheel (the ``local`` extra; nothing is
compiled), is started in a child process (:mod:`wildtoolbench.models.llama._child`) on a free loopback port,
once per process per (model, server options), and shared by every session and role. It is stopped
at interpreter exit (``atexit``) or by :func:`stop_all_servers`; a watchdog in the child also exits
when this process disappears (even after ``SIGKILL``).

Why a child process and not llama.cpp in-process: the graphs use one model path (langchain-openai
over HTTP) for local and remote models; a crash in the native library cannot take the run down;
and the server schedules its requests itself (``n_parallel`` slots, continuous batching).

Server options come from ``ModelSettings.extra`` keys :data:`SERVER_KEYS` or the environment:
``WTB_LOCAL_N_CTX`` (default 8192 tokens per slot), ``WTB_LOCAL_THREADS`` (default 2),
``WTB_LOCAL_SLOTS`` (slots, default :func:`default_slots`: one per generation role, at least one per
session of ``WTB_LOCAL_PARALLEL``), ``WTB_LOCAL_CACHE_RAM_MIB`` (RAM prompt cache, default
:data:`DEFAULT_CACHE_RAM_MIB`), ``WTB_LOCAL_CHAT_TEMPLATE`` (default: the GGUF's template),
``WTB_LOCAL_START_TIMEOUT`` seconds (default 180), ``WTB_LOCAL_VERBOSE=1`` (server log with
timings in ``<cache>/logs``, then kept).
"""

from __future__ import annotations

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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from wildtoolbench.models.llama.bundled import (
    INSTALL_HINT,
    BundledModel,
    LocalModelUnavailable,
    cache_dir,
    open_bundled_model,
)
from wildtoolbench.models.llama.slots import SlotTable

DEFAULT_N_CTX = 8192
DEFAULT_THREADS = 2
#: Sessions a local server serves at once by default (``WTB_LOCAL_PARALLEL``; the run's default
#: ``--concurrency``): of 1 / 2 / 4 measured on 2 cores, 1 was as fast or faster (docs/guides/performance.md).
DEFAULT_PARALLEL = 1
#: Slots kept for the generation roles (user, planner, checker, tool, agent): each role's requests
#: go to a slot of their own (:mod:`wildtoolbench.models.llama.slots`), so its prompt prefix stays computed.
ROLE_SLOTS = 5
#: Size of llama.cpp's RAM cache of prompt states (MiB): a slot that switches to another
#: conversation saves its state there, and a later request with the same prefix loads it back.
DEFAULT_CACHE_RAM_MIB = 1024
DEFAULT_START_TIMEOUT = 180.0
#: ``ModelSettings.extra`` keys that configure the server (not passed to ``ChatOpenAI``).
SERVER_KEYS = ("n_ctx", "n_threads", "n_parallel", "cache_ram_mib", "chat_template")


class LocalServerError(RuntimeError):
    """The llama.cpp server did not start, died, or did not become healthy in time."""


_CHILD_SCRIPT = Path(__file__).with_name("_child.py")


@dataclass(frozen=True)
class ServerOptions:
    """Options of one llama.cpp server.

    Attributes:
        n_ctx: context window of each slot in tokens (the server holds ``n_ctx * n_parallel``).
        n_threads: CPU threads for generation and prompt processing.
        n_parallel: slots, i.e. requests computed at once (continuous batching); each keeps the
            KV cache of its last prompt, and a conversation's requests are pinned to one slot
            (:mod:`wildtoolbench.models.llama.slots`), so they only pay for their new tokens.
        cache_ram_mib: RAM cache of prompt states in MiB (0 = off).
        chat_template: llama.cpp chat template (a built-in name such as ``chatml``, or Jinja
            text); ``None`` (default) uses the template stored in the GGUF file (for the bundled
            Qwen2.5 model: its native tool format, whose text tool calls :class:`LocalChatOpenAI`
            lifts into tool calls).
        verbose: let the server log timings and cache hits (to its log file, then kept).
    """

    n_ctx: int = DEFAULT_N_CTX
    n_threads: int = DEFAULT_THREADS
    n_parallel: int = ROLE_SLOTS
    cache_ram_mib: int = DEFAULT_CACHE_RAM_MIB
    chat_template: str | None = None
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


def local_parallel() -> int:
    """Sessions a local server serves at once: ``WTB_LOCAL_PARALLEL``, else :data:`DEFAULT_PARALLEL`.

    Raises:
        ValueError: ``WTB_LOCAL_PARALLEL`` is not an integer, or is below 1.
    """
    sessions = _env_int("WTB_LOCAL_PARALLEL", DEFAULT_PARALLEL)
    if sessions < 1:
        raise ValueError(f"WTB_LOCAL_PARALLEL (sessions at once) must be at least 1, got {sessions}")
    return sessions


def default_slots() -> int:
    """Default slot count: ``WTB_LOCAL_SLOTS``, else ``max(ROLE_SLOTS, local_parallel())`` (a slot per
    generation role, and one per session in flight).

    Raises:
        ValueError: ``WTB_LOCAL_SLOTS`` or ``WTB_LOCAL_PARALLEL`` is not a valid count.
    """
    return _env_int("WTB_LOCAL_SLOTS", 0) or max(ROLE_SLOTS, local_parallel())


def server_options(extra: dict[str, Any] | None = None) -> ServerOptions:
    """Server options from ``extra`` (keys :data:`SERVER_KEYS`), else the environment, else defaults.

    Raises:
        ValueError: an environment variable that must be an integer is not, or ``n_parallel`` < 1.
    """
    extra = extra or {}
    options = ServerOptions(
        n_ctx=int(extra.get("n_ctx", _env_int("WTB_LOCAL_N_CTX", DEFAULT_N_CTX))),
        n_threads=int(extra.get("n_threads", _env_int("WTB_LOCAL_THREADS", DEFAULT_THREADS))),
        n_parallel=int(extra["n_parallel"]) if "n_parallel" in extra else default_slots(),
        cache_ram_mib=int(extra.get("cache_ram_mib", _env_int("WTB_LOCAL_CACHE_RAM_MIB", DEFAULT_CACHE_RAM_MIB))),
        chat_template=extra.get("chat_template", os.environ.get("WTB_LOCAL_CHAT_TEMPLATE") or None),
        verbose=_env_flag("WTB_LOCAL_VERBOSE", False),
    )
    if options.n_parallel < 1:
        raise ValueError(f"n_parallel (WTB_LOCAL_SLOTS) must be at least 1, got {options.n_parallel}")
    return options


def require_llama_server(hint: str = INSTALL_HINT) -> None:
    """Check that the prebuilt llama.cpp runtime (``xllamacpp``) is importable (without importing it).

    Raises:
        LocalModelUnavailable: naming the missing module, then ``hint`` (default: install the ``local`` extra).
    """
    if importlib.util.find_spec("xllamacpp") is None:
        raise LocalModelUnavailable(f"'xllamacpp' is not installed (llama.cpp's server); {hint}")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalServer:
    """A running llama.cpp server child process on ``127.0.0.1:<port>``.

    Attributes:
        model_path: the GGUF file the child loads (``/proc/self/fd/<n>`` for a model held in memory).
        model_name: the name the server answers to (the GGUF file's stem), shown in messages.
        options: the :class:`ServerOptions` it was started with.
        port: loopback TCP port.
        base_url: ``http://127.0.0.1:<port>/v1``.
        process: the ``subprocess.Popen`` handle.
        log_path: file receiving the server's stdout and stderr.
        startup_seconds: wall time from spawn to the first healthy answer.
        slots: the :class:`~wildtoolbench.models.llama.slots.SlotTable` pinning each conversation to a slot (at
            most one request per slot in flight; the others wait client-side).
        prompt_tokens: totals over the replies so far: ``requests``, ``cache_n`` (prompt tokens
            the server reused from a slot's cache), ``prompt_n`` (prompt tokens it evaluated).
    """

    def __init__(
        self,
        model_path: Path,
        options: ServerOptions,
        *,
        start_timeout: float,
        model_name: str | None = None,
        pass_fds: Sequence[int] = (),
    ) -> None:
        self.model_path = model_path
        self.model_name = model_name or model_path.stem
        self.options = options
        self._pass_fds = tuple(pass_fds)
        logs = cache_dir() / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        fd, log_name = tempfile.mkstemp(prefix="llama-server-", suffix=".log", dir=logs)
        os.close(fd)
        self.log_path = Path(log_name)
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.base_url = ""
        self.startup_seconds = 0.0
        self.slots = SlotTable(options.n_parallel)
        self.prompt_tokens = {"requests": 0, "cache_n": 0, "prompt_n": 0}
        self._count_lock = threading.Lock()
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
            "--alias",
            self.model_name,
            "--port",
            str(self.port),
            "--n_ctx",
            str(opts.n_ctx),
            "--n_threads",
            str(opts.n_threads),
            "--n_parallel",
            str(opts.n_parallel),
            "--cache_ram_mib",
            str(opts.cache_ram_mib),
            "--verbose",
            "1" if opts.verbose else "0",
        ]
        if opts.chat_template:
            args += ["--chat_template", opts.chat_template]
        return [sys.executable, str(_CHILD_SCRIPT), str(os.getpid()), *args]

    def _start(self, start_timeout: float) -> None:
        self.port = _free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        started = time.monotonic()
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                self._command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                close_fds=True,
                pass_fds=self._pass_fds,
            )
        deadline = started + start_timeout
        with httpx.Client(timeout=2.0, trust_env=False) as client:
            while True:
                code = self.process.poll()
                if code is not None:
                    raise LocalServerError(
                        f"llama.cpp server for {self.model_name} exited with code {code} while starting; "
                        f"log {self.log_path}:\n{self.log_tail()}"
                    )
                try:
                    if client.get(f"{self.base_url}/models").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise LocalServerError(
                        f"llama.cpp server for {self.model_name} not healthy after {start_timeout:.0f} s "
                        f"(set WTB_LOCAL_START_TIMEOUT to wait longer); log {self.log_path}:\n{self.log_tail()}"
                    )
                time.sleep(0.2)
        self.startup_seconds = time.monotonic() - started

    def count_prompt_tokens(self, cache_n: int, prompt_n: int) -> None:
        """Add one reply's prompt tokens (reused from the slot's cache, evaluated anew) to :attr:`prompt_tokens`."""
        with self._count_lock:
            self.prompt_tokens["requests"] += 1
            self.prompt_tokens["cache_n"] += cache_n
            self.prompt_tokens["prompt_n"] += prompt_n

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

    Reads ``/proc/<pid>/cmdline`` (Linux; elsewhere, or without permission, the list is empty) for
    the child script :mod:`wildtoolbench.models.llama._child`. Two servers on the same cores slow each other down
    far more than their share of the CPU suggests, so :func:`get_server` warns when it finds one
    that this process did not start.
    """
    ours = {pid for pid in exclude if pid is not None}
    found: list[int] = []
    root = Path(proc)
    marker = f"llama{os.sep}{_CHILD_SCRIPT.name}".encode()
    with contextlib.suppress(OSError):
        for entry in root.iterdir():
            if not entry.name.isdigit() or int(entry.name) in ours or int(entry.name) == os.getpid():
                continue
            with contextlib.suppress(OSError):
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                if any(arg.endswith(marker) for arg in argv[:3]):
                    found.append(int(entry.name))
    return sorted(found)


def get_server(model: str | os.PathLike[str] | BundledModel, options: ServerOptions | None = None) -> LocalServer:
    """Return the process-wide server for ``model`` with ``options``, starting it on first use.

    ``model`` is a GGUF file path, or a :class:`BundledModel` whose parts are joined and verified
    at each start (:func:`wildtoolbench.models.llama.bundled.open_bundled_model`). Thread-safe; a server that died
    is replaced by a new one. Start waits for health for at most ``WTB_LOCAL_START_TIMEOUT`` seconds
    (default 180).

    Raises:
        FileNotFoundError: ``model`` is a path that is not a file.
        LocalModelUnavailable: the runtime (``xllamacpp``) or a model part package is not installed.
        ModelAssemblyError: the bundled model's parts fail their size / checksum check.
        LocalServerError: the server exited or did not become healthy in time (with its log tail).
    """
    if isinstance(model, BundledModel):
        key = f"bundled:{model.filename}"
    else:
        path = Path(model).expanduser().resolve()
        if not path.is_file():
            raise FileNotFoundError(f"GGUF model file not found: {path}")
        key = str(path)
    require_llama_server()
    options = options or server_options()
    with _servers_lock:
        server = _servers.get((key, options))
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
        if isinstance(model, BundledModel):
            # The descriptor of a model held in memory is inherited by the child, which maps it;
            # this process closes its own copy once the server is up.
            with open_bundled_model(model) as opened:
                server = LocalServer(
                    opened.path,
                    options,
                    start_timeout=timeout,
                    model_name=Path(model.filename).stem,
                    pass_fds=opened.fds,
                )
        else:
            server = LocalServer(path, options, start_timeout=timeout)
        _servers[(key, options)] = server
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
