"""The review app: a Starlette application over the review database (docs/review.md §2, §9).

Pages (``GET``): ``/`` the queue, ``/session/<pos>`` a session, ``/agreement``, ``/export`` and
``/export/<file>`` (a file of the export, built on request), ``/assets/<file>`` the stylesheet and
script, ``/api/session/<pos>`` a session as JSON. Changes (``POST``, JSON bodies): ``/api/verdict``,
``/api/accept-rest``, ``/api/edit``.

Every request is checked before it reaches a route (docs/review.md §9): its ``Host`` must be the
loopback name or address the server was started on (a page of another site that a DNS trick points at
127.0.0.1 is refused), and a ``POST`` must carry the server's random token in ``X-WTB-Token`` (each page
holds it; a page of another origin cannot read it), a JSON content type, a body of at most
:data:`MAX_BODY` bytes and, when the browser sends one, an ``Origin`` of this server. Every answer
carries a Content Security Policy that allows only this server's own stylesheet and script.
"""

from __future__ import annotations

import hmac
import json
import re
import secrets
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any
from urllib.parse import unquote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from wildtoolbench.review import pages
from wildtoolbench.review.agreement import agreement
from wildtoolbench.review.checks import (
    EditRefused,
    apply_edit,
    check_edit,
    decode_value,
    edit_target,
    finding_json,
    own_findings,
    read_field,
    refused_findings,
)
from wildtoolbench.review.duplicates import refresh_after_edit
from wildtoolbench.review.export import EXPORT_FILES, export_texts, plan_export
from wildtoolbench.review.store import MISSING, ReviewStore, Stale, StoreError, check_reviewer

MAX_BODY = 1_000_000
"""Largest request body accepted, in bytes (docs/review.md §9)."""

TOKEN_HEADER = "x-wtb-token"
"""The request header that carries the server's token on every change (docs/review.md §9)."""

REVIEWER_COOKIE = "wtb_reviewer"
"""The cookie in which the browser keeps the reviewer's name (docs/review.md §4)."""

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
"""The Content Security Policy of every answer (docs/review.md §9)."""

_ASSETS = {"review.css": "text/css; charset=utf-8", "review.js": "text/javascript; charset=utf-8"}
_ICON = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#2457c5"/>'
    '<path d="M4 8.5l2.5 2.5L12 5" stroke="#fff" stroke-width="2" fill="none"/></svg>'
)
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")
"""Host names a loopback server answers to (docs/review.md §9)."""


@dataclass
class ReviewConfig:
    """What the app serves (docs/review.md §2).

    Attributes:
        store: the review database.
        language: the side reviewed (``en`` or ``zh``).
        tasks: tasks per session (the count the dataset's sessions share).
        hosts: the ``Host`` names accepted (without port), ``None`` for any (``--allow-remote``).
        token: the server's request token (random per start).
    """

    store: ReviewStore
    language: str = "en"
    tasks: int = 4
    hosts: tuple[str, ...] | None = LOOPBACK_NAMES
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))


def _error(status: int, message: str, problems: list[tuple[str, str]] | None = None) -> JSONResponse:
    body: dict[str, Any] = {"error": message}
    if problems:
        body["problems"] = [{"field": f, "message": m} for f, m in problems]
    return JSONResponse(body, status_code=status)


_HOST = re.compile(r"(?P<name>\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]{0,252}))(?::(?P<port>[0-9]{1,5}))?")
"""A ``Host`` header: a name or bracketed IPv6 address and an optional port, nothing else (no ``@``, path,
space or second colon; docs/review.md §9)."""


def _host_name(host_header: str) -> str:
    """The name of a well-formed ``Host`` header (lower case, without port), else ``""`` (refused)."""
    found = _HOST.fullmatch(host_header.strip().lower())
    return found.group("name") if found else ""


