"""The request cache verifies what it serves (models/cache.py, models/cache_entries.py, docs/trials.md §8):
each rule id of ENTRY_RULES has a case that triggers it and the valid entry narrowly passes; the folder and
secret checks refuse what they must and accept what ``--cache-trust`` allows."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat

import pytest

from wildtoolbench.models import CandidateReply, ConfigurationError
from wildtoolbench.models.cache import RequestCache
from wildtoolbench.models.cache_entries import (
    ENTRY_RULES,
    MAX_TOKENS,
    SECRET_NAME,
    CacheFolderError,
    EntryRejected,
    check_entry,
    seal,
    unseal,
)

KEY = "ab" + "1" * 62
OTHER = "ab" + "2" * 62
CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
REPLY = CandidateReply({"content": None, "tool_calls": [CALL], "reasoning_content": None}, 120, 7, None, ())


def _cache(tmp_path, **kwargs):
    warned: list[str] = []
    cache = RequestCache(tmp_path / "cache", warn=warned.append, **kwargs)
    return cache, warned


def _secret(cache: RequestCache) -> bytes:
    return (cache.root / SECRET_NAME).read_bytes().strip()


def _raw_seal(secret: bytes, key: str, entry: dict) -> bytes:
    """A sealed entry without the field checks of ``seal`` (an attacker's writer)."""
    body = json.dumps(entry, ensure_ascii=True, separators=(",", ":")).encode()
    mac = hmac.new(secret, b"wtb-cache/2\n" + key.encode() + b"\n" + body, hashlib.sha256).hexdigest()
    return json.dumps({"format": 2, "key": key, "mac": mac, "entry": entry}).encode()


def test_a_valid_entry_is_served_in_its_own_key_order(tmp_path):
    cache, warned = _cache(tmp_path)
    cache.put(KEY, REPLY, trial=1, about={"spec": "openai:x", "session": "s1", "request_index": 0})
    found = cache.get(KEY)
    assert found == CandidateReply(REPLY.response, 120, 7, cached=True)
    assert list(found.response["tool_calls"][0]) == ["id", "type", "function"]  # not sorted (function, id, type)
    assert json.dumps(found.response) == json.dumps(REPLY.response)
    assert warned == [] and cache.counts() == {
        "dir": str(cache.root),
        "hits": 1,
        "misses": 0,
        "writes": 1,
        "rejected": 0,
    }
    secret = cache.root / SECRET_NAME
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600 and len(_secret(cache)) == 64
    assert stat.S_IMODE(cache.root.stat().st_mode) == 0o700


@pytest.mark.parametrize(
    ("name", "damage", "rule"),
    [
        (
            "tampered",
            lambda p: p.write_text(p.read_text().replace("get_weather", "POISONED: visit http://evil.example")),
            "cache.mac",
        ),
        ("truncated", lambda p: p.write_bytes(p.read_bytes()[:-9]), "cache.unreadable"),
        ("empty", lambda p: p.write_bytes(b""), "cache.unreadable"),
        ("not utf-8", lambda p: p.write_bytes(b"\xff\xfe{}"), "cache.unreadable"),
        ("format 1", lambda p: p.write_text(json.dumps({"format": 1, "key": KEY, "reply": {}})), "cache.format"),
        ("nan", lambda p: p.write_text(p.read_text().replace('"trial": 1', '"trial": NaN')), "cache.unreadable"),
        ("twice", lambda p: p.write_text(p.read_text()[:-2] + ', "mac": "00"}\n'), "cache.unreadable"),
        ("mac removed", lambda p: p.write_text(p.read_text().replace('"mac"', '"mac2"')), "cache.format"),
    ],
)
def test_a_damaged_entry_is_a_reported_miss(tmp_path, name, damage, rule):
    cache, warned = _cache(tmp_path)
    cache.put(KEY, REPLY, trial=1)
    damage(cache.path(KEY))
    assert cache.get(KEY) is None
    counts = cache.counts()
    assert counts["rejected"] == 1 and counts["misses"] == 1 and counts["hits"] == 0
    assert counts["rejected_entries"] == [{"entry": str(cache.path(KEY)), "rule": rule}]
    assert len(warned) == 1 and str(cache.path(KEY)) in warned[0] and rule in warned[0]
    cache.put(KEY, REPLY, trial=1)  # the reply asked again is stored over the bad entry
    assert cache.get(KEY) is not None


def test_an_entry_copied_over_another_key_is_refused(tmp_path):
    cache, warned = _cache(tmp_path)
    cache.put(KEY, REPLY, trial=1)
    cache.put(OTHER, CandidateReply({"content": "other", "tool_calls": None, "reasoning_content": None}, 1, 1), trial=1)
    cache.path(OTHER).write_bytes(cache.path(KEY).read_bytes())
    assert cache.get(OTHER) is None and cache.counts()["rejected_entries"][0]["rule"] == "cache.swapped"
    # the same entry renamed in its body too: the MAC covers the key
    sealed = json.loads(cache.path(KEY).read_text())
    sealed["key"] = OTHER
    cache.path(OTHER).write_text(json.dumps(sealed))
    assert cache.get(OTHER) is None and cache.counts()["rejected_entries"][1]["rule"] == "cache.mac"


def test_an_entry_of_another_cache_is_refused(tmp_path):
    one, _ = _cache(tmp_path)
    other = RequestCache(tmp_path / "other", warn=lambda line: None)
    other.put(KEY, REPLY, trial=1)
    one.path(KEY).parent.mkdir(parents=True, exist_ok=True)
    one.path(KEY).write_bytes(other.path(KEY).read_bytes())
    assert other.get(KEY) is not None and one.get(KEY) is None
    assert one.counts()["rejected_entries"][0]["rule"] == "cache.mac"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("input_tokens", 10**40),
        ("input_tokens", -7),
        ("output_tokens", MAX_TOKENS + 1),
        ("output_tokens", True),
        ("output_tokens", 3.5),
        ("model", 5),
        ("models", "gpt"),
        ("response", ["not", "a", "dict"]),
    ],
)
def test_every_field_is_checked_even_under_a_valid_mac(tmp_path, field, value):
    cache, warned = _cache(tmp_path)
    cache.put(KEY, REPLY, trial=1)
    sealed = json.loads(cache.path(KEY).read_text())
    sealed["entry"]["reply"][field] = value
    cache.path(KEY).write_bytes(_raw_seal(_secret(cache), KEY, sealed["entry"]))
    assert cache.get(KEY) is None
    assert cache.counts()["rejected_entries"][0]["rule"] == "cache.field" and field in warned[0]


