"""``gguf:PATH`` and ``local``: a GGUF model served by llama.cpp, reached through langchain-openai.

``gguf:/path/to/model.gguf`` starts ``python -m llama_cpp.server`` (the ``local`` extra) for that
file on a free loopback port, once per process per model file and server options, and returns a
:class:`LocalChatOpenAI` pointed at it, so every session and role shares one server and talks the
same OpenAI chat-completions protocol as any remote endpoint. ``local`` (alias ``local:default``)
is the bundled Qwen2.5-Coder-0.5B-Instruct Q4_K_M file, assembled once into the cache
(:mod:`nodes.providers.bundled`).

Why a child process and not llama.cpp in-process: the graphs then use exactly one model path
(langchain-openai over HTTP) for local and remote models; the native library's crashes or aborts
cannot take the run down with it; its CPU work runs outside the Python process's GIL; and one
server is trivially shared by concurrent sessions (it serialises requests itself).

The server is stopped at interpreter exit (``atexit``) or by :func:`stop_all_servers`; a watchdog
in the child also exits when this process disappears (even after ``SIGKILL``), so no server
outlives its run.

Server options come from ``ModelSettings.extra`` keys ``n_ctx``, ``n_threads``, ``prompt_cache``
(those keys are not passed to ``ChatOpenAI``) or the environment: ``WTB_LOCAL_N_CTX`` (default
8192), ``WTB_LOCAL_THREADS`` (default 2), ``WTB_LOCAL_PROMPT_CACHE`` (``1``/``0``, default on),
``WTB_LOCAL_START_TIMEOUT`` seconds (default 180), ``WTB_LOCAL_VERBOSE=1`` (server timing log).
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import httpx
from langchain_openai import ChatOpenAI
from pydantic import PrivateAttr

from nodes.providers import ModelSettings
from nodes.providers.bundled import INSTALL_HINT, LocalModelUnavailable, bundled_model_path, cache_dir

CHAT_FORMAT = "chatml-function-calling"
DEFAULT_N_CTX = 8192
DEFAULT_THREADS = 2
DEFAULT_START_TIMEOUT = 180.0
#: Size of llama-cpp-python's RAM prompt-state cache (``--cache``); states are small (KV of used tokens).
PROMPT_CACHE_BYTES = 1 << 30
_SERVER_KEYS = ("n_ctx", "n_threads", "prompt_cache")


class LocalServerError(RuntimeError):
    """The llama.cpp server did not start, died, or did not become healthy in time."""


# --------------------------------------------------------------------------------------------
# The adapter: the compatibility fixes for llama-cpp-python's chatml-function-calling server.
# --------------------------------------------------------------------------------------------


def adapt_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """Rewrite an OpenAI chat-completions request body for llama-cpp-python's function-calling format.

    Fixes, each for a server behaviour seen with ``--chat_format chatml-function-calling``:

    1. ``tools`` without ``tool_choice``: the server ignores the tools; ``tool_choice="auto"`` is set.
    2. an assistant message whose ``content`` is ``None`` (a pure tool call): the server answers
       HTTP 500; ``""`` is sent instead.
    3. a ``tool`` message: the format's template renders only system/user/assistant turns, so an
       observation would be dropped and leave an unterminated turn; it is sent as a ``user`` turn
       ``"Result of functions.<name> (call <id>):\\n<content>"`` (name from the matching call).
    4. tools present but no system message: the template lists the tools only inside a system
       turn, so an empty system message is put first.
    5. ``response_format`` of type ``json_schema`` (not accepted by the server) becomes the
       server's own ``{"type": "json_object", "schema": ...}`` (grammar-constrained JSON).

    Args:
        payload: the dict built by ``ChatOpenAI._get_request_payload`` (``messages`` is a list of
            OpenAI message dicts). Not modified.

    Returns:
        A new payload dict with the fixes applied (other keys unchanged).
    """
    out = dict(payload)
    messages = [dict(m) for m in payload.get("messages", [])]
    call_names: dict[str, str] = {}
    fixed: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            if message.get("content") is None:
                message["content"] = ""
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                if call.get("id") and function.get("name"):
                    call_names[call["id"]] = function["name"]
        elif role == "tool":
            call_id = message.get("tool_call_id", "")
            name = call_names.get(call_id, "tool")
            content = message.get("content")
            if not isinstance(content, str):
                content = json.dumps(content, ensure_ascii=False)
            message = {"role": "user", "content": f"Result of functions.{name} (call {call_id}):\n{content}"}
        fixed.append(message)
    if payload.get("tools"):
        if not payload.get("tool_choice"):
            out["tool_choice"] = "auto"
        if not fixed or fixed[0].get("role") != "system":
            fixed.insert(0, {"role": "system", "content": ""})
    if "messages" in payload:
        out["messages"] = fixed
    response_format = payload.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
        out["response_format"] = {"type": "json_object", **({"schema": schema} if schema else {})}
    return out


class LocalChatOpenAI(ChatOpenAI):
    """``ChatOpenAI`` for a llama-cpp-python server (``chatml-function-calling`` format).

    Identical to ``ChatOpenAI`` except that request bodies pass through :func:`adapt_payload`,
    :meth:`bind_tools` asks for ``tool_choice="auto"`` unless the caller chose one, and
    :meth:`with_structured_output` uses ``function_calling`` (grammar-constrained arguments) when
    the caller asked for ``json_schema`` or left the method unset. Holds a reference to the
    server handle it talks to (``server``), which stays up for the whole process.
    """

    _server: "LocalServer | None" = PrivateAttr(default=None)

    @property
    def server(self) -> "LocalServer | None":
        """The :class:`LocalServer` this model talks to (``None`` when built directly)."""
        return self._server

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any):  # type: ignore[override]
        """``ChatOpenAI.bind_tools`` with ``tool_choice`` defaulting to ``"auto"`` when tools are given."""
        if tool_choice is None and tools:
            tool_choice = "auto"
        return super().bind_tools(tools, tool_choice=tool_choice, **kwargs)

    def with_structured_output(self, schema: Any = None, *, method: str | None = None, **kwargs: Any):  # type: ignore[override]
        """``ChatOpenAI.with_structured_output``; ``json_schema`` / unset method → ``function_calling``.

        ``json_mode`` is kept (the server supports ``{"type": "json_object"}``).
        """
        if method in (None, "json_schema"):
            method = "function_calling"
        kwargs.pop("strict", None)
        return super().with_structured_output(schema, method=method, **kwargs)

    def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any) -> dict:
        return adapt_payload(super()._get_request_payload(input_, stop=stop, **kwargs))


# --------------------------------------------------------------------------------------------
# The server: one llama_cpp.server child per (model file, options), shared by the whole process.
# --------------------------------------------------------------------------------------------

# Runs in the child: exit when the parent process goes away, then run llama_cpp.server's CLI.
_CHILD_BOOTSTRAP = """
import os, runpy, sys, threading, time
parent = int(sys.argv[1])
def _watch():
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)
threading.Thread(target=_watch, daemon=True).start()
sys.argv = ["llama_cpp.server"] + sys.argv[2:]
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""


