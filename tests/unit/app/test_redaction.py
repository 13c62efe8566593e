"""The one redaction (models/redaction.py, docs/settings.md §8): every form a secret takes in what leaves a process."""

from __future__ import annotations

import io
import json
import sys

import pytest

from wildtoolbench.models.redaction import REDACTED, redact, redact_record, redact_text, secret_values
from wildtoolbench.runner.accounting import RunSummary, summary_json
from wildtoolbench.tracing.redaction import RedactingStream, redacted_terminal

KEY = "sk-test-SERVERKEY777"
PLAIN = "Zq7wPlainSecretValue42"  # no known shape: found only as the value of a secret variable


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (f"Authorization: Bearer {KEY}", "Authorization: Bearer "),
        (f"authorization: bearer {PLAIN}", "authorization: bearer "),
        (f"Proxy-Authorization: Basic {PLAIN}", "Proxy-Authorization: Basic "),
        (f"api-key: {PLAIN}", "api-key: "),
        (f"x-api-key: {PLAIN}", "x-api-key: "),
        (f"x-goog-api-key: {PLAIN}", "x-goog-api-key: "),
        (f"Cookie: session={PLAIN}", "Cookie: "),
        (f"{{'authorization': 'Bearer {PLAIN}'}}", "{'authorization': 'Bearer "),
        (f'{{"api_key": "{PLAIN}"}}', '{"api_key": "'),
        (f'{{\\"authorization\\": \\"Bearer {PLAIN}\\"}}', '{\\"authorization\\": \\"Bearer '),
        (f"api_key={PLAIN}", "api_key="),
        (f"https://user:{PLAIN}@host.example/v1", "https://[REDACTED]@host.example/v1"),
        (f"https://{PLAIN}@host.example/v1", "https://[REDACTED]@host.example/v1"),
        (f"https://host.example/v1?api_key={PLAIN}&x=1", "https://host.example/v1?api_key=[REDACTED]&x=1"),
        (f"https://host.example/v1?key={PLAIN}", "?key=[REDACTED]"),
        (f"https://host.example/v1?token={PLAIN}", "?token=[REDACTED]"),
        (f"https://blob.example/f?sv=1&sig={PLAIN}", "&sig=[REDACTED]"),
        (f"https://s3.example/f?X-Amz-Signature={PLAIN}", "X-Amz-Signature=[REDACTED]"),
        (f"https://host.example/cb?access_token={PLAIN}", "access_token=[REDACTED]"),
        (f"error: {KEY} rejected", "error: [REDACTED] rejected"),
        ("lsv2_pt_" + "a1" * 16, REDACTED),
        ("hf_" + "A" * 20, REDACTED),
        ("ghp_" + "b" * 30, REDACTED),
        ("AKIA" + "ABCDEFGHIJKLMNOP", REDACTED),
    ],
)
def test_every_secret_form_is_redacted(text, kept):
    out = redact_text(text, secrets=[])
    assert PLAIN not in out and KEY not in out, out
    assert kept in out and REDACTED in out, out


def test_values_of_secret_variables_are_redacted_wherever_they_appear():
    env = {
        "OPENAI_API_KEY": PLAIN,
        "MY_SERVICE_TOKEN": "tok-abcdef",
        "DB_PASSWORD": "hunter22",
        "AZURE_OPENAI_KEY": "azk-123456",
        "SOME_SECRET": "s3cr3t-value",
        "PATH": "/usr/bin",
        "SHORT_TOKEN": "x",
    }
    secrets = secret_values(env)
    assert set(secrets) == {PLAIN, "tok-abcdef", "hunter22", "azk-123456", "s3cr3t-value"}
    text = f"the body said {PLAIN} / tok-abcdef / hunter22 / azk-123456 / s3cr3t-value on /usr/bin x"
    assert redact_text(text, secrets) == (
        "the body said [REDACTED] / [REDACTED] / [REDACTED] / [REDACTED] / [REDACTED] on /usr/bin x"
    )


def test_ordinary_text_is_kept():
    for text in ("Current Date: 2025-01-01", "user@example.com wrote", "a=1&b=2", "the key point", "sk-short"):
        assert redact_text(text, secrets=[]) == text


def test_redact_walks_json_and_blanks_secret_keys():
    value = {"headers": {"Authorization": "Bearer abc", "x-api-key": "k"}, "url": "http://u:p@h/x", "n": 3}
    assert redact(value, secrets=[]) == {
        "headers": {"Authorization": REDACTED, "x-api-key": REDACTED},
        "url": "http://[REDACTED]@h/x",
        "n": 3,
    }


def test_records_keep_benchmark_content_and_lose_secrets_in_every_error_field():
    echoed = f"http 401: rejected with headers authorization: Bearer {PLAIN}"
    record = {
        "id": "s1",
        "result": [{"step": [{"content": "see https://h/?key=abc", "error_reason": echoed}]}],
        "error_detail": f"ModelRequestError: {echoed}",
        "usage": {"retried_requests": [{"errors": [echoed, echoed], "attempts": 2}]},
    }
    out = redact_record(record, secrets=[])
    text = json.dumps(out)
    assert PLAIN not in text
    assert out["result"][0]["step"][0]["content"] == "see https://h/?key=abc"  # model output, byte for byte
    assert out["usage"]["retried_requests"][0]["errors"][0].endswith("Bearer [REDACTED]")


def test_summary_json_is_redacted(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", PLAIN)
    summary = RunSummary(result_path=tmp_path / "result.jsonl")
    echoed = f"http 500: echo authorization: Bearer {PLAIN}"
    summary.add_usage("s1", {"requests": 1, "attempts": 2, "retried_requests": [{"errors": [echoed], "ok": True}]})
    summary.infrastructure_errors.append({"id": "s2", "error": echoed, "attempts": 1, "where": {}})
    content = summary_json(summary, "m", [], ["s1", "s2"], None, {"base_url": "https://u:pw@h/v1"})
    text = json.dumps(content)
    assert PLAIN not in text and "pw@" not in text
    assert content["retried_requests"][0]["errors"] == ["http 500: echo authorization: Bearer [REDACTED]"]


def test_the_terminal_guard_redacts_every_write(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", PLAIN)
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    with redacted_terminal():
        print(f"key {PLAIN}")
        print(f"Authorization: Bearer {KEY}", file=sys.stderr)
        with redacted_terminal():  # nested: not wrapped twice
            assert not isinstance(sys.stdout.wrapped, RedactingStream)
    assert sys.stdout is out and sys.stderr is err
    assert out.getvalue() == "key [REDACTED]\n"
    assert err.getvalue() == "Authorization: Bearer [REDACTED]\n"
