"""A loopback stand-in for the LangSmith API, for offline tests of tracing and experiments.

:class:`LangSmithStub` listens on ``127.0.0.1`` (a free port), records every request the
``langsmith`` SDK sends and answers the endpoints the SDK needs from an in-memory store:

- ``GET /info`` (no ``zstd_compression_enabled`` flag, so the SDK sends multipart uncompressed;
  zstd bodies are still decoded if a future SDK compresses anyway);
- run ingestion: ``POST /runs/multipart`` (parts ``post.<id>``, ``patch.<id>``, ``<op>.<id>.inputs``, ...,
  ``feedback.<id>``), ``POST /runs/batch`` (``{"post": [...], "patch": [...]}``), ``POST /runs``,
  ``PATCH /runs/<id>``;
- datasets (``/datasets``), examples (``/examples``, ``/examples/bulk`` and the multipart
  ``/v1/platform/datasets/<id>/examples``), experiments (``/sessions``) and feedback (``/feedback``).

Runs are merged per id (a ``patch`` updates the fields of its ``post``), so :attr:`runs` holds one
dict per run as the LangSmith UI would show it. The server stops when the context manager exits, and
by itself after ``lifetime`` seconds in any case (bounded).
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import threading
import uuid
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

_TENANT = "00000000-0000-4000-8000-000000000001"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def decode_body(body: bytes, headers: dict[str, str]) -> bytes:
    """Undo ``Content-Encoding`` (zstd or gzip) so the recorded payload is plain text."""
    encoding = headers.get("content-encoding", "").lower()
    if encoding == "zstd":
        import zstandard

        return zstandard.ZstdDecompressor().decompressobj().decompress(body)
    if encoding == "gzip":
        import gzip

        return gzip.decompress(body)
    return body


def parse_multipart(body: bytes, content_type: str) -> list[tuple[str, bytes]]:
    """Split a ``multipart/form-data`` body into ``(part name, payload bytes)`` pairs, in order."""
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    parts = []
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        parts.append((str(name), part.get_payload(decode=True) or b""))
    return parts


class LangSmithStub:
    """Recording LangSmith API on loopback. Use as a context manager; read :attr:`url`.

    Attributes:
        url: base URL to put in ``LANGSMITH_ENDPOINT``.
        requests: every request as ``{"method", "path", "query", "headers", "body"}`` (body decoded text).
        runs: run id -> merged run dict (``name``, ``run_type``, ``parent_run_id``, ``trace_id``,
            ``inputs``, ``outputs``, ``extra`` (with ``metadata``), ``tags``, ``error``, ...).
        datasets, examples, sessions, feedback: the in-memory store, keyed by id.
        example_create_calls: number of example-creation requests received.
    """

    def __init__(self, lifetime: float = 300.0) -> None:
        self.lifetime = lifetime
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.runs: dict[str, dict[str, Any]] = {}
        self._run_ops: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        self.datasets: dict[str, dict[str, Any]] = {}
        self.examples: dict[str, dict[str, Any]] = {}
        self.sessions: dict[str, dict[str, Any]] = {}
        self.feedback: dict[str, dict[str, Any]] = {}
        self.example_create_calls = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None
        self.url = ""

    # -- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> LangSmithStub:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                body = decode_body(raw, headers)
                split = urlsplit(self.path)
                query = {k: v if len(v) > 1 else v[0] for k, v in parse_qs(split.query).items()}
                with stub.lock:
                    stub.requests.append(
                        {
                            "method": self.command,
                            "path": split.path,
                            "query": query,
                            "headers": headers,
                            "body": body.decode("utf-8", errors="replace"),
                        }
                    )
                try:
                    status, payload = stub.route(self.command, split.path, query, headers, body)
                except Exception as exc:  # a stub bug must show up as a failing request, not a hang
                    status, payload = 500, {"detail": f"stub error: {exc!r}"}
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self._timer = threading.Timer(self.lifetime, self._server.shutdown)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._timer:
            self._timer.cancel()
        if self._server:
            self._server.shutdown()
            self._server.server_close()
        if self._thread:
            self._thread.join(timeout=10)

    # -- helpers for assertions ------------------------------------------------------------------
    def all_payload_text(self) -> str:
        """Every request body (decoded) joined, for "secret appears nowhere" checks."""
        with self.lock:
            return "\n".join(r["body"] for r in self.requests)

    def all_header_text(self, exclude: tuple[str, ...] = ()) -> str:
        """Every request header value except the names in ``exclude`` (lower case), joined."""
        with self.lock:
            return "\n".join(f"{k}: {v}" for r in self.requests for k, v in r["headers"].items() if k not in exclude)

    def run_ingest_requests(self) -> list[dict[str, Any]]:
        """The requests that carried runs (multipart or batch or single)."""
        with self.lock:
            return [r for r in self.requests if r["path"].startswith("/runs")]

    def children(self, run_id: str) -> list[dict[str, Any]]:
        """Runs whose ``parent_run_id`` is ``run_id``, in start-time order."""
        kids = [r for r in self.runs.values() if str(r.get("parent_run_id")) == str(run_id)]
        return sorted(kids, key=lambda r: str(r.get("dotted_order") or r.get("start_time")))

    def descendants(self, run_id: str) -> list[dict[str, Any]]:
        """Every run below ``run_id`` (depth first)."""
        out = []
        for kid in self.children(run_id):
            out.append(kid)
            out.extend(self.descendants(kid["id"]))
        return out

    def roots(self) -> list[dict[str, Any]]:
        """Runs without a parent."""
        return [r for r in self.runs.values() if not r.get("parent_run_id")]

    # -- run store --------------------------------------------------------------------------------
    def _merge_run(self, op: str, run: dict[str, Any]) -> None:
        """Record one ``post`` / ``patch`` of a run and rebuild its merged view.

        The SDK sends batches from several threads and this server answers them concurrently, so a
        run's ``patch`` (end time, outputs) can arrive before its ``post``. The merged view is
        therefore rebuilt in a fixed order, whatever the arrival order: the posts, then the patches
        (a patch's ``None`` fields do not erase what the post said).
        """
        run_id = str(run.get("id"))
        ops = self._run_ops.setdefault(run_id, [])
        ops.append((op, run))
        merged: dict[str, Any] = {"id": run_id}
        for kind, payload in sorted(ops, key=lambda item: item[0] != "post"):  # stable: posts first
            for key, value in payload.items():
                if value is None and kind == "patch":
                    continue
                if key == "extra" and isinstance(value, dict) and isinstance(merged.get("extra"), dict):
                    extra = dict(merged["extra"])
                    for k, v in value.items():
                        if k == "metadata" and isinstance(v, dict):
                            extra["metadata"] = {**extra.get("metadata", {}), **v}
                        else:
                            extra[k] = v
                    merged["extra"] = extra
                else:
                    merged[key] = value
        merged["_ops"] = [kind for kind, _ in ops]
        self.runs[run_id] = merged

    def _ingest_multipart(self, body: bytes, content_type: str) -> None:
        pending: dict[tuple[str, str], dict[str, Any]] = {}
        order: list[tuple[str, str]] = []
        for name, payload in parse_multipart(body, content_type):
            pieces = name.split(".")
            kind = pieces[0]
            if kind in ("post", "patch"):
                key = (kind, pieces[1])
                if key not in pending:
                    pending[key] = {"id": pieces[1]}
                    order.append(key)
                value = json.loads(payload) if payload else None
                if len(pieces) == 2:
                    pending[key].update(value or {})
                else:
                    pending[key][pieces[2]] = value
            elif kind == "feedback":
                item = json.loads(payload)
                item.setdefault("id", pieces[1])
                self.feedback[str(item["id"])] = item
            # attachments are ignored
        with self.lock:
            for key in order:
                self._merge_run(key[0], pending[key])

    # -- routing ----------------------------------------------------------------------------------
    def route(
        self, method: str, path: str, query: dict[str, Any], headers: dict[str, str], body: bytes
    ) -> tuple[int, Any]:
        """Answer one request from the in-memory store: ``(status, JSON payload)``."""
        parts = [p for p in path.split("/") if p]
        if parts and parts[0] == "api" and len(parts) > 1 and parts[1] == "v1":
            parts = parts[2:]  # tolerate an /api/v1 prefix in LANGSMITH_ENDPOINT
        content_type = headers.get("content-type", "")
        if parts == ["info"]:
            return 200, {
                "version": "0.0.0-stub",
                "instance_flags": {"dataset_examples_multipart_enabled": True, "zstd_compression_enabled": True},
                "batch_ingest_config": {
                    "use_multipart_endpoint": True,
                    "scale_up_qsize_trigger": 1000,
                    "scale_up_nthreads_limit": 4,
                    "scale_down_nempty_trigger": 4,
                    "size_limit": 100,
                    "size_limit_bytes": 20_971_520,
                },
            }
        if parts[:1] == ["runs"]:
            return self._route_runs(method, parts, body, content_type)
        if parts[:1] == ["datasets"]:
            return self._route_datasets(method, parts, query, body)
        if parts[:3] == ["v1", "platform", "datasets"] and parts[4:] == ["examples"] and method == "POST":
            return self._create_examples_multipart(parts[3], body, content_type)
        if parts[:1] == ["examples"]:
            return self._route_examples(method, parts, query, body)
        if parts[:1] == ["sessions"]:
            return self._route_sessions(method, parts, query, body)
        if parts[:1] == ["feedback"]:
            if method == "POST":
                item = json.loads(body)
                item.setdefault("id", str(uuid.uuid4()))
                with self.lock:
                    self.feedback[str(item["id"])] = item
                return 200, item
            if method == "GET":
                return 200, list(self.feedback.values())
        return 404, {"detail": f"stub: no route for {method} {path}"}

    def _route_runs(self, method: str, parts: list[str], body: bytes, content_type: str) -> tuple[int, Any]:
        if parts == ["runs", "multipart"] and method == "POST":
            self._ingest_multipart(body, content_type)
            return 202, {}
        if parts == ["runs", "batch"] and method == "POST":
            batch = json.loads(body)
            with self.lock:
                for op in ("post", "patch"):
                    for run in batch.get(op) or []:
                        self._merge_run(op, run)
            return 202, {}
        if parts == ["runs"] and method == "POST":
            with self.lock:
                self._merge_run("post", json.loads(body))
            return 202, {}
        if len(parts) == 2 and method == "PATCH":
            run = json.loads(body)
            run["id"] = parts[1]
            with self.lock:
                self._merge_run("patch", run)
            return 202, {}
        if len(parts) == 2 and method == "GET" and parts[1] in self.runs:
            return 200, self._public_run(self.runs[parts[1]])
        return 404, {"detail": "stub: unknown run route"}

    @staticmethod
    def _public_run(run: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in run.items() if not k.startswith("_")}
        out.setdefault("run_type", "chain")
        out.setdefault("start_time", _now())
        out.setdefault("inputs", {})
        return out

    def _dataset_json(self, ds: dict[str, Any]) -> dict[str, Any]:
        count = sum(1 for e in self.examples.values() if e["dataset_id"] == ds["id"])
        return {**ds, "example_count": count, "session_count": 0, "modified_at": ds["created_at"]}

    def _route_datasets(self, method: str, parts: list[str], query: dict[str, Any], body: bytes) -> tuple[int, Any]:
        if parts == ["datasets"] and method == "POST":
            data = json.loads(body)
            with self.lock:
                if any(d["name"] == data["name"] for d in self.datasets.values()):
                    return 409, {"detail": "Dataset with this name already exists."}
                ds_id = str(data.get("id") or uuid.uuid4())
                ds = {
                    "id": ds_id,
                    "name": data["name"],
                    "description": data.get("description"),
                    "data_type": data.get("data_type") or "kv",
                    "metadata": data.get("extra", {}).get("metadata") if data.get("extra") else None,
                    "inputs_schema_definition": data.get("inputs_schema_definition"),
                    "outputs_schema_definition": data.get("outputs_schema_definition"),
                    "created_at": _now(),
                    "tenant_id": _TENANT,
                }
                self.datasets[ds_id] = ds
                return 200, self._dataset_json(ds)
        if parts == ["datasets"] and method == "GET":
            items = list(self.datasets.values())
            if "name" in query:
                items = [d for d in items if d["name"] == query["name"]]
            if "id" in query:
                ids = query["id"] if isinstance(query["id"], list) else [query["id"]]
                items = [d for d in items if d["id"] in ids]
            offset = int(query.get("offset", 0))
            limit = int(query.get("limit", 100))
            return 200, [self._dataset_json(d) for d in items[offset : offset + limit]]
        if len(parts) == 2 and method == "GET":
            ds = self.datasets.get(parts[1])
            return (200, self._dataset_json(ds)) if ds else (404, {"detail": "dataset not found"})
        if len(parts) >= 3 and parts[2] == "versions":
            return 200, {"tags": [], "as_of": _now()}
        if len(parts) == 3 and parts[2] == "share":
            return 404, {"detail": "not shared"}
        return 404, {"detail": "stub: unknown dataset route"}

    def _store_example(self, dataset_id: str, data: dict[str, Any]) -> str | None:
        ex_id = str(data.get("id") or uuid.uuid4())
        if ex_id in self.examples:
            return None  # duplicate id: a real server answers 409
        self.examples[ex_id] = {
            "id": ex_id,
            "dataset_id": str(dataset_id),
            "inputs": data.get("inputs") or {},
            "outputs": data.get("outputs"),
            "metadata": data.get("metadata"),
            "split": data.get("split"),
            "created_at": _now(),
            "modified_at": _now(),
        }
        return ex_id

    def _create_examples_multipart(self, dataset_id: str, body: bytes, content_type: str) -> tuple[int, Any]:
        items: dict[str, dict[str, Any]] = {}
        for name, payload in parse_multipart(body, content_type):
            ex_id, _, field = name.partition(".")
            entry = items.setdefault(ex_id, {"id": ex_id})
            value = json.loads(payload) if payload else None
            if not field:
                entry.update(value or {})
            elif field in ("inputs", "outputs"):
                entry[field] = value
        with self.lock:
            self.example_create_calls += 1
            if any(i in self.examples for i in items):
                return 409, {"detail": "example already exists"}
            ids = [self._store_example(dataset_id, e) for e in items.values()]
        return 201, {"example_ids": ids, "count": len(ids), "as_of": _now()}

    def _route_examples(self, method: str, parts: list[str], query: dict[str, Any], body: bytes) -> tuple[int, Any]:
        if parts in (["examples"], ["examples", "bulk"]) and method == "POST":
            data = json.loads(body)
            batch = data if isinstance(data, list) else [data]
            with self.lock:
                self.example_create_calls += 1
                if any(str(e.get("id")) in self.examples for e in batch if e.get("id")):
                    return 409, {"detail": "example already exists"}
                ids = [self._store_example(e["dataset_id"], e) for e in batch]
            stored = [self.examples[i] for i in ids if i]
            return 200, stored if isinstance(data, list) else stored[0]
        if parts == ["examples"] and method == "GET":
            items = list(self.examples.values())
            if "dataset" in query:
                items = [e for e in items if e["dataset_id"] == query["dataset"]]
            if "id" in query:
                ids = query["id"] if isinstance(query["id"], list) else [query["id"]]
                items = [e for e in items if e["id"] in ids]
            items.sort(key=lambda e: e["id"])
            offset = int(query.get("offset", 0))
            limit = int(query.get("limit", 100))
            return 200, items[offset : offset + limit]
        if len(parts) == 2 and method == "GET":
            ex = self.examples.get(parts[1])
            return (200, ex) if ex else (404, {"detail": "example not found"})
        return 404, {"detail": "stub: unknown example route"}

    def _route_sessions(self, method: str, parts: list[str], query: dict[str, Any], body: bytes) -> tuple[int, Any]:
        if parts == ["sessions"] and method == "POST":
            data = json.loads(body)
            with self.lock:
                if any(s["name"] == data["name"] for s in self.sessions.values()):
                    return 409, {"detail": "Session already exists."}
                sid = str(data.get("id") or uuid.uuid4())
                session = {
                    "id": sid,
                    "name": data["name"],
                    "description": data.get("description"),
                    "reference_dataset_id": data.get("reference_dataset_id"),
                    "extra": data.get("extra"),
                    "start_time": data.get("start_time") or _now(),
                    "end_time": data.get("end_time"),
                    "tenant_id": _TENANT,
                }
                self.sessions[sid] = session
            return 200, session
        if parts == ["sessions"] and method == "GET":
            items = list(self.sessions.values())
            if "name" in query:
                items = [s for s in items if s["name"] == query["name"]]
            if "reference_dataset" in query:
                items = [s for s in items if s.get("reference_dataset_id") == query["reference_dataset"]]
            return 200, items
        if len(parts) == 2 and parts[1] in self.sessions:
            session = self.sessions[parts[1]]
            if method == "PATCH":
                data = json.loads(body)
                with self.lock:
                    for key, value in data.items():
                        if key == "extra" and isinstance(value, dict):
                            session["extra"] = {**(session.get("extra") or {}), **value}
                        elif value is not None:
                            session[key] = value
            return 200, session
        return 404, {"detail": "stub: unknown session route"}