@dataclass(frozen=True)
class ServerOptions:
    """Options of one llama.cpp server.

    Attributes:
        n_ctx: context window in tokens.
        n_threads: CPU threads for generation (prompt processing uses all cores).
        prompt_cache: keep llama-cpp-python's RAM cache of prompt states (``--cache``), which
            restores the longest cached prefix when requests of several conversations interleave;
            the single-conversation prefix reuse of llama.cpp works without it.
        verbose: let the server log timings (to its log file).
    """

    n_ctx: int = DEFAULT_N_CTX
    n_threads: int = DEFAULT_THREADS
    prompt_cache: bool = True
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
    """Server options from ``extra`` (keys ``n_ctx``, ``n_threads``, ``prompt_cache``), else env, else defaults."""
    extra = extra or {}
    return ServerOptions(
        n_ctx=int(extra.get("n_ctx", _env_int("WTB_LOCAL_N_CTX", DEFAULT_N_CTX))),
        n_threads=int(extra.get("n_threads", _env_int("WTB_LOCAL_THREADS", DEFAULT_THREADS))),
        prompt_cache=bool(extra.get("prompt_cache", _env_flag("WTB_LOCAL_PROMPT_CACHE", True))),
        verbose=_env_flag("WTB_LOCAL_VERBOSE", False),
    )


