"""Transport faults of model requests: retries, backoff, rate limits, per-session request accounting.

One helper, :func:`request_with_retries`, wraps every model request the
harness makes (the candidate in ``nodes/evaluation/candidate.py``, the generation roles in
``nodes/generation/_common.py``). The clients' own retries are switched off
(``max_retries=0``), so what happens is decided and recorded here:

- each try is bounded by :attr:`RetryPolicy.deadline` seconds from its start to the last byte of
  the reply (``--timeout``; the clients' own timeouts only bound each connect and the gap between
  two reads): a try still running then is cancelled and counts as a timeout
  (:class:`DeadlineExceeded`), retried like any other;
- a request is tried at most :attr:`RetryPolicy.max_attempts` times;
- only transient failures are retried (:func:`transient_kind`): HTTP 408, 409,
  429 and 5xx, connection errors (refused, dropped, reset) and timeouts;
  anything else (HTTP 400/401/404, a bad replay script ...) fails at once;
- the wait before a retry is exponential with random jitter (the formula of
  tenacity's ``wait_exponential_jitter``; tenacity runs the retry loop), and never shorter than what the server asked
  for in ``Retry-After`` / ``retry-after-ms`` (seconds or an HTTP date; anything else is ignored and
  the normal backoff applies), capped by ``max_wait`` (``--max-retry-wait``; a capped wait is
  recorded with the request, :attr:`RequestUsage.capped_waits`);
- an optional rate limit (requests per second, :func:`rate_limiter`) is shared
  by every request to the same endpoint in the event loop, retries included;
- a request that still fails raises :class:`ModelRequestError`, an
  *infrastructure* error: the evaluation runner keeps such sessions out of the
  scored results and runs them again on resume.

Accounting: :func:`usage_scope` opens a :class:`RequestUsage` for the code
inside it (one session); every request made there adds its attempts, retries
and (through :meth:`RequestUsage.add_tokens`) provider-reported tokens.

Connections: :func:`shared_http_client` hands out one HTTP client per endpoint
and event loop (never shared across loops), its connection pool sized by the enclosing
:func:`http_clients` scope (the run's concurrency) and never below
:data:`DEFAULT_CONNECTIONS`; the clients are closed when the last scope of the loop ends,
or else when ``asyncio.run`` shuts the loop down.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import email.utils
import functools
import math
import random
import ssl
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

T = TypeVar("T")

RETRYABLE_STATUS = frozenset({408, 409, 429})
"""HTTP statuses retried besides every 5xx (the openai SDK's own set)."""


@dataclass(frozen=True)
class RetryPolicy:
    """How one model request is retried.

    Attributes:
        max_attempts: tries per request, first one included (>= 1).
        backoff: seconds of the first wait; each later wait doubles, plus up
            to ``backoff`` seconds of random jitter.
        max_wait: longest single wait in seconds (also caps ``Retry-After``).
        rps: requests per second allowed to one endpoint (0 = no limit).
        deadline: seconds one try may take from its start to the last byte of the reply (``None``:
            no deadline of the harness, only the client's own timeouts).
    """

    max_attempts: int = 5
    backoff: float = 1.0
    max_wait: float = 60.0
    rps: float = 0.0
    deadline: float | None = None

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {self.max_attempts}")
        if not all(math.isfinite(v) and v >= 0 for v in (self.backoff, self.max_wait, self.rps)):
            raise ValueError("backoff, max_wait and rps must be finite and >= 0")
        if self.deadline is not None and not (math.isfinite(self.deadline) and self.deadline > 0):
            raise ValueError(f"deadline must be a finite number of seconds > 0, got {self.deadline}")

    def with_deadline_at_least(self, seconds: float | None) -> RetryPolicy:
        """This policy with its deadline raised to ``seconds`` (a model's ``least_deadline``: the local
        llama.cpp models declare ``WTB_LOCAL_MIN_TIMEOUT``, default 600 s, docs/settings.md §7.1).

        Returns ``self`` when nothing changes: no deadline, ``seconds`` not a positive number, or not longer.
        """
        if self.deadline is None or not isinstance(seconds, (int, float)) or seconds <= self.deadline:
            return self
        return dataclasses.replace(self, deadline=float(seconds))


class DeadlineExceeded(TimeoutError):
    """A try that had no complete reply within :attr:`RetryPolicy.deadline` seconds (a timeout, retried)."""

    def __init__(self, deadline: float):
        self.deadline = deadline
        super().__init__(f"no complete reply within the {deadline:g} s deadline (--timeout)")


REJECTED_STATUS = frozenset({400, 413, 422})
"""HTTP statuses by which a provider refuses the content of a request (context length exceeded,
payload too large, a message or tool schema the model does not accept): see
:attr:`ModelRequestError.rejected`."""


class ModelRequestError(RuntimeError):
    """A model request failed for good (retries exhausted, or a failure that is not retried).

    Usually an infrastructure error (nothing came back to score: 429/5xx/timeouts after the
    retries, or 401/403/404 from a wrong key, model name or URL). When :attr:`rejected` is true
    the provider refused this request's content instead, which is the model's limit, not the
    infrastructure's: the evaluation records it as the reference harness does (docs/evaluation.md §5,
    ``"Error during inference: ..."``, scored as wrong tasks), since re-running cannot change it.

    Attributes:
        attempts: tries made.
        errors: one short description per failed try (see :func:`describe_error`).
        transient: the last failure was of a retried kind (the retries ran out).
        where: what the request was for (``{"task": 1, "step": 0}``, ``{"role": "planner"}`` ...).
        status: HTTP status of the last failed try, if it had one.
    """

    def __init__(
        self, attempts: int, errors: list[str], transient: bool, where: Mapping[str, Any], status: int | None = None
    ):
        self.attempts = attempts
        self.errors = list(errors)
        self.transient = transient
        self.where = dict(where)
        self.status = status
        last = errors[-1] if errors else "unknown error"
        reason = f"after {attempts} attempt{'s' if attempts != 1 else ''}" if transient else "(not retried)"
        super().__init__(f"model request failed {reason}: {last}")

    @property
    def rejected(self) -> bool:
        """The provider refused the request's content (HTTP 400, 413 or 422, not retried; :data:`REJECTED_STATUS`)."""
        return not self.transient and self.status in REJECTED_STATUS


# --------------------------------------------------------------------------- classification


def _status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


def transient_kind(exc: BaseException) -> str | None:
    """The kind of a transient failure (``"http 429"``, ``"timeout"``, ``"connection"``), or ``None`` if not retried.

    Recognises the openai SDK's errors, httpx's, and the built-in ``TimeoutError`` / ``ConnectionError``;
    for other SDKs (anthropic, mistralai ...), an HTTP ``status_code`` on the exception and the usual
    class names (``APITimeoutError``, ``APIConnectionError``).
    """
    import openai

    if isinstance(exc, (openai.APITimeoutError, httpx.TimeoutException, asyncio.TimeoutError, TimeoutError)):
        return "timeout"
    if isinstance(exc, openai.APIStatusError) or isinstance(exc, httpx.HTTPStatusError):
        status = _status_of(exc)
        if status is not None and (status in RETRYABLE_STATUS or status >= 500):
            return f"http {status}"
        return None
    if isinstance(exc, (openai.APIConnectionError, httpx.TransportError, ConnectionError)):
        return "connection"
    # Other providers' SDKs (anthropic, mistralai, ... behind `langchain:` specs) follow the same shape.
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & {"APITimeoutError", "ReadTimeout", "DeadlineExceeded"}:
        return "timeout"
    if "APIConnectionError" in names:
        return "connection"
    status = _status_of(exc)
    if status is not None and (status in RETRYABLE_STATUS or status >= 500):
        return f"http {status}"
    return None


def describe_error(exc: BaseException) -> str:
    """One line for logs and summaries: ``"http 429: RateLimitError: ..."``, ``"timeout: ..."``."""
    kind = transient_kind(exc)
    if kind is None:
        status = _status_of(exc)
        kind = f"http {status}" if status is not None else "error"
    text = str(exc).splitlines()[0] if str(exc) else ""
    if len(text) > 200:
        text = text[:200] + "..."
    return f"{kind}: {type(exc).__name__}{': ' + text if text else ''}"


def _non_negative(text: str) -> float | None:
    """``float(text)`` when that is a finite number >= 0, else ``None``."""
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` header value asks to wait, or ``None`` when it says nothing usable.

    Accepts the two forms of RFC 9110 §10.2.3: delta-seconds (``"120"``; a decimal fraction such as
    ``"1.5"`` is read too) and an HTTP date (``"Wed, 21 Oct 2015 07:28:00 GMT"``, also the obsolete
    RFC 850 and asctime forms; a date without a zone is GMT), a date in the past being 0 s. Anything
    else (``"soon"``, ``"-5"``, ``"nan"``, ``"inf"``, empty) is ``None``: the normal backoff applies and
    the request is still retried.

    Args:
        value: the header's value.
        now: the current time as a Unix timestamp (default ``time.time()``; tests fix it).
    """
    text = (value or "").strip()
    if not text:
        return None
    if text.lstrip("+-").replace(".", "", 1).isdigit() or text.lower().lstrip("+-") in ("nan", "inf", "infinity"):
        return _non_negative(text)
    try:
        parsed = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if parsed is None:
        return None
    if parsed.tzinfo is None:  # HTTP dates are always GMT
        import datetime

        parsed = parsed.replace(tzinfo=datetime.timezone.utc)
    return max(0.0, parsed.timestamp() - (time.time() if now is None else now))


def retry_after(exc: BaseException) -> float | None:
    """Seconds the server asked to wait: ``retry-after-ms`` (milliseconds), else ``Retry-After``
    (:func:`parse_retry_after`), or ``None`` when the response says nothing usable."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        raw_ms, raw = headers.get("retry-after-ms"), headers.get("retry-after")
    except Exception:  # noqa: BLE001 - headers of an unknown SDK: nothing usable
        return None
    millis = _non_negative(raw_ms.strip()) if isinstance(raw_ms, str) else None
    if millis is not None:
        return millis / 1000.0
    return parse_retry_after(raw) if isinstance(raw, str) else None


def planned_wait(
    policy: RetryPolicy, attempt: int, exc: BaseException | None, *, jitter: float | None = None
) -> tuple[float, float | None]:
    """``(seconds to wait, seconds the server asked for)`` after failed try number ``attempt`` (1-based).

    The wait is the exponential backoff with jitter, at least the server's ``Retry-After``
    (:func:`retry_after`), at most ``policy.max_wait``; the second value is the server's ask (``None``
    when it asked nothing usable), so a caller sees a capped wait (asked > ``policy.max_wait``).
    ``jitter`` fixes the random part (for tests); by default it is drawn uniformly from ``[0, backoff]``.
    """
    if jitter is None:
        jitter = random.uniform(0.0, policy.backoff)
    base = min(policy.backoff * 2.0 ** min(attempt - 1, 64) + jitter, policy.max_wait)
    asked = retry_after(exc) if exc is not None else None
    return min(max(base, asked or 0.0), policy.max_wait), asked


def wait_seconds(policy: RetryPolicy, attempt: int, exc: BaseException | None, *, jitter: float | None = None) -> float:
    """Seconds to wait after failed try number ``attempt`` (1-based): :func:`planned_wait`'s first value."""
    return planned_wait(policy, attempt, exc, jitter=jitter)[0]


# --------------------------------------------------------------------------- endpoints


def redacted_url(url: str) -> str:
    """``url`` with any user name and password replaced by the one redaction's marker, ``[REDACTED]``
    (:data:`wildtoolbench.models.redaction.REDACTED`, docs/settings.md §8), for messages."""
    import urllib.parse

    from wildtoolbench.models.redaction import REDACTED

    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return "<unparsable URL>"
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{REDACTED}@{host}"))


def base_url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a model endpoint's base URL, or ``None`` (docs/settings.md §7.4).

    A base URL is ``http://`` or ``https://``, a host, an optional port (1-65535) and a path.
    Credentials in it (``https://user:pass@host/v1``) are refused rather than sent: the HTTP
    client would reject them on every request (or send them to every redirect), and a key belongs
    in the provider's key variable (``OPENAI_API_KEY``), which is never written to a run's files.
    The phrase never repeats a user name or password.
    """
    import urllib.parse

    shown = redacted_url(url)
    try:
        parts = urllib.parse.urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        return f"is not a valid URL ({exc}): {shown!r}"
    if parts.scheme not in ("http", "https"):
        return f"must start with http:// or https://, got {shown!r}"
    if parts.username is not None or parts.password is not None:
        return (
            f"must not hold a user name or password ({shown!r}): give the API key in the provider's key "
            "variable (OPENAI_API_KEY for openai:) and the URL without credentials"
        )
    if not parts.hostname:
        return f"has no host: {shown!r}"
    if port == 0:
        return f"has port 0: {shown!r}"
    return None


def probe_endpoint(base_url: str, timeout: float = 5.0) -> str | None:
    """Whether the model endpoint ``base_url`` answers at all: ``None`` when it does, else why not (docs/settings.md §7.6).

    One ``GET <base_url>/models`` without credentials: any HTTP reply (200, 401, 404, 405 ...) proves
    the server is there; only a failure to connect, to resolve the host, to finish TLS, or no reply
    within ``timeout`` seconds counts as unreachable. Nothing is retried.

    Returns:
        ``None``, or a phrase such as ``"connection refused (ConnectError: [Errno 111] Connection refused)"``
        (never the URL's credentials).
    """
    url = base_url.rstrip("/") + "/models"
    try:
        with httpx.Client(timeout=timeout, follow_redirects=False) as client:
            with client.stream("GET", url):
                return None
    except httpx.TimeoutException as exc:
        return f"no reply within {timeout:g} s ({type(exc).__name__})"
    except (httpx.HTTPError, OSError, ValueError) as exc:
        text = str(exc).splitlines()[0] if str(exc) else ""
        kind = "connection refused" if "refused" in text.lower() else "cannot connect"
        return f"{kind} ({type(exc).__name__}{': ' + text[:200] if text else ''})"


# --------------------------------------------------------------------------- accounting


MAX_TOKENS_PER_REPLY = 100_000_000
"""Largest token count one reply may report (far above any model's context); a larger one is not counted."""


def _token_count(value: Any) -> int | None:
    """A provider-reported token count as an ``int``: ``None`` or missing is 0; ``None`` is returned
    for a count that cannot be one (negative, fractional, not a number, above :data:`MAX_TOKENS_PER_REPLY`)."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    count = int(value)
    return count if 0 <= count <= MAX_TOKENS_PER_REPLY else None


@dataclass
class RequestUsage:
    """Model requests of one session (or one generated session).

    Attributes:
        requests: requests that got a reply.
        attempts: tries, failed ones included.
        failed: requests that failed for good.
        input_tokens / output_tokens: provider-reported usage, summed (docs/settings.md §7.5: a count
            that cannot be one is not added, see :meth:`add_tokens`).
        invalid_token_counts: replies whose reported counts were not added.
        capped_waits: retry waits the server asked to be longer than ``max_wait`` (``--max-retry-wait``).
        cache_hits: replies served by the request cache instead of a request (docs/trials.md §8).
        retried: one entry per request that needed more than one try:
            ``{**where, "attempts": n, "errors": [...], "waited": seconds, "ok": bool}``, plus
            ``"retry_after_capped": [seconds asked, ...]`` when a wait was capped.
    """

    requests: int = 0
    attempts: int = 0
    failed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    invalid_token_counts: int = 0
    capped_waits: int = 0
    retried: list[dict[str, Any]] = field(default_factory=list)
    cache_hits: int = 0
    internal: dict[str, list[int]] = field(default_factory=dict)
    """An agent's internal requests by task index: ``[requests, input tokens, output tokens]`` (docs/evaluation.md §8.9)."""

    def add_internal(self, task: Any, requests: int, input_tokens: int, output_tokens: int) -> None:
        """Count an agent's internal requests made for a step of task ``task`` (docs/evaluation.md §8.9)."""
        if requests <= 0:
            return
        counted = self.internal.setdefault(str(task), [0, 0, 0])
        for index, value in enumerate((requests, input_tokens, output_tokens)):
            counted[index] += int(value or 0)

    def add_tokens(self, input_tokens: Any, output_tokens: Any) -> None:
        """Add one reply's token counts (docs/settings.md §7.5).

        A missing count (``None``) adds 0. A count that cannot be one (negative, fractional, NaN, a
        string, more than :data:`MAX_TOKENS_PER_REPLY`) adds 0 for that reply's two counts and
        counts the reply in :attr:`invalid_token_counts` (shown in ``summary.json``), so that one
        broken reply never turns the run's totals and cost into nonsense.
        """
        counts = (_token_count(input_tokens), _token_count(output_tokens))
        if None in counts:
            self.invalid_token_counts += 1
            return
        self.input_tokens += counts[0] or 0
        self.output_tokens += counts[1] or 0

    def as_dict(self) -> dict[str, Any]:
        """Plain-data form (JSON-serialisable)."""
        data = {
            "requests": self.requests,
            "attempts": self.attempts,
            "failed_requests": self.failed,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "retried_requests": [dict(r) for r in self.retried],
        }
        if self.invalid_token_counts:
            data["invalid_token_counts"] = self.invalid_token_counts
        if self.capped_waits:
            data["capped_retry_waits"] = self.capped_waits
        if self.cache_hits:
            data["cache_hits"] = self.cache_hits
        if self.internal:
            totals = [sum(counts[i] for counts in self.internal.values()) for i in range(3)]
            data["agent_internal"] = {
                "requests": totals[0],
                "input_tokens": totals[1],
                "output_tokens": totals[2],
                "by_task": {
                    task: {"requests": c[0], "input_tokens": c[1], "output_tokens": c[2]}
                    for task, c in self.internal.items()
                },
            }
        return data


_usage: contextvars.ContextVar[RequestUsage | None] = contextvars.ContextVar("wtb_request_usage", default=None)


@contextlib.contextmanager
def usage_scope(usage: RequestUsage | None = None) -> Iterator[RequestUsage]:
    """Count the model requests made inside the ``with`` block (and tasks it starts) into ``usage`` (a new one by default)."""
    usage = usage if usage is not None else RequestUsage()
    token = _usage.set(usage)
    try:
        yield usage
    finally:
        _usage.reset(token)


def current_usage() -> RequestUsage | None:
    """The :class:`RequestUsage` of the enclosing :func:`usage_scope`, or ``None``."""
    return _usage.get()


# --------------------------------------------------------------------------- rate limit

_limiters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, float], Any]] = (
    weakref.WeakKeyDictionary()
)


def rate_limiter(key: str, rps: float) -> Any:
    """The ``aiolimiter.AsyncLimiter`` of endpoint ``key`` at ``rps`` requests/s in the running loop, or ``None`` if ``rps <= 0``.

    Requests are spaced evenly (one per ``1 / rps`` seconds, no bursts); every
    caller with the same ``(key, rps)`` in the same event loop shares the limiter.
    """
    if rps <= 0:
        return None
    from aiolimiter import AsyncLimiter

    loop = asyncio.get_running_loop()
    per_loop = _limiters.setdefault(loop, {})
    limiter = per_loop.get((key, rps))
    if limiter is None:
        limiter = per_loop[(key, rps)] = AsyncLimiter(1, 1.0 / rps)
    return limiter


# --------------------------------------------------------------------------- shared HTTP clients

DEFAULT_CONNECTIONS = 100
"""Connections a shared client opens (and keeps alive) at most to one endpoint, when no
:func:`http_clients` scope asks for more (httpx's own default keeps only 20 alive: beyond that,
every request of a busier run would open a new connection)."""

_concurrency: contextvars.ContextVar[int] = contextvars.ContextVar("wtb_http_concurrency", default=0)


class _LoopClients:
    """The shared clients of one event loop and the ``http_clients`` scopes open in it."""

    def __init__(self) -> None:
        self.clients: dict[tuple[Hashable, int], Any] = {}
        self.scopes = 0
        self.hook: Any = None

    async def aclose(self) -> None:
        clients, self.clients = list(self.clients.values()), {}
        for client in clients:
            await client.aclose()


_loop_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopClients] = weakref.WeakKeyDictionary()


async def _close_at_shutdown(loop: asyncio.AbstractEventLoop, entry: _LoopClients) -> AsyncIterator[None]:
    """Parked at its ``yield`` while the loop runs: ``loop.shutdown_asyncgens()`` (``asyncio.run``'s
    last step) closes it, which closes the loop's clients and forgets the loop."""
    try:
        yield
    finally:
        _loop_clients.pop(loop, None)
        entry.hook = None
        await entry.aclose()


async def _entry() -> _LoopClients:
    loop = asyncio.get_running_loop()
    entry = _loop_clients.get(loop)
    if entry is None:
        entry = _loop_clients[loop] = _LoopClients()
        entry.hook = _close_at_shutdown(loop, entry)
        await entry.hook.__anext__()  # the loop's asyncgen hooks register it for shutdown_asyncgens()
    return entry


def pool_size() -> int:
    """Connections per shared client: the concurrency of the enclosing :func:`http_clients` scope,
    at least :data:`DEFAULT_CONNECTIONS` (docs/settings.md §2: sessions in flight)."""
    return max(_concurrency.get(), DEFAULT_CONNECTIONS)


@functools.lru_cache(maxsize=1)
def shared_tls_context() -> ssl.SSLContext:
    """The TLS context the HTTP clients of the models this project builds share, made once per process.

    httpx makes a new one for every client it creates (the CA bundle loaded again: about 28 ms of CPU),
    and a model is built with its own client: an agent that builds its model at each call paid that at
    every request, several times over with sessions running at once (docs/evaluation.md §8). The context
    has httpx's default settings (certifi's bundle; ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` as set when the
    first model is built).
    """
    return httpx.create_ssl_context(trust_env=True)


async def shared_http_client(key: Hashable, factory: Callable[[int], Any]) -> Any:
    """The running event loop's client for endpoint ``key`` (built once by ``factory(connections)``).

    Args:
        key: what identifies the endpoint (e.g. ``(base_url, api_key)``); every caller with an equal
            key in the same loop and the same :func:`pool_size` gets the same client.
        factory: builds an async HTTP client (``httpx.AsyncClient`` or alike: ``is_closed``, ``aclose()``)
            whose pool opens, and keeps alive, up to ``connections`` (:func:`pool_size`) connections.

    Returns:
        The open client, bound to the running loop (never handed to another loop). It is
        closed by the end of the last :func:`http_clients` scope of the loop, else at loop shutdown;
        a later call builds a new one.

    Raises:
        RuntimeError: no running event loop.
    """
    entry = await _entry()
    size = pool_size()
    client = entry.clients.get((key, size))
    if client is None or client.is_closed:
        client = entry.clients[(key, size)] = factory(size)
    return client


@contextlib.asynccontextmanager
async def http_clients(concurrency: int = 0) -> AsyncIterator[None]:
    """Scope of one batch run: shared clients opened inside it have at least ``concurrency``
    connections, and the loop's shared clients are closed when the last such scope ends.

    Args:
        concurrency: requests the run keeps in flight at once (its sessions in flight, docs/settings.md §2);
            0 keeps :data:`DEFAULT_CONNECTIONS`.

    Raises:
        RuntimeError: no running event loop.
    """
    entry = await _entry()
    entry.scopes += 1
    token = _concurrency.set(max(int(concurrency), 0))
    try:
        yield
    finally:
        _concurrency.reset(token)
        entry.scopes -= 1
        if entry.scopes == 0:
            await entry.aclose()


# --------------------------------------------------------------------------- the request


async def request_with_retries(
    send: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    endpoint: str = "",
    where: Mapping[str, Any] | None = None,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
) -> T:
    """Run ``send()`` (one model request) with the retries, waits and rate limit of ``policy``.

    Args:
        send: makes one attempt; called again for each retry.
        policy: attempts, backoff, rate limit and the deadline of each try.
        endpoint: rate-limit key (e.g. the base URL or model spec).
        where: what the request is for; copied into retry records and errors.
        sleep: the wait function (tests may pass a fake).

    Returns:
        What ``send()`` returned on the first successful try.

    Raises:
        ModelRequestError: every try failed, or one failed with a non-transient error.
        an exception whose ``passes_through`` is true (``models.agent_checks.AgentError``): raised as it is.
        asyncio.CancelledError: propagates untouched.
    """
    where = dict(where or {})
    usage = current_usage()
    limiter = rate_limiter(endpoint, policy.rps)
    errors: list[str] = []
    capped: list[float] = []
    waited = 0.0

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        seconds, asked = planned_wait(policy, state.attempt_number, exc)
        if asked is not None and asked > policy.max_wait:
            capped.append(round(asked, 3))
            if usage is not None:
                usage.capped_waits += 1
        return seconds

    def record_wait(state: RetryCallState) -> None:
        nonlocal waited
        waited += state.next_action.sleep if state.next_action else 0.0

    def entry(ok: bool) -> dict[str, Any]:
        made = {**where, "attempts": attempts, "errors": errors, "waited": round(waited, 3), "ok": ok}
        if capped:
            made["retry_after_capped"] = list(capped)
        return made

    retrying = AsyncRetrying(
        stop=stop_after_attempt(policy.max_attempts),
        wait=wait,
        retry=retry_if_exception(lambda exc: transient_kind(exc) is not None),
        before_sleep=record_wait,
        sleep=sleep,
        reraise=True,
    )
    attempts = 0
    try:
        async for attempt in retrying:
            with attempt:
                attempts += 1
                if usage is not None:
                    usage.attempts += 1
                try:
                    if limiter is not None:
                        async with limiter:
                            result = await within_deadline(send, policy.deadline)
                    else:
                        result = await within_deadline(send, policy.deadline)
                except Exception as exc:
                    errors.append(describe_error(exc))
                    raise
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        if usage is not None:
            usage.failed += 1
            usage.retried.append(entry(False))
        if getattr(exc, "passes_through", False):  # an agent's own error (models/agent_checks.py): as it is
            raise
        raise ModelRequestError(attempts, errors, transient_kind(exc) is not None, where, _status_of(exc)) from exc
    if usage is not None:
        usage.requests += 1
        if attempts > 1:
            usage.retried.append(entry(True))
    return result


async def within_deadline(send: Callable[[], Awaitable[T]], deadline: float | None) -> T:
    """``await send()``, cancelled after ``deadline`` seconds (``None``: no deadline).

    The deadline runs from the call to the last byte of the reply, whatever the client does
    meanwhile (connecting, waiting for a pool slot, reading a reply that trickles in).

    Raises:
        DeadlineExceeded: ``send()`` had not finished within ``deadline`` (it is cancelled first).
        Exception: whatever ``send()`` raised, unchanged (a client's own timeout included).
        asyncio.CancelledError: the caller was cancelled (``send()`` is cancelled too).
    """
    if deadline is None:
        return await send()
    task = asyncio.ensure_future(send())
    try:
        done, _ = await asyncio.wait({task}, timeout=deadline)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if done:
        return task.result()
    task.cancel()
    with contextlib.suppress(Exception, asyncio.CancelledError):
        await asyncio.wait({task}, timeout=1.0)  # let it close its connection
    if task.done() and not task.cancelled() and task.exception() is None:
        return task.result()  # it finished while being cancelled
    raise DeadlineExceeded(deadline)