def _same_origin(origin: str, scheme: str, host_header: str) -> bool:
    """Whether ``origin`` is exactly this server's: the request's scheme and its well-formed ``Host``
    (default ports made explicit on both sides; docs/review.md §9)."""
    default = {"http": "80", "https": "443"}
    parsed = re.fullmatch(r"(?P<scheme>[a-z][a-z0-9+.-]*)://(?P<host>[^/?#\s]+)", origin.strip().lower())
    mine = _HOST.fullmatch(host_header.strip().lower())
    if parsed is None or mine is None:
        return False
    theirs = _HOST.fullmatch(parsed["host"])
    if theirs is None or parsed["scheme"] != scheme.lower():
        return False
    port = default.get(scheme.lower(), "")
    return (theirs["name"], theirs["port"] or port) == (mine["name"], mine["port"] or port)


class Guard:
    """The ASGI middleware of docs/review.md §9: the ``Host`` check, the ``POST`` checks (token, JSON,
    size, ``Origin``) and the security headers of every answer."""

    def __init__(self, app: Any, config: ReviewConfig):
        self.app, self.config = app, config

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        """Check one request and pass it on, or answer it with the refusal (400, 403, 413 or 415)."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            await self._secured(refusal)(scope, receive, send)
            return
        if scope["method"] == "POST":
            body, too_big = b"", False
            while True:
                message = await receive()
                body += message.get("body", b"")
                if len(body) > MAX_BODY:
                    too_big = True
                    break
                if not message.get("more_body"):
                    break
            if too_big:
                await self._secured(_error(413, f"request body over {MAX_BODY} bytes"))(scope, receive, send)
                return
            sent = False

            async def replay() -> dict:
                nonlocal sent
                if sent:
                    return {"type": "http.disconnect"}
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}

            receive = replay

        async def send_secured(message: dict) -> None:
            if message["type"] == "http.response.start":
                extra = [(k.encode(), v.encode()) for k, v in _security_headers().items()]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_secured)

    def _refusal(self, scope: dict, headers: dict[str, str]) -> Response | None:
        config = self.config
        host = _host_name(headers.get("host", ""))
        if not host:
            return PlainTextResponse("refused: a malformed Host header\n", status_code=400)
        if config.hosts is not None and host not in config.hosts:
            return PlainTextResponse(
                "refused: this review server answers only to a loopback Host (127.0.0.1, localhost, ::1)\n",
                status_code=400,
            )
        if scope["method"] not in ("GET", "HEAD", "POST"):
            return PlainTextResponse("method not allowed\n", status_code=405)
        if scope["method"] != "POST":
            return None
        token = headers.get(TOKEN_HEADER, "")
        if not hmac.compare_digest(token.encode(), config.token.encode()):
            return _error(403, "refused: a change needs this server's token (reload the page to get it)")
        if headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            return _error(415, "refused: a change is sent as application/json")
        origin = headers.get("origin")
        if origin is not None and origin != "null":
            if not _same_origin(origin, scope.get("scheme", "http"), headers.get("host", "")):
                return _error(403, f"refused: a change from another origin ({origin})")
        elif origin == "null":
            return _error(403, "refused: a change from an opaque origin")
        return None

    @staticmethod
    def _secured(response: Response) -> Response:
        for key, value in _security_headers().items():
            response.headers[key] = value
        return response


def _security_headers() -> dict[str, str]:
    return {
        "content-security-policy": CONTENT_SECURITY_POLICY,
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
        "x-frame-options": "DENY",
        "cache-control": "no-store",
    }


def _reviewer(request: Request) -> str | None:
    raw = request.cookies.get(REVIEWER_COOKIE)
    if not raw:
        return None
    try:
        return check_reviewer(unquote(raw))
    except ValueError:
        return None


async def _json(request: Request) -> dict[str, Any]:
    try:
        body = json.loads(await request.body())
    except (ValueError, RecursionError):
        raise EditRefused([("(body)", "not JSON")]) from None
    if not isinstance(body, dict):
        raise EditRefused([("(body)", "expected a JSON object")])
    return body


def _int(body: dict[str, Any], key: str) -> int:
    value = body.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise EditRefused([(key, "expected an integer")])
    if not 0 <= value < 2**31:  # a position, a task or a version: never negative, never beyond SQLite's range
        raise EditRefused([(key, "expected a whole number from 0 to 2147483647")])
    return value


def _guarded(handler: Any) -> Any:
    """``handler`` with the store's refusals as JSON errors: stale version 409, refused edit or value 422,
    unknown session 404 (docs/review.md §9)."""

    async def run(request: Request) -> Response:
        try:
            return await handler(request)
        except Stale as exc:
            return _error(409, str(exc))
        except EditRefused as exc:
            return _error(422, f"not saved: {exc}", exc.problems)
        except StoreError as exc:
            return _error(404, str(exc))
        except ValueError as exc:
            return _error(422, f"not saved: {exc}")

    return run


class _Handlers:
    """The review app's request handlers over one store (docs/review.md §2, §9)."""

    def __init__(self, config: ReviewConfig) -> None:
        self.config = config
        self.store = config.store

    async def queue(self, request: Request) -> Response:
        rows = self.store.sessions(light=True)
        page = request.query_params.get("page", "0")
        html = pages.queue_page(
            rows, self.store.verdicts(), token=self.config.token, reviewer=_reviewer(request), meta=self.store.meta(),
            page_number=int(page) if page.isdigit() and len(page) < 7 else 0,
        )  # fmt: skip
        return HTMLResponse(html)

    async def session(self, request: Request) -> Response:
        pos = int(request.path_params["pos"])
        try:
            row = self.store.session(pos)
        except StoreError as exc:
            return PlainTextResponse(f"{exc}\n", status_code=404)
        order = self.store.order()  # positions only: no session is read for the neighbours
        index = order.index(pos)
        neighbours = (order[index - 1] if index > 0 else None, order[index + 1] if index + 1 < len(order) else None)
        html = pages.session_page(
            row,
            self.store.verdicts(pos),
            token=self.config.token,
            reviewer=_reviewer(request),
            language=self.config.language,
            neighbours=neighbours,
            position=(index, len(order)),
        )
        return HTMLResponse(html)

    async def session_json(self, request: Request) -> Response:
        pos = int(request.path_params["pos"])
        try:
            row = self.store.session(pos)
        except StoreError as exc:
            return _error(404, str(exc))
        verdicts = [v.__dict__ for v in self.store.verdicts(pos)]
        return JSONResponse(
            {
                "pos": row.pos,
                "id": row.sid,
                "version": row.version,
                "valid": row.valid,
                "session": row.current,
                "findings": row.findings,
                "verdicts": verdicts,
            }
        )

    async def agreement_view(self, request: Request) -> Response:
        verdicts = self.store.verdicts()
        rows = {row.pos: row for row in self.store.sessions(light=True)}
        html = pages.agreement_page(
            agreement(verdicts), verdicts, rows, token=self.config.token, reviewer=_reviewer(request)
        )
        return HTMLResponse(html)

    async def export_view(self, request: Request) -> Response:
        summary = plan_export(self.store.sessions(light=True), self.store.verdicts())
        html = pages.export_page(summary, token=self.config.token, reviewer=_reviewer(request), files=EXPORT_FILES)
        return HTMLResponse(html)

    async def export_file(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in EXPORT_FILES:
            return PlainTextResponse("no such export file\n", status_code=404)
        texts = export_texts(self.store.sessions(), self.store.verdicts(), self.store.events(), self.store.meta())
        kind = "application/json" if name.endswith(".json") else "application/x-ndjson"
        return Response(
            texts[name],
            media_type=kind,
            headers={"content-disposition": f'attachment; filename="{name}"'},
        )

    async def asset(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in _ASSETS:
            return PlainTextResponse("not found\n", status_code=404)
        text = files("wildtoolbench.review").joinpath("assets", name).read_text(encoding="utf-8")
        return Response(text, media_type=_ASSETS[name])

    async def icon(self, request: Request) -> Response:
        return Response(_ICON, media_type="image/svg+xml")

    async def verdict(self, request: Request) -> Response:
        body = await _json(request)
        saved = self.store.set_verdict(
            _int(body, "pos"),
            _int(body, "task"),
            body.get("reviewer"),  # type: ignore[arg-type]
            str(body.get("verdict")),
            str(body.get("reason") or ""),
            _int(body, "version"),
        )
        return JSONResponse({"saved": saved.__dict__})

    async def accept_rest(self, request: Request) -> Response:
        body = await _json(request)
        pos, version = _int(body, "pos"), _int(body, "version")
        reviewer = check_reviewer(body.get("reviewer"))
        row = self.store.session(pos)
        judged = {v.task for v in self.store.verdicts(pos) if v.reviewer == reviewer}
        tasks = row.current.get("english_tasks")
        count = len(tasks) if isinstance(tasks, list) else 0
        saved = []
        for task in range(count):
            if task not in judged:
                saved.append(self.store.set_verdict(pos, task, reviewer, "accept", "", version).task)
        return JSONResponse({"accepted": saved})

    async def edit(self, request: Request) -> Response:
        body = await _json(request)
        pos, version = _int(body, "pos"), _int(body, "version")
        target = edit_target(str(body.get("path") or ""), self.config.language)
        value = decode_value(body.get("text"), str(body.get("mode") or "json"))  # type: ignore[arg-type]

        def make(current: dict[str, Any]) -> tuple[dict[str, Any], Any, Any, bool, list[dict[str, Any]]]:
            found, old = read_field(current, target.path)
            edited = apply_edit(current, target.path, value)
            problems = check_edit(current, edited, tasks=self.config.tasks, language=self.config.language)
            if problems:
                raise EditRefused(problems)
            findings = own_findings(edited, tasks=self.config.tasks, language=self.config.language)
            added = refused_findings(
                own_findings(current, tasks=self.config.tasks, language=self.config.language), findings
            )
            if added:
                raise EditRefused(added)
            valid = not any(f.kind == "invalid_session" for f in findings)
            return edited, old if found else MISSING, value, valid, [finding_json(f) for f in findings]

        def duplicates(db: Any, edited: dict[str, Any]) -> dict[int, list[dict[str, Any]]]:
            return refresh_after_edit(db, pos, edited, self.config.language)  # only the duplicates it can change

        new_version = self.store.save_edit(
            pos,
            version,
            body.get("reviewer"),  # type: ignore[arg-type]
            path=target.path,
            task=target.task,
            note=str(body.get("note") or ""),
            edit=make,
            duplicates=duplicates,
        )
        row = self.store.session(pos)
        return JSONResponse({"version": new_version, "findings": row.findings, "valid": row.valid})


def create_app(config: ReviewConfig) -> Any:
    """The review app (an ASGI application: Starlette wrapped in :class:`Guard`) over ``config``'s store
    (docs/review.md §2, §9)."""
    handlers = _Handlers(config)
    routes = [
        Route("/", handlers.queue),
        Route("/session/{pos:int}", handlers.session),
        Route("/api/session/{pos:int}", handlers.session_json),
        Route("/agreement", handlers.agreement_view),
        Route("/export", handlers.export_view),
        Route("/export/{name}", handlers.export_file),
        Route("/assets/{name}", handlers.asset),
        Route("/favicon.ico", handlers.icon),
        Route("/api/verdict", _guarded(handlers.verdict), methods=["POST"]),
        Route("/api/accept-rest", _guarded(handlers.accept_rest), methods=["POST"]),
        Route("/api/edit", _guarded(handlers.edit), methods=["POST"]),
    ]
    return Guard(Starlette(routes=routes), config)


__all__ = [
    "CONTENT_SECURITY_POLICY",
    "Guard",
    "LOOPBACK_NAMES",
    "MAX_BODY",
    "REVIEWER_COOKIE",
    "ReviewConfig",
    "TOKEN_HEADER",
    "create_app",
]