def require_llama_server() -> None:
    """Check that llama-cpp-python and its ``server`` extra are importable (without importing them).

    Raises:
        LocalModelUnavailable: naming the missing module and saying to install the ``local`` extra.
    """
    for module in ("llama_cpp", "fastapi", "pydantic_settings", "starlette_context", "uvicorn", "sse_starlette"):
        if importlib.util.find_spec(module) is None:
            raise LocalModelUnavailable(f"{module!r} is not installed (needed by llama-cpp-python's server); {INSTALL_HINT}")


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
            "--model", str(self.model_path),
            "--model_alias", self.model_path.stem,
            "--chat_format", CHAT_FORMAT,
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--n_ctx", str(opts.n_ctx),
            "--n_threads", str(opts.n_threads),
            # Logits for the last token only: no (n_ctx x vocab) score matrix, faster prompt eval.
            "--logits_all", "false",
            "--verbose", "true" if opts.verbose else "false",
        ]
        if opts.prompt_cache:
            args += ["--cache", "true", "--cache_type", "ram", "--cache_size", str(PROMPT_CACHE_BYTES)]
        return [sys.executable, "-c", _CHILD_BOOTSTRAP, str(os.getpid()), *args]

    def _start(self, start_timeout: float) -> None:
        self.port = _free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        started = time.monotonic()
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                self._command(), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, close_fds=True
            )
        deadline = started + start_timeout
        with httpx.Client(timeout=2.0) as client:
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


# --------------------------------------------------------------------------------------------
# Provider factories (see BUILTIN_PROVIDERS).
# --------------------------------------------------------------------------------------------


def chat_model_for_server(server: LocalServer, settings: ModelSettings) -> LocalChatOpenAI:
    """A :class:`LocalChatOpenAI` talking to ``server`` with ``settings`` (sampling, timeout, retries).

    ``settings.base_url`` and ``settings.api_key`` are ignored (the server is local and keyless);
    ``settings.extra`` minus the server keys goes to ``ChatOpenAI``.
    """
    kwargs: dict[str, Any] = dict(
        model=server.model_path.stem,
        base_url=server.base_url,
        api_key="local-no-key",
        temperature=settings.temperature,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
    )
    kwargs.update({k: v for k, v in settings.extra.items() if k not in _SERVER_KEYS})
    model = LocalChatOpenAI(**kwargs)
    model._server = server
    return model


def create(name: str, settings: ModelSettings) -> LocalChatOpenAI:
    """``gguf:PATH``: serve the GGUF file at ``PATH`` (``~`` expanded) and return a chat model for it.

    Raises:
        FileNotFoundError, LocalModelUnavailable, LocalServerError: see :func:`get_server`.
    """
    server = get_server(name, server_options(settings.extra))
    return chat_model_for_server(server, settings)


def create_local(name: str, settings: ModelSettings) -> LocalChatOpenAI:
    """``local:NAME`` (``local`` = ``local:default``): the bundled model, assembled on first use.

    Raises:
        ValueError: unknown bundled model name.
        LocalModelUnavailable: the ``local`` extra is not installed.
        ModelAssemblyError: the assembled file fails its size / checksum check.
        LocalServerError: see :func:`get_server`.
    """
    require_llama_server()
    return create(str(bundled_model_path(name)), settings)
