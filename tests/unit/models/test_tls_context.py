"""Building a model does not build a TLS context (models/transport.py ``shared_tls_context``).

httpx makes a new SSL context for every client it creates, loading the CA bundle again (about 28 ms of CPU);
each ``openai:`` model has its own client, so an agent that builds its model at each call paid that at every
request. The models this project builds share one context per process instead."""

from __future__ import annotations

import ssl

import pytest

from wildtoolbench.models import ModelSettings, resolve_model
from wildtoolbench.models.transport import shared_tls_context

pytestmark = pytest.mark.unit


def test_openai_models_share_one_tls_context(monkeypatch):
    settings = ModelSettings(base_url="http://127.0.0.1:9/v1", max_retries=0)
    resolve_model("openai:m", settings)  # the libraries' own once-per-process contexts (made on import) come first
    made: list[object] = []
    real = ssl.create_default_context

    def counting(*args, **kwargs):
        made.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(ssl, "create_default_context", counting)
    models = [resolve_model("openai:m", settings) for _ in range(5)]
    assert made == []  # before: one context per model (5)
    assert all(model.http_async_client is not None for model in models)
    assert shared_tls_context() is shared_tls_context()


def test_a_client_made_without_the_shared_context_would_make_one(monkeypatch):
    """The narrow pass of the check above: the counter does see a context httpx makes on its own."""
    import httpx

    made: list[object] = []
    real = ssl.create_default_context
    monkeypatch.setattr(ssl, "create_default_context", lambda *a, **k: made.append(a) or real(*a, **k))
    httpx.AsyncClient()
    assert len(made) == 1
