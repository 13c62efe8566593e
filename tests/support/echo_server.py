"""A loopback HTTP server that records every request and answers with an error echoing it back.

The worst case for secret handling: a misconfigured or hostile endpoint that copies the request's
headers (``Authorization: Bearer <key>``, ``api-key``) and URL (with its query) into the error body
of its reply, which the client then carries into its exception messages. Used by the redaction tests
(``tests/integration/test_echoing_server.py``) and, as a capture server that must see no request,
by the server-mode tests (``tests/integration/test_server_mode_safety.py``). Never talks to anything
but 127.0.0.1.

``statuses`` is the status of each successive request, over and over: ``[500, 500, 401]`` makes the
harness retry twice and then give up on a non-transient error, for every request in turn.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class EchoServer:
    """Answers every request with the next status of ``statuses`` and a JSON error echoing the request.

    Attributes:
        requests: ``{"method", "path", "headers", "body"}`` of every request received, in order.
    """

    def __init__(self, statuses: Sequence[int] = (401,)):
        self.statuses = list(statuses) or [401]
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="echo-server", daemon=True)

    @property
    def port(self) -> int:
        """The port it listens on."""
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> EchoServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
                seen = {"method": self.command, "path": self.path, "headers": dict(self.headers.items()), "body": body}
                with server._lock:
                    server.requests.append(seen)
                    status = server.statuses[(len(server.requests) - 1) % len(server.statuses)]
                echoed = " ".join(f"{k}: {v}" for k, v in self.headers.items())
                message = f"rejected {self.command} {self.path} with headers {echoed}"
                payload = {"error": {"message": message, "type": "echo", "headers": dict(self.headers.items())}}
                data = json.dumps(payload).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer  # noqa: N815 - http.server interface

            def log_message(self, *args: Any) -> None:
                pass

        return Handler
