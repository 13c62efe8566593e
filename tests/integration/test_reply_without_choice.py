"""A 200 reply without a choice (``"choices": []``, missing, ``null``, not objects) is an infrastructure error
whose message says what the reply held, never an ``IndexError`` (models/providers/openai.py)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from typer.testing import CliRunner

from wildtoolbench.cli import app
from wildtoolbench.models.providers.openai import ReplyWithoutChoice, check_choices


class _Fixed:
    """Answers every POST with 200 and ``body``."""

    def __init__(self, body: dict):
        payload = json.dumps(body).encode()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


BASE = {
    "id": "x",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


@pytest.mark.parametrize(
    ("choices", "said"),
    [
        ([], "an empty 'choices' list"),
        (None, "'choices' of NoneType"),
        ("x", "'choices' of str"),
        ([1], "'choices' of list"),
    ],
)
def test_a_reply_without_a_choice_is_named(tmp_path, monkeypatch, choices, said):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with _Fixed({**BASE, "choices": choices}) as url:
        result = CliRunner().invoke(
            app,
            ["eval", "--model", "openai:m", "--base-url", url, "--out", str(tmp_path / "run"), "--ids",
             "wild_tool_bench_0", "--no-preflight", "--no-progress", "--no-trace", "--max-attempts", "1"],
        )  # fmt: skip
    assert result.exit_code == 3, result.output
    errors = (tmp_path / "run" / "errors.jsonl").read_text()
    assert said in errors and "no message to score" in errors and "IndexError" not in errors + result.output


def test_one_choice_narrowly_passes():
    check_choices({**BASE, "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}]})
    with pytest.raises(ReplyWithoutChoice, match="no 'choices' field"):
        check_choices(BASE)
