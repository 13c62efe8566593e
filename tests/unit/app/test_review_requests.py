"""The review app's request checks at their edges (docs/review.md §9): huge and negative positions, the
``Origin``'s scheme, and ``Host`` headers with an ``@`` or other suffix."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from wildtoolbench.review.app import ReviewConfig, create_app
from wildtoolbench.review.command import open_store

REPO = Path(__file__).resolve().parents[3]
DEMO = REPO / "bench" / "data" / "demo_sessions.jsonl"


@pytest.fixture
def app(tmp_path):
    store, _ = open_store(DEMO, tmp_path / "r.sqlite3", language="en", tasks=None)
    config = ReviewConfig(store)
    return config, TestClient(create_app(config), base_url="http://127.0.0.1:8765", raise_server_exceptions=False)


@pytest.mark.parametrize("pos", ["99999999999999999999", str(2**63), "9223372036854775807", "6"])
def test_a_position_no_session_has_is_a_404(app, pos):
    _, client = app
    for path in (f"/session/{pos}", f"/api/session/{pos}"):
        answer = client.get(path)
        assert answer.status_code == 404 and "no session at position" in answer.text, path
    assert client.get("/session/5").status_code == 200  # the last one narrowly exists


@pytest.mark.parametrize("value", [10**20, -1, 2**31])
def test_huge_and_negative_numbers_in_a_change_are_refused(app, value):
    config, client = app
    headers = {"X-WTB-Token": config.token, "origin": "http://127.0.0.1:8765"}
    for field in ("pos", "task", "version"):
        body = {"pos": 0, "task": 0, "verdict": "accept", "version": 1, "reviewer": "alice", field: value}
        answer = client.post("/api/verdict", json=body, headers=headers)
        assert answer.status_code == 422 and "0 to 2147483647" in answer.text, (field, answer.text)
    ok = {"pos": 0, "task": 0, "verdict": "accept", "version": 1, "reviewer": "alice"}
    assert client.post("/api/verdict", json=ok, headers=headers).status_code == 200


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        ("http://127.0.0.1:8765", 200),
        ("https://127.0.0.1:8765", 403),
        ("ftp://127.0.0.1:8765", 403),
        ("http://127.0.0.1:8766", 403),
        ("http://127.0.0.1:8765@evil.example", 403),
        ("http://evil.example@127.0.0.1:8765", 403),
        ("http://127.0.0.1:8765/path", 403),
        ("127.0.0.1:8765", 403),
    ],
)
def test_the_origin_must_match_scheme_name_and_port(app, origin, status):
    config, client = app
    body = {"pos": 0, "task": 0, "verdict": "accept", "version": 1, "reviewer": "alice"}
    answer = client.post("/api/verdict", json=body, headers={"X-WTB-Token": config.token, "origin": origin})
    assert answer.status_code == status, (origin, answer.text)


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("127.0.0.1:8765", 200),
        ("localhost", 200),
        ("[::1]:8765", 200),
        ("127.0.0.1:8765@evil.example", 400),
        ("127.0.0.1@evil.example", 400),
        ("[::1]@evil.example", 400),
        ("127.0.0.1:8765:1", 400),
        ("127.0.0.1 evil", 400),
        ("evil.example", 400),
        ("", 400),
    ],
)
def test_a_host_with_a_suffix_is_refused(app, host, status):
    _, client = app
    assert client.get("/", headers={"host": host}).status_code == status, host
