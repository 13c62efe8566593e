"""``gguf:PATH`` and ``local``: a GGUF model served by llama.cpp, reached through langchain-openai.

``gguf:/path/to/model.gguf`` starts llama-cpp-python's OpenAI-compatible server (the ``local``
extra) for that file on a free loopback port, once per process per model file and server options,
and returns a :class:`LocalChatOpenAI` pointed at it: every session and role shares one server and
talks the same chat-completions protocol as any remote endpoint. ``local`` (alias
``local:default``) is the bundled Qwen2.5-Coder-0.5B-Instruct Q4_K_M file, assembled once into the
cache (:mod:`models.bundled`).

Chat format: the server renders prompts with the chat template stored in the GGUF file. For the
bundled model that is Qwen2.5's own tool format (tools listed in the system turn, calls written as
``{"name": ..., "arguments": {...}}`` JSON, observations as ``tool`` turns), which the model was
trained on; the adapter lifts those JSON calls into real tool calls. llama-cpp-python 0.3.36's
``chatml-function-calling`` format was tried first and rejected: with ``tool_choice="auto"`` its
plain-text branch is constrained by a grammar that only admits ``functions.<name>:`` or end of
turn, so every text reply came back as e.g. ``"functions.get_weather:"``, and its template drops
``tool`` messages. It stays selectable (``chat_format``), with the two request fixes applied.

Why a child process and not llama.cpp in-process: the graphs use exactly one model path
(langchain-openai over HTTP) for local and remote models; a crash or abort in the native library
cannot take the run down; its CPU work runs outside this process's GIL; and one server is shared
by concurrent sessions (it serialises requests itself).

The server is stopped at interpreter exit (``atexit``) or by :func:`stop_all_servers`; a watchdog
in the child (:mod:`models._llama_child`) also exits when this process disappears (even
after ``SIGKILL``), so no server outlives its run.

Server options come from ``ModelSettings.extra`` keys :data:`SERVER_KEYS` (not passed on to
``ChatOpenAI``) or the environment: ``WTB_LOCAL_N_CTX`` (default 8192), ``WTB_LOCAL_THREADS``
(default 2), ``WTB_LOCAL_CHAT_FORMAT`` (default: the GGUF's template), ``WTB_LOCAL_PROMPT_CACHE``
(default off, see :class:`ServerOptions`), ``WTB_LOCAL_START_TIMEOUT`` seconds (default 180),
``WTB_LOCAL_VERBOSE=1`` (server log with timings, kept in ``<cache>/logs``). Per request,
``WTB_LOCAL_MAX_TOKENS`` (default 1024) caps the generated tokens and the timeout is at least
``WTB_LOCAL_MIN_TIMEOUT`` (default 600 s); requests to one server are serialised client-side.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Sequence

import httpx
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import PrivateAttr

from models.messages import RAW_RESPONSE_KEY
from models import ModelSettings
from models.openai import RawChatOpenAI
from models.bundled import INSTALL_HINT, LocalModelUnavailable, bundled_model_path, cache_dir

DEFAULT_N_CTX = 8192
DEFAULT_THREADS = 2
DEFAULT_START_TIMEOUT = 180.0
#: Default cap on generated tokens per request (a small model can otherwise ramble to ``n_ctx``).
DEFAULT_MAX_TOKENS = 1024
#: Least per-request timeout for a local server in seconds: a slow CPU is not a dead endpoint.
DEFAULT_MIN_TIMEOUT = 600.0
#: Size limit of llama-cpp-python's RAM prompt-state cache when enabled (counts KV state only).
PROMPT_CACHE_BYTES = 256 << 20
#: ``ModelSettings.extra`` keys that configure the server (not passed to ``ChatOpenAI``).
SERVER_KEYS = ("n_ctx", "n_threads", "chat_format", "prompt_cache")


#: ``additional_kwargs`` key keeping the server's original text of a reply whose tool calls were lifted.
RAW_TEXT_KEY = "wtb_raw_text"
#: Sessions a local server usefully serves at once (see :func:`models.max_concurrency`):
#: it computes one request at a time, and interleaving conversations defeats its prompt-prefix reuse.
MAX_CONCURRENCY = 1


class LocalServerError(RuntimeError):
    """The llama.cpp server did not start, died, or did not become healthy in time."""


# --------------------------------------------------------------------------------------------
# The adapter: compatibility fixes between langchain-openai and llama-cpp-python's server.
# --------------------------------------------------------------------------------------------


def adapt_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """Rewrite an OpenAI chat-completions request body for llama-cpp-python's server.

    1. An assistant message whose ``content`` is ``None`` (a pure tool call) makes the server
       answer HTTP 500 (its request schema wants a string): ``""`` is sent instead.
    2. ``tools`` without ``tool_choice``: ``tool_choice="auto"`` is set explicitly (its
       ``chatml-function-calling`` format ignores tools otherwise; harmless for the others).
    3. ``response_format`` of type ``json_schema`` (rejected by the server) becomes the server's
       own ``{"type": "json_object", "schema": ...}`` (grammar-constrained JSON). Any
       ``response_format`` is sent in ``extra_body`` (the same JSON body on the wire): with a
       top-level ``response_format`` langchain-openai switches to the client's ``parse()``
       helper, which raises on a reply cut off at ``max_tokens`` instead of returning it, so a
       long-winded JSON answer would abort the run instead of being rejected and retried.
    4. ``max_completion_tokens`` (what ``ChatOpenAI`` sends) is unknown to the server and would
       be ignored: it is sent as ``max_tokens``.

    Args:
        payload: the dict built by ``ChatOpenAI._get_request_payload``. Not modified.

    Returns:
        A new payload dict with the fixes applied; other keys unchanged.
    """
    out = dict(payload)
    if "messages" in payload:
        out["messages"] = [
            {**m, "content": ""} if m.get("role") == "assistant" and m.get("content") is None else m
            for m in payload["messages"]
        ]
    if payload.get("tools") and not payload.get("tool_choice"):
        out["tool_choice"] = "auto"
    if "max_completion_tokens" in out:
        limit = out.pop("max_completion_tokens")
        out.setdefault("max_tokens", limit)
    response_format = out.pop("response_format", None)
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
        response_format = {"type": "json_object", **({"schema": schema} if schema else {})}
    if response_format is not None:
        out["extra_body"] = {**(out.get("extra_body") or {}), "response_format": response_format}
    return out


_TAG_RE = re.compile(r"</?tool_call>|```(?:json)?")
_WS_RE = re.compile(r"[ \t\n\r]*")


def _member_spans(text: str, start: int) -> dict[str, tuple[int, int]]:
    """``key -> (begin, end)`` of each top-level member value of the JSON object at ``text[start]``.

    ``text[start:]`` must begin with an object that ``json`` decodes (checked by the caller); a
    repeated key keeps its last value, as ``json.loads`` does.
    """
    decoder = json.JSONDecoder()
    spans: dict[str, tuple[int, int]] = {}
    index = _WS_RE.match(text, start + 1).end()
    if text[index] == "}":
        return spans
    while True:
        key, index = decoder.raw_decode(text, index)
        index = _WS_RE.match(text, index).end() + 1  # past ':'
        begin = _WS_RE.match(text, index).end()
        _value, end = decoder.raw_decode(text, begin)
        spans[key] = (begin, end)
        index = _WS_RE.match(text, end).end()
        if text[index] == "}":
            return spans
        index = _WS_RE.match(text, index + 1).end()  # past ','


def parse_text_tool_calls(text: str, tool_names: Sequence[str]) -> tuple[str, list[dict[str, Any]]]:
    """Extract tool calls that a model wrote as JSON text (Qwen / Hermes style) from ``text``.

    With the model's own chat template the server returns calls as text: each call is a JSON
    object ``{"name": <tool>, "arguments": {...}}``, optionally wrapped in ``<tool_call>`` tags or
    a Markdown code fence (the tags are often dropped as special tokens). An object counts as a
    call only when its ``name`` is one of ``tool_names`` and its arguments (``arguments`` or
    ``parameters``; an object, a JSON string of an object, or absent = ``{}``) form an object.

    This is the client-side counterpart of a server-side tool parser (vLLM's ``hermes`` parser
    does the same for Qwen models). Unlike vLLM, which re-serialises the arguments with
    ``json.dumps``, the raw ``arguments`` string kept here is exactly the text the model wrote for
    the arguments object (or, when the model wrote the arguments as a JSON string, that string's
    value; ``"{}"`` when it wrote none).

    Args:
        text: the assistant message content.
        tool_names: names of the tools offered in the request.

    Returns:
        ``(rest, calls)``: the text with the calls, tags and fences removed (stripped), and one
        ``{"name": str, "args": dict, "arguments": str}`` per call, in order (``arguments`` is the
        raw string described above; ``json.loads(arguments) == args``). ``(text, [])`` when none
        is found.
    """
    names = set(tool_names)
    decoder = json.JSONDecoder()
    calls: list[dict[str, Any]] = []
    spans: list[tuple[int, int]] = []
    index = text.find("{")
    while index != -1:
        try:
            value, end = decoder.raw_decode(text, index)
        except json.JSONDecodeError:
            index = text.find("{", index + 1)
            continue
        args: Any = None
        raw = "{}"
        if isinstance(value, dict) and value.get("name") in names:
            key = "arguments" if "arguments" in value else "parameters"
            args = value.get(key, {})
            if key in value:
                begin, stop = _member_spans(text, index)[key]
                raw = text[begin:stop]
            if isinstance(args, str):
                raw = args
                try:
                    args = json.loads(args) if args.strip() else {}
                except json.JSONDecodeError:
                    args = None
                if not args and isinstance(args, dict):
                    raw = "{}"
        if isinstance(args, dict):
            calls.append({"name": value["name"], "args": args, "arguments": raw})
            spans.append((index, end))
            index = text.find("{", end)
        else:
            index = text.find("{", index + 1)
    if not calls:
        return text, []
    pieces, last = [], 0
    for begin, end in spans:
        pieces.append(text[last:begin])
        last = end
    pieces.append(text[last:])
    return _TAG_RE.sub("", "".join(pieces)).strip(), calls


def _tool_names(kwargs: dict[str, Any]) -> list[str]:
    names = []
    for spec in kwargs.get("tools") or []:
        function = spec.get("function") if isinstance(spec, dict) else None
        if isinstance(function, dict) and function.get("name"):
            names.append(function["name"])
    return names


def lift_text_tool_calls(result: ChatResult, tool_names: Sequence[str]) -> ChatResult:
    """Turn tool calls written as text in ``result``'s messages into real ``AIMessage.tool_calls``.

    Messages that already carry tool calls, or when ``tool_names`` is empty, are left alone. A
    lifted call gets a fresh id ``call_<hex>``, is mirrored in ``additional_kwargs["tool_calls"]``
    in OpenAI form (``arguments`` the raw string of :func:`parse_text_tool_calls`), and the message
    content keeps only the remaining text. When the message carries the provider's raw message
    (``additional_kwargs[RAW_RESPONSE_KEY]``, kept by :class:`RawChatOpenAI`), that is rewritten to
    what a server-side tool parser would have returned: ``content`` the remaining text (``None``
    when empty), ``tool_calls`` the lifted calls with their raw ``arguments`` strings; the server's
    original text stays in ``additional_kwargs[RAW_TEXT_KEY]``. Returns ``result`` (modified in place).
    """
    if not tool_names:
        return result
    for generation in result.generations:
        message = generation.message
        if not isinstance(message, AIMessage) or message.tool_calls or not isinstance(message.content, str):
            continue
        rest, calls = parse_text_tool_calls(message.content, tool_names)
        if not calls:
            continue
        ids = [f"call_{uuid.uuid4().hex[:24]}" for _ in calls]
        tool_calls = [
            {"name": c["name"], "args": c["args"], "id": call_id, "type": "tool_call"} for c, call_id in zip(calls, ids)
        ]
        openai_calls = [
            {"id": call_id, "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c, call_id in zip(calls, ids)
        ]
        additional = dict(message.additional_kwargs)
        additional["tool_calls"] = openai_calls
        additional[RAW_TEXT_KEY] = message.content
        raw = additional.get(RAW_RESPONSE_KEY)
        if isinstance(raw, dict):
            additional[RAW_RESPONSE_KEY] = {
                **raw,
                "content": rest or None,
                "tool_calls": [{**c, "function": dict(c["function"])} for c in openai_calls],
            }
        metadata = {**message.response_metadata, "finish_reason": "tool_calls"}
        new_message = message.model_copy(
            update={"content": rest, "tool_calls": tool_calls, "additional_kwargs": additional, "response_metadata": metadata}
        )
        generation.message = new_message
        generation.text = rest
    return result


class LocalChatOpenAI(RawChatOpenAI):
    """``ChatOpenAI`` for a llama-cpp-python server; everything else is the stock langchain-openai path.

    It builds on :class:`~models.openai.RawChatOpenAI`, so requests carry the exact
    OpenAI dicts of the evaluation history and every reply keeps the provider's raw message for
    the result record (SPEC 3.4). Differences from ``RawChatOpenAI``:

    - request bodies pass through :func:`adapt_payload`;
    - :meth:`bind_tools` passes ``tool_choice="auto"`` unless the caller chose one;
    - tool calls the model wrote as JSON text are lifted into ``AIMessage.tool_calls``
      (:func:`lift_text_tool_calls`), so callers see OpenAI-style tool calls, and the kept raw
      message is rewritten as a server-side tool parser would return it (raw argument strings);
    - streaming is off (``disable_streaming=True``) so every call goes through that lifting;
    - ``supports_json_schema_grammar``: callers may bind a JSON schema as ``response_format``;
    - :meth:`with_structured_output` uses ``function_calling`` (the server constrains a named
      tool call's arguments with a grammar built from the schema) when the caller asked for
      ``json_schema`` or left the method unset.

    ``server`` is the :class:`LocalServer` it talks to; that server lives for the whole process.
    """

    disable_streaming: bool | str = True
    #: The server can constrain sampling to a JSON schema (``response_format={"type": "json_object",
    #: "schema": ...}``, a llama.cpp grammar); the generation roles use it (``nodes._roles.ask_model``).
    supports_json_schema_grammar: ClassVar[bool] = True
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
        """``ChatOpenAI.with_structured_output``; ``json_schema`` or unset method → ``function_calling``."""
        if method in (None, "json_schema"):
            method = "function_calling"
        kwargs.pop("strict", None)
        return super().with_structured_output(schema, method=method, **kwargs)

    def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any) -> dict:
        return adapt_payload(super()._get_request_payload(input_, stop=stop, **kwargs))

    # The server computes one request at a time. Requests wait their turn here, on the client side,
    # so that the HTTP timeout measures service time rather than queueing behind other sessions
    # (and a timed-out request is not retried while the server still works on it).

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        with self._server.request_lock if self._server else contextlib.nullcontext():
            result = super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)
        return lift_text_tool_calls(result, _tool_names(kwargs))

    async def _agenerate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        async with self._server.async_request_lock() if self._server else contextlib.nullcontext():
            result = await super()._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)
        return lift_text_tool_calls(result, _tool_names(kwargs))


# --------------------------------------------------------------------------------------------
# The server: one llama_cpp.server child per (model file, options), shared by the whole process.
# --------------------------------------------------------------------------------------------

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
        self.request_lock = threading.Lock()
        self._async_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()
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
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--n_ctx", str(opts.n_ctx),
            "--n_threads", str(opts.n_threads),
            # Logits for the last token only: no (n_ctx x vocab) score matrix, faster prompt eval.
            "--logits_all", "false",
            "--verbose", "true" if opts.verbose else "false",
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


# --------------------------------------------------------------------------------------------
# Provider factories (see BUILTIN_PROVIDERS).
# --------------------------------------------------------------------------------------------


def chat_model_for_server(server: LocalServer, settings: ModelSettings) -> LocalChatOpenAI:
    """A :class:`LocalChatOpenAI` talking to ``server`` with ``settings`` (sampling, timeout, retries).

    ``settings.base_url`` and ``settings.api_key`` are ignored (the server is local and keyless);
    ``settings.extra`` minus the server keys goes to ``ChatOpenAI``. ``max_tokens`` defaults to
    ``WTB_LOCAL_MAX_TOKENS`` or :data:`DEFAULT_MAX_TOKENS` (``extra["max_tokens"]`` overrides);
    the timeout is at least ``WTB_LOCAL_MIN_TIMEOUT`` or :data:`DEFAULT_MIN_TIMEOUT` seconds.
    """
    kwargs: dict[str, Any] = dict(
        model=server.model_path.stem,
        base_url=server.base_url,
        api_key="local-no-key",
        temperature=settings.temperature,
        timeout=max(settings.timeout, float(os.environ.get("WTB_LOCAL_MIN_TIMEOUT") or DEFAULT_MIN_TIMEOUT)),
        max_retries=settings.max_retries,
        max_tokens=_env_int("WTB_LOCAL_MAX_TOKENS", DEFAULT_MAX_TOKENS),
        # Loopback only: never route through a proxy from the environment.
        http_client=httpx.Client(trust_env=False),
        http_async_client=httpx.AsyncClient(trust_env=False),
    )
    kwargs.update({k: v for k, v in settings.extra.items() if k not in SERVER_KEYS})
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
