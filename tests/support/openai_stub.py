"""A local OpenAI-compatible chat server that replays scripted candidate responses, with fault injection.

Used by the HTTP tests (``tests/support/openai_stub.py`` re-exports it) and by the
performance benchmark (``benchmarks/perf.py`` runs it in a separate process with
``python -m tests.support.openai_stub``). Never talks to anything but 127.0.0.1.

How a request finds its reply: the script is keyed by session, and a session is
recognised by the first two messages of every request, which never change
within a session: the system message (``"Current Date: ..."``) and the first
user message (task 0). Each session has its own queue of replies, consumed in
request order (the harness sends one session's requests one after another), so
any number of sessions can be in flight. :class:`ScriptedServer` refuses a
script where two sessions share those two messages.

The script's responses are sent as they are, as the ``message`` of the only
choice: a response may hold anything a misbehaving server could send
(``arguments`` as an object, a missing ``id``, ``content: null`` ...), so the
real client parsing (openai SDK + langchain-openai) sees exactly that JSON.

Faults (``faults={(session_id, request_index): [fault, ...]}``): the i-th
attempt at that request gets the i-th fault of the list; attempts past the end
of the list are served normally. A failed attempt does not consume the
session's reply, so a retry gets the same reply the first attempt would have.
A fault is one of

- ``{"status": 429, "headers": {"Retry-After": "1"}}``: that HTTP status with a JSON error body;
- ``{"hang": seconds}``: wait that long (or until the server stops) before answering normally;
- ``{"drop": True}``: close the connection without any response.

The server listens on a free port, answers only what the script holds
(anything else gets HTTP 404/409 with a JSON error), keeps connections alive
(HTTP/1.1), records every request body and every attempt's outcome, and stops
when the ``with`` block ends (a hung handler is released at once).
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Fault = Mapping[str, Any]


def session_key(messages: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """``(system content, first user content)`` of a request's messages."""
    systems = [str(m.get("content")) for m in messages if m.get("role") == "system"]
    # the harness's date line; an agent may put a system prompt of its own before it
    system = next((c for c in systems if c.startswith("Current Date: ")), systems[0] if systems else "")
    user = next((m.get("content") for m in messages if m.get("role") == "user"), "")
    return str(system), str(user)


def session_copy(session: Mapping[str, Any], new_id: str, tag: str) -> dict[str, Any]:
    """A copy of ``session`` with id ``new_id`` whose first task message ends with ``" [tag]"``,
    so that :class:`ScriptedServer` tells the copies apart (gold answers unchanged)."""
    copy = json.loads(json.dumps(session))
    copy["id"] = new_id
    copy["english_tasks"][0] = f"{copy['english_tasks'][0]} [{tag}]"
    return copy


class _Server(ThreadingHTTPServer):
    """``ThreadingHTTPServer`` with a listen backlog for many clients connecting at once (the default,
    5, drops connections when a run at concurrency 64 opens its connections together)."""

    request_queue_size = 1024


def _default_usage(session_id: str, index: int) -> tuple[int, int]:
    return 100 + index, 10 + index


