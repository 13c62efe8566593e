"""The ``paraphrase`` control (docs/variants.md §3.5): a model's rewording checked (values and entities
kept, nothing added), its rule ids, and the control beside each effect in ``wtb ablate``. The model is a
``scripted:`` one, its replies keyed by ``<session id>#t<task>``."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tests.support.sensitive_candidates import DATASET_ENV
from wildtoolbench.bench.demo_data import bundled_demo_sessions
from wildtoolbench.cli import app

CANDIDATES = Path(__file__).resolve().parents[1] / "support" / "sensitive_candidates.py"
REPLIES = {
    "wild_tool_bench_0#t0": "I'm looking for economy flights on the 21st from Lisbon to Amsterdam.",
    "wild_tool_bench_0#t1": "Book the morning one for me and my partner.",  # unchanged
    "wild_tool_bench_0#t2": "We'll stay until the 24th. Find us somewhere cheap with breakfast, and check "
    "whether there are any travel warnings for the Netherlands.",  # drops 180
    "wild_tool_bench_0#t3": "We live about 20 minutes from Schiphol. What time should we leave home for our flight?",
    "wild_tool_bench_1#t0": "It's very cold in here. Find the devices in home H-2207 and set every thermostat to "
    "heat at 20.5 degrees.",
}


def wtb(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_paraphrase_variants_are_checked_and_the_control_sits_beside_each_effect(tmp_path, monkeypatch):
    lines = bundled_demo_sessions().read_text(encoding="utf-8").splitlines()[:2]
    dataset = tmp_path / "demo2.jsonl"
    dataset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    script = tmp_path / "paraphrase.jsonl"
    script.write_text(
        "".join(json.dumps({"role": "paraphrase", "session": k, "content": v}) + "\n" for k, v in REPLIES.items()),
        encoding="utf-8",
    )
    out = tmp_path / "variants"
    result = wtb(
        "variants", dataset, "--factors", "names,paraphrase", "--out", out, "--model", f"paraphrase=scripted:{script}"
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    rules = {(e["session"], e["task"]): e["rule"] for e in manifest["skipped"]["paraphrase"]}
    assert rules[("wild_tool_bench_0", 1)] == "paraphrase_empty"
    assert rules[("wild_tool_bench_0", 2)] == "paraphrase_lost"
    assert rules[("wild_tool_bench_0", 3)] == "paraphrase_added"
    assert rules[("wild_tool_bench_1", 1)] == "model_failed"  # the script has no reply for it
    sessions = [json.loads(line) for line in (out / "sessions.jsonl").read_text(encoding="utf-8").splitlines()]
    made = {s["id"]: s for s in sessions if s.get("factor") == "paraphrase"}
    assert set(made) == {"wild_tool_bench_0~paraphrase~t0", "wild_tool_bench_1~paraphrase~t0"}
    assert made["wild_tool_bench_0~paraphrase~t0"]["english_tasks"][0] == REPLIES["wild_tool_bench_0#t0"]
    assert manifest["models"] == {"paraphrase": f"scripted:{script}"}

    monkeypatch.setenv(DATASET_ENV, str(out / "sessions.jsonl"))
    ablate_out = tmp_path / "ablate"
    spec = f"graph:{CANDIDATES}:names_sensitive"
    result = wtb("ablate", "--model", spec, "--variants", out, "--out", ablate_out, "--no-progress")
    assert result.exit_code == 0, result.output
    document = json.loads((ablate_out / "ablate.json").read_text(encoding="utf-8"))
    effects = {e["factor"]: e for e in document["effects"]}
    assert effects["paraphrase"]["pairs"] == 2 and effects["paraphrase"]["difference"] == 0.0
    assert effects["names"]["control"] == {"difference": 0.0, "ci_low": 0.0, "ci_high": 0.0, "p_value": 1.0}
    assert effects["names"]["difference"] == -100.0


def test_a_model_for_a_factor_that_calls_none_is_a_usage_error(tmp_path):
    result = wtb("variants", "--factors", "names", "--out", tmp_path, "--model", "names=local")
    assert result.exit_code == 2 and "unknown role 'names'" in result.output
