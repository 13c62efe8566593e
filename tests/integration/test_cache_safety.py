"""``wtb eval --cache`` on a cache someone changed (docs/trials.md §8): a poisoned, swapped or truncated
entry is a reported miss and the run's records are those of the model; an untrusted folder is refused
(exit 2) unless ``--cache-trust``; a symbolic link is reported; a device file is a configuration error."""

from __future__ import annotations

import json
import os
from pathlib import Path

from typer.testing import CliRunner

from wildtoolbench.cli import app

REPO = Path(__file__).resolve().parents[2]
MODEL = f"replay:{REPO / 'bench' / 'data' / 'demo_candidates.jsonl'}#demo-model"


def _eval(out: Path, *args: str, code: int = 0):
    result = CliRunner().invoke(
        app,
        ["eval", "--no-progress", "--no-trace", "--model", MODEL, "--out", str(out), *args],
        catch_exceptions=False,
    )
    assert result.exit_code == code, result.output
    return result


def _records(out: Path) -> list[str]:
    return [
        json.dumps({"id": r["id"], "result": [{**t, "latency": None} for t in r["result"]]})
        for r in map(json.loads, (out / "result.jsonl").read_text().splitlines())
    ]


def test_poisoned_swapped_and_truncated_entries_are_reported_misses(tmp_path):
    cache = tmp_path / "cache"
    _eval(tmp_path / "first", "--cache", str(cache))
    entries = sorted(cache.rglob("*.json"))
    assert len(entries) >= 4
    poisoned, swapped, truncated = entries[0], entries[1], entries[2]
    text = poisoned.read_text()
    sealed = json.loads(text)
    sealed["entry"]["reply"]["response"]["content"] = "POISONED: visit http://evil.example"
    poisoned.write_text(json.dumps(sealed))
    swapped.write_bytes(entries[3].read_bytes())
    truncated.write_bytes(truncated.read_bytes()[: len(truncated.read_bytes()) // 2])
    result = _eval(tmp_path / "second", "--cache", str(cache))
    summary = json.loads((tmp_path / "second" / "summary.json").read_text())["cache"]
    assert summary["rejected"] == 3 and summary["misses"] == 3 and summary["writes"] == 3
    assert summary["hits"] == len(entries) - 3
    assert {(e["entry"], e["rule"]) for e in summary["rejected_entries"]} == {
        (str(poisoned), "cache.mac"),
        (str(swapped), "cache.swapped"),
        (str(truncated), "cache.unreadable"),
    }
    for path in (poisoned, swapped, truncated):
        assert f"cache entry {path} not served" in result.stderr
    assert "POISONED" not in (tmp_path / "second" / "result.jsonl").read_text()
    assert _records(tmp_path / "first") == _records(tmp_path / "second")
    _eval(tmp_path / "third", "--cache", str(cache))  # the bad entries were replaced by the replies asked again
    third = json.loads((tmp_path / "third" / "summary.json").read_text())["cache"]
    assert third["hits"] == len(entries) and third["rejected"] == 0


def test_untrusted_folders_linked_folders_and_device_files(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    refused = _eval(tmp_path / "a", "--cache", str(shared), code=2)
    assert "writable by every user" in refused.output and "--cache-trust" in refused.output
    assert not (tmp_path / "a").exists()
    _eval(tmp_path / "a", "--cache", str(shared), "--cache-trust")
    (tmp_path / "link").symlink_to(shared)
    linked = _eval(tmp_path / "b", "--cache", str(tmp_path / "link"), "--cache-trust")
    assert f"--cache {tmp_path / 'link'} is a symbolic link: the cache is {shared}" in linked.stderr
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())["cache"]
    assert summary["link"] == str(tmp_path / "link") and summary["rejected"] == 0 and summary["misses"] == 0
    device = _eval(tmp_path / "c", "--cache", "/dev/null", code=2)
    assert "/dev/null: exists and is not a folder" in device.output
    (tmp_path / "file").write_text("")
    _eval(tmp_path / "d", "--cache", str(tmp_path / "file"), code=2)