class ScriptedServer:
    """OpenAI-compatible chat completions from a script (see module doc).

    Args:
        sessions: dataset lines (for their system / first user message).
        script: ``{session_id: [response, ...]}`` with responses in the
            ``candidates.jsonl`` shape ``{"content", "tool_calls", "reasoning_content"?}``
            (sent as they are, malformed ones included).
        usage: ``(session_id, request_index) -> (prompt_tokens, completion_tokens)``.
        faults: ``{(session_id, request_index): [fault per attempt]}`` (see module doc).
        latency: seconds to wait before every successful reply.
        language: the side of the sessions the requests come from (``en``: ``english_*`` fields; ``zh``).

    Attributes:
        served: replies consumed per session.
        requests: request bodies per session, in order (successful attempts only).
        attempts: ``(session_id, request_index, outcome)`` of every attempt in arrival order;
            outcome ``"ok"``, ``"status <code>"``, ``"hang"`` or ``"drop"``.

    Raises:
        ValueError: two scripted sessions share their first two messages.
    """

    def __init__(
        self,
        sessions: Sequence[Mapping[str, Any]],
        script: Mapping[str, Sequence[Mapping[str, Any]]],
        usage: Callable[[str, int], tuple[int, int]] = _default_usage,
        *,
        faults: Mapping[tuple[str, int], Sequence[Fault]] | None = None,
        latency: float = 0.0,
        language: str = "en",
    ):
        self.keys: dict[tuple[str, str], str] = {}
        for session in sessions:
            if session["id"] not in script:
                continue
            prefix = "english_" if language == "en" else ""
            key = ("Current Date: " + session[f"{prefix}env_info"], session[f"{prefix}tasks"][0])
            if key in self.keys:
                raise ValueError(f"sessions {self.keys[key]} and {session['id']} share their first messages")
            self.keys[key] = session["id"]
        self.script = {sid: list(responses) for sid, responses in script.items()}
        self.usage = usage
        self.faults = {key: list(value) for key, value in (faults or {}).items()}
        self.latency = latency
        self.served: dict[str, int] = {sid: 0 for sid in self.script}
        self.requests: dict[str, list[dict[str, Any]]] = {sid: [] for sid in self.script}
        self.attempts: list[tuple[str, int, str]] = []
        self._tries: dict[tuple[str, int], int] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="openai-stub", daemon=True)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def use_script(self, script: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
        """Serve ``script`` from now on, from its first reply per session (requests and attempts are cleared);
        its sessions must be among those the server was made with (a client keeps its URL across runs).

        Raises:
            ValueError: a session the server does not know.
        """
        known = set(self.keys.values())
        unknown = sorted(set(script) - known)
        if unknown:
            raise ValueError(f"sessions {', '.join(unknown)} were not given to this server")
        with self._lock:
            self.script = {sid: list(responses) for sid, responses in script.items()}
            self.served = {sid: 0 for sid in self.script}
            self.requests = {sid: [] for sid in self.script}
            self.attempts = []
            self._tries = {}

    def outcomes(self, outcome: str | None = None) -> list[tuple[str, int, str]]:
        """The recorded attempts, optionally only those with ``outcome`` (e.g. ``"status 429"``)."""
        with self._lock:
            return [a for a in self.attempts if outcome is None or a[2] == outcome]

    def plan(self, body: Mapping[str, Any]) -> tuple[str, Any]:
        """Decide one attempt: ``("reply", (status, payload))``, ``("hang", seconds)`` or ``("drop", None)``."""
        session_id = self.keys.get(session_key(body.get("messages") or []))
        if session_id is None:
            return "reply", (404, {"error": {"message": "no script for this session", "type": "not_found"}})
        with self._lock:
            index = self.served[session_id]
            key = (session_id, index)
            attempt = self._tries.get(key, 0)
            self._tries[key] = attempt + 1
            faults = self.faults.get(key, ())
            fault = faults[attempt] if attempt < len(faults) else None
            if fault is not None:
                if fault.get("drop"):
                    self.attempts.append((session_id, index, "drop"))
                    return "drop", None
                if "status" in fault:
                    status = int(fault["status"])
                    self.attempts.append((session_id, index, f"status {status}"))
                    payload = {"error": {"message": f"injected HTTP {status}", "type": "injected", "code": status}}
                    return "reply", (status, payload, dict(fault.get("headers") or {}))
                self.attempts.append((session_id, index, "hang"))
                return "hang", float(fault.get("hang", 3600.0))
            responses = self.script[session_id]
            if index >= len(responses):
                self.attempts.append((session_id, index, "status 409"))
                return "reply", (409, {"error": {"message": f"script of {session_id} exhausted", "type": "conflict"}})
            self.served[session_id] = index + 1
            self.requests[session_id].append(dict(body))
            self.attempts.append((session_id, index, "ok"))
        return "reply", (200, self.completion(session_id, index, body))

    def reply(self, body: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        """``(HTTP status, JSON body)`` for one request body (faults other than a status are not applied)."""
        kind, value = self.plan(body)
        if kind != "reply":
            return 503, {"error": {"message": f"injected {kind}", "type": "injected"}}
        return value[0], value[1]

    def completion(self, session_id: str, index: int, body: Mapping[str, Any]) -> dict[str, Any]:
        """The ``chat.completion`` body for reply ``index`` of ``session_id``."""
        response = self.script[session_id][index]
        message = {"role": "assistant", **{k: v for k, v in response.items() if k != "reasoning_content"}}
        message.setdefault("content", None)
        if response.get("reasoning_content") is not None:
            message["reasoning_content"] = response["reasoning_content"]
        prompt_tokens, completion_tokens = self.usage(session_id, index)
        return {
            "id": f"chatcmpl-{session_id}-{index}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", ""),
            "choices": [
                {"index": 0, "message": message, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive: clients reuse their connections
            disable_nagle_algorithm = True  # headers and body go out at once (no 40 ms delayed-ACK stalls)

            def do_POST(self) -> None:  # noqa: N802 - http.server interface
                length = int(self.headers.get("Content-Length") or 0)
                headers: dict[str, str] = {}
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    status, payload = 400, {"error": {"message": "invalid JSON", "type": "bad_request"}}
                else:
                    if self.path.rstrip("/") != "/v1/chat/completions":
                        status, payload = 404, {"error": {"message": f"no route {self.path}", "type": "not_found"}}
                    else:
                        kind, value = server.plan(body)
                        if kind == "drop":
                            self.close_connection = True
                            try:
                                self.connection.shutdown(socket.SHUT_RDWR)
                            except OSError:
                                pass
                            return
                        if kind == "hang":
                            server._stopping.wait(value)
                            self.close_connection = True
                            return
                        status, payload = value[0], value[1]
                        if len(value) > 2:
                            headers = value[2]
                        if status == 200 and server.latency:
                            server._stopping.wait(server.latency)
                content_type = "application/json"
                if status == 200 and body.get("stream"):
                    content_type = "text/event-stream"
                    data = stream_body(payload, bool((body.get("stream_options") or {}).get("include_usage")))
                else:
                    data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(data)))
                    for name, text in headers.items():
                        self.send_header(name, str(text))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (timeout) meanwhile
                    self.close_connection = True

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


def _pieces(text: str, count: int = 3) -> list[str]:
    """``text`` cut into up to ``count`` pieces (at least one, ``""`` for an empty text)."""
    size = max(1, -(-len(text) // count))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def stream_chunks(completion: Mapping[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects a streaming server sends for ``completion``: the role (with
    ``content: null`` when the reply has none), the content in pieces, each tool call's id, type and name
    then its ``arguments`` string in pieces (a call that is not of that shape goes in one delta as it is),
    the finish reason, and the usage when asked for (``stream_options.include_usage``)."""
    message = completion["choices"][0]["message"]
    head = {k: completion[k] for k in ("id", "created", "model")}

    def chunk(delta: Mapping[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            **head,
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": dict(delta), "finish_reason": finish}],
        }

    content = message.get("content")
    first: dict[str, Any] = {"role": "assistant", "content": None if content is None else ""}
    if message.get("tool_calls") == []:  # sent as it is: an empty list of calls
        first["tool_calls"] = []
    chunks = [chunk(first)]
    if isinstance(content, str) and content:
        chunks += [chunk({"content": piece}) for piece in _pieces(content)]
    if message.get("reasoning_content") is not None:
        chunks.append(chunk({"reasoning_content": message["reasoning_content"]}))
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") if isinstance(call, Mapping) else None
        arguments = function.get("arguments") if isinstance(function, Mapping) else None
        if not isinstance(arguments, str):
            chunks.append(chunk({"tool_calls": [{"index": index, **call} if isinstance(call, Mapping) else call]}))
            continue
        first = {"index": index, **{k: v for k, v in call.items() if k != "function"}}
        first["function"] = {**{k: v for k, v in function.items() if k != "arguments"}, "arguments": ""}
        chunks.append(chunk({"tool_calls": [first]}))
        chunks += [chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]}) for p in _pieces(arguments)]
    chunks.append(chunk({}, completion["choices"][0]["finish_reason"]))
    if include_usage:
        chunks.append({**head, "object": "chat.completion.chunk", "choices": [], "usage": completion["usage"]})
    return chunks


def stream_body(completion: Mapping[str, Any], include_usage: bool) -> bytes:
    """The server-sent events of :func:`stream_chunks`, ending with ``data: [DONE]``."""
    lines = [f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in stream_chunks(completion, include_usage)]
    return ("".join(lines) + "data: [DONE]\n\n").encode("utf-8")


# --------------------------------------------------------------------------- separate-process mode


def _jsonl(path: str) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    """Serve a dataset's scripted candidate until stdin closes (``python -m tests.support.openai_stub``).

    Prints ``READY <base_url>`` on stdout once listening, then ``served <n>`` when stdin
    reaches end of file and the server stops.
    """
    parser = argparse.ArgumentParser(prog="python -m tests.support.openai_stub", description=main.__doc__)
    parser.add_argument("--dataset", required=True, help="sessions (JSON Lines)")
    parser.add_argument("--candidates", required=True, help="candidates.jsonl-style responses")
    parser.add_argument("--candidate", default="oracle", help="candidate name in the candidates file")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each reply")
    args = parser.parse_args(argv)
    sessions = _jsonl(args.dataset)
    script = {r["session_id"]: r["responses"] for r in _jsonl(args.candidates) if r["candidate"] == args.candidate}
    with ScriptedServer(sessions, script, latency=args.latency) as server:
        print(f"READY {server.base_url}", flush=True)
        sys.stdin.read()
        served = sum(server.served.values())
    print(f"served {served}", flush=True)
    time.sleep(0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
