"""A bounded local OpenAI-compatible server for tests: scripted replies on ``POST /v1/chat/completions``.

How a request finds its reply: the script is keyed by session, and a session is
recognised by the first two messages of every request, which never change
within a session: the system message (``"Current Date: ..."``) and the first
user message (task 0). Each session has its own queue of replies, consumed in
request order (the harness sends one session's requests one after another), so
any number of sessions can be in flight. The fixture sessions have distinct
(system, first user) pairs; :class:`ScriptedServer` refuses a script where two
sessions collide.

The server listens on 127.0.0.1 on a free port, answers only what the script
holds (anything else gets HTTP 404/409 with a JSON error), records every
request body, and stops when the ``with`` block ends.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Mapping, Sequence


def session_key(messages: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """``(system content, first user content)`` of a request's messages."""
    system = next((m.get("content") for m in messages if m.get("role") == "system"), "")
    user = next((m.get("content") for m in messages if m.get("role") == "user"), "")
    return str(system), str(user)


class ScriptedServer:
    """OpenAI-compatible chat completions from a script (see module doc).

    Args:
        sessions: dataset lines (for their system / first user message).
        script: ``{session_id: [response, ...]}`` with responses in the
            ``candidates.jsonl`` shape ``{"content", "tool_calls", "reasoning_content"?}``.
        usage: ``(session_id, request_index) -> (prompt_tokens, completion_tokens)``.
    """

    def __init__(
        self,
        sessions: Sequence[Mapping[str, Any]],
        script: Mapping[str, Sequence[Mapping[str, Any]]],
        usage: Callable[[str, int], tuple[int, int]] = lambda sid, i: (100 + i, 10 + i),
    ):
        self.keys: dict[tuple[str, str], str] = {}
        for session in sessions:
            if session["id"] not in script:
                continue
            key = ("Current Date: " + session["english_env_info"], session["english_tasks"][0])
            if key in self.keys:
                raise ValueError(f"sessions {self.keys[key]} and {session['id']} share their first messages")
            self.keys[key] = session["id"]
        self.script = {sid: list(responses) for sid, responses in script.items()}
        self.usage = usage
        self.served: dict[str, int] = {sid: 0 for sid in self.script}
        self.requests: dict[str, list[dict[str, Any]]] = {sid: [] for sid in self.script}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="openai-stub", daemon=True)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> "ScriptedServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def reply(self, body: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        """``(HTTP status, JSON body)`` for one request body."""
        session_id = self.keys.get(session_key(body.get("messages") or []))
        if session_id is None:
            return 404, {"error": {"message": "no script for this session", "type": "not_found"}}
        with self._lock:
            index = self.served[session_id]
            responses = self.script[session_id]
            if index >= len(responses):
                return 409, {"error": {"message": f"script of {session_id} exhausted", "type": "conflict"}}
            self.served[session_id] = index + 1
            self.requests[session_id].append(dict(body))
        response = responses[index]
        message = {"role": "assistant", "content": response.get("content"), "tool_calls": response.get("tool_calls")}
        if response.get("reasoning_content") is not None:
            message["reasoning_content"] = response["reasoning_content"]
        prompt_tokens, completion_tokens = self.usage(session_id, index)
        return 200, {
            "id": f"chatcmpl-{session_id}-{index}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", ""),
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if message["tool_calls"] else "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server interface
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    status, payload = 400, {"error": {"message": "invalid JSON", "type": "bad_request"}}
                else:
                    if self.path.rstrip("/") != "/v1/chat/completions":
                        status, payload = 404, {"error": {"message": f"no route {self.path}", "type": "not_found"}}
                    else:
                        status, payload = server.reply(body)
                data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler
