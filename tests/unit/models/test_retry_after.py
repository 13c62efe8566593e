"""``Retry-After`` read robustly, its cap an option and reported; provider token counts checked
(issue 24 finding 6, docs/settings.md §7.2 and §7.5)."""

from __future__ import annotations

import asyncio
import email.utils

import httpx
import openai
import pytest

from wildtoolbench.models.transport import (
    MAX_TOKENS_PER_REPLY,
    ModelRequestError,
    RequestUsage,
    RetryPolicy,
    parse_retry_after,
    planned_wait,
    request_with_retries,
    retry_after,
    transient_kind,
    usage_scope,
)

NOW = 1_700_000_000.0


def _429(headers: dict[str, str]) -> openai.RateLimitError:
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx.Response(429, headers=headers, request=request, json={"error": {"message": "slow down"}})
    return openai.RateLimitError("HTTP 429", response=response, body=None)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("120", 120.0),
        (" 3 ", 3.0),
        ("1.5", 1.5),
        ("0", 0.0),
        (email.utils.formatdate(NOW + 30, usegmt=True), 30.0),  # IMF-fixdate
        ("Tuesday, 14-Nov-23 22:13:50 GMT", 30.0),  # RFC 850
        ("Tue Nov 14 22:13:50 2023", 30.0),  # asctime: no zone, GMT
        (email.utils.formatdate(NOW - 300, usegmt=True), 0.0),  # a date in the past
    ],
)
def test_both_forms_of_retry_after_are_read(value, seconds):
    assert parse_retry_after(value, now=NOW) == pytest.approx(seconds)


@pytest.mark.parametrize("value", ["soon", "", "  ", "-5", "nan", "inf", "-inf", "1e400", "12 34", "3 s", "0x10", None])
def test_junk_retry_after_says_nothing(value):
    assert parse_retry_after(value, now=NOW) is None


def test_junk_retry_after_falls_back_to_the_backoff_and_is_still_retried():
    exc = _429({"Retry-After": "soon"})
    assert transient_kind(exc) == "http 429" and retry_after(exc) is None
    assert planned_wait(RetryPolicy(backoff=1.0), 2, exc, jitter=0.25) == (2.25, None)

    attempts: list[int] = []

    async def send() -> str:
        attempts.append(1)
        if len(attempts) < 3:
            raise _429({"Retry-After": "soon", "retry-after-ms": "later"})
        return "ok"

    async def no_sleep(seconds: float) -> None:
        return None

    assert asyncio.run(request_with_retries(send, RetryPolicy(), sleep=no_sleep)) == "ok"
    assert len(attempts) == 3


def test_retry_after_ms_wins_and_junk_there_is_ignored():
    assert retry_after(_429({"retry-after-ms": "250", "Retry-After": "9"})) == 0.25
    assert retry_after(_429({"retry-after-ms": "-1", "Retry-After": "9"})) == 9.0


def test_a_capped_wait_is_recorded_with_the_request_and_counted():
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    calls: list[int] = []

    async def send() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise _429({"Retry-After": "3600"})
        return "ok"

    async def main() -> RequestUsage:
        with usage_scope() as usage:
            await request_with_retries(send, RetryPolicy(max_wait=5.0), sleep=sleep, where={"task": 0, "step": 0})
        return usage

    usage = asyncio.run(main())
    assert waits == [5.0]
    assert usage.capped_waits == 1
    (entry,) = usage.retried
    assert entry["retry_after_capped"] == [3600.0] and entry["ok"] is True and entry["waited"] == 5.0
    assert usage.as_dict()["capped_retry_waits"] == 1


def test_a_wait_within_the_cap_is_not_reported():
    async def main() -> RequestUsage:
        calls: list[int] = []

        async def send() -> str:
            calls.append(1)
            if len(calls) == 1:
                raise _429({"Retry-After": "2"})
            return "ok"

        async def sleep(seconds: float) -> None:
            return None

        with usage_scope() as usage:
            await request_with_retries(send, RetryPolicy(max_wait=60.0), sleep=sleep)
        return usage

    usage = asyncio.run(main())
    assert usage.capped_waits == 0 and "retry_after_capped" not in usage.retried[0]
    assert "capped_retry_waits" not in usage.as_dict()


def test_many_attempts_do_not_overflow_the_backoff():
    assert planned_wait(RetryPolicy(max_attempts=100_000, max_wait=60.0), 5000, None, jitter=0.0) == (60.0, None)


def test_a_non_transient_failure_is_still_not_retried():
    async def send() -> str:
        raise ValueError("bad script")

    with pytest.raises(ModelRequestError) as caught:
        asyncio.run(request_with_retries(send, RetryPolicy()))
    assert caught.value.attempts == 1 and not caught.value.transient


@pytest.mark.parametrize(
    "counts",
    [(-5, 10), (10, -1), (float("nan"), 3), (1.5, 2), ("12", 3), (True, 1), (MAX_TOKENS_PER_REPLY + 1, 1), (10**30, 0)],
)
def test_token_counts_that_cannot_be_counts_are_not_added(counts):
    usage = RequestUsage()
    usage.add_tokens(100, 10)
    usage.add_tokens(*counts)
    assert (usage.input_tokens, usage.output_tokens, usage.invalid_token_counts) == (100, 10, 1)
    assert usage.as_dict()["invalid_token_counts"] == 1


def test_plausible_token_counts_are_summed():
    usage = RequestUsage()
    usage.add_tokens(100, 10)
    usage.add_tokens(None, 5)
    usage.add_tokens(7.0, 0)
    assert (usage.input_tokens, usage.output_tokens, usage.invalid_token_counts) == (107, 15, 0)
    assert "invalid_token_counts" not in usage.as_dict()