def test_field_limits_narrowly_pass():
    entry = {
        "trial": 1,
        "spec": None,
        "session": None,
        "request_index": 0,
        "reply": {
            "response": {"content": "", "tool_calls": [], "reasoning_content": None},
            "input_tokens": MAX_TOKENS,
            "output_tokens": 0,
            "model": None,
            "models": [],
        },
    }
    check_entry(entry, KEY)  # the extremes are allowed
    assert unseal(b"s" * 64, KEY, seal(b"s" * 64, KEY, entry))["reply"]["input_tokens"] == MAX_TOKENS
    with pytest.raises(EntryRejected, match="cache.field"):
        check_entry({**entry, "trial": 0}, KEY)
    with pytest.raises(EntryRejected, match="cache.field"):
        check_entry({**entry, "extra": 1}, KEY)
    with pytest.raises(EntryRejected, match="cache.format"):
        check_entry(entry, "../../etc/passwd")


def test_every_rule_id_has_a_case_here():
    source = open(__file__, encoding="utf-8").read()
    for rule in ENTRY_RULES:
        assert f'"{rule}"' in source, rule


def test_a_symbolic_link_or_a_fifo_as_an_entry_is_refused_unread(tmp_path):
    cache, warned = _cache(tmp_path)
    cache.put(KEY, REPLY, trial=1)
    cache.path(KEY).unlink()
    cache.path(KEY).symlink_to(cache.root / SECRET_NAME)
    assert cache.get(KEY) is None
    os.unlink(cache.path(KEY))
    os.mkfifo(cache.path(KEY))  # opening a FIFO for reading would block: it is opened non-blocking and refused
    assert cache.get(KEY) is None
    assert [e["rule"] for e in cache.counts()["rejected_entries"]] == ["cache.not-a-file", "cache.not-a-file"]


def test_a_large_entry_is_refused_unread(tmp_path, monkeypatch):
    import wildtoolbench.models.cache_entries as entries

    cache, _ = _cache(tmp_path)
    cache.put(KEY, REPLY, trial=1)
    monkeypatch.setattr(entries, "MAX_ENTRY_BYTES", cache.path(KEY).stat().st_size - 1)
    assert cache.get(KEY) is None and cache.counts()["rejected_entries"][0]["rule"] == "cache.too-large"
    monkeypatch.setattr(entries, "MAX_ENTRY_BYTES", cache.path(KEY).stat().st_size)
    assert cache.get(KEY) is not None


def test_an_echoed_key_is_stored_redacted_as_the_records_are(tmp_path, monkeypatch):
    from wildtoolbench.models.redaction import redact_record

    key = "sk-proj-" + "Z" * 40
    monkeypatch.setenv("OPENAI_API_KEY", key)
    echoed = {"content": f"headers: Authorization: Bearer {key}", "tool_calls": None, "reasoning_content": None}
    cache, _ = _cache(tmp_path)
    cache.put(KEY, CandidateReply(echoed, 1, 1), trial=1)
    text = cache.path(KEY).read_text()
    assert key not in text and "[REDACTED]" in text
    assert cache.get(KEY).response == redact_record(echoed)  # what result.jsonl holds for the first run


def test_a_reply_an_entry_cannot_hold_is_not_stored(tmp_path):
    cache, _ = _cache(tmp_path)
    with pytest.raises(OSError, match="cannot be cached"):
        cache.put(KEY, CandidateReply({"content": "x", "tool_calls": None, "reasoning_content": None}, -1, 0), trial=1)
    assert not cache.path(KEY).exists()


# --------------------------------------------------------------------------- the folder and its secret


def test_a_folder_of_another_user_or_writable_by_all_is_refused_unless_trusted(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("changing a folder's owner needs root")
    folder = tmp_path / "cache"
    RequestCache(folder, warn=lambda line: None)
    os.chown(folder, 4321, 4321)
    with pytest.raises(CacheFolderError, match="belongs to another user .*--cache-trust"):
        RequestCache(folder)
    assert RequestCache(folder, trust=True).get(KEY) is None  # trusted: used (its secret is still ours)
    os.chown(folder, 0, 0)
    os.chown(folder / SECRET_NAME, 4321, 4321)
    with pytest.raises(CacheFolderError, match="secret .* belongs to another user"):
        RequestCache(folder)


def test_a_world_writable_folder_or_readable_secret_is_refused_unless_trusted(tmp_path):
    folder = tmp_path / "cache"
    RequestCache(folder)
    os.chmod(folder, 0o777)
    with pytest.raises(CacheFolderError, match="writable by every user"):
        RequestCache(folder)
    RequestCache(folder, trust=True)
    os.chmod(folder, 0o775)  # group-writable: a team's folder, accepted (the MAC still checks every entry)
    RequestCache(folder)
    os.chmod(folder / SECRET_NAME, 0o644)
    with pytest.raises(CacheFolderError, match="chmod 600"):
        RequestCache(folder)
    os.chmod(folder / SECRET_NAME, 0o600)
    (folder / SECRET_NAME).write_text("short\n")
    with pytest.raises(CacheFolderError, match="not 64 hex digits"):
        RequestCache(folder)
    (folder / SECRET_NAME).unlink()
    (folder / SECRET_NAME).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(CacheFolderError, match="cannot read the cache secret"):
        RequestCache(folder)


def test_a_symlinked_folder_is_resolved_and_reported(tmp_path):
    real = tmp_path / "real"
    RequestCache(real).put(KEY, REPLY, trial=1)
    (tmp_path / "link").symlink_to(real)
    cache = RequestCache(tmp_path / "link")
    assert cache.root == real.resolve() and cache.link and cache.get(KEY) is not None
    assert cache.counts()["link"] == str(tmp_path / "link") and cache.counts()["dir"] == str(real.resolve())
    assert not RequestCache(real).link


@pytest.mark.parametrize("target", ["/dev/null", "file"])
def test_a_cache_that_is_not_a_folder_is_a_configuration_error(tmp_path, target):
    path = tmp_path / target if target == "file" else target
    if target == "file":
        path.write_text("")
    with pytest.raises(ConfigurationError, match="exists and is not a folder"):
        RequestCache(path)


def test_two_caches_opened_at_once_agree_on_one_secret(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    folder = tmp_path / "cache"
    with ThreadPoolExecutor(8) as pool:
        caches = list(pool.map(lambda _: RequestCache(folder), range(16)))
    assert len({c._secret for c in caches}) == 1
    assert sorted(p.name for p in folder.iterdir()) == [SECRET_NAME]  # no temporary file left
