"""``wtb variants`` and ``wtb ablate`` end to end on the reference sessions (docs/variants.md §4, §6):
candidates sensitive to one factor only (tests/support/sensitive_candidates.py) show that factor's
effect (interval excluding 0, right sign) and no effect of the others (intervals including 0)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.sensitive_candidates import DATASET_ENV
from wildtoolbench.cli import app

CANDIDATES = Path(__file__).resolve().parents[1] / "support" / "sensitive_candidates.py"
EFFECT_KEYS = {
    "factor",
    "level",
    "pairs",
    "origin_accuracy",
    "variant_accuracy",
    "difference",
    "ci_low",
    "ci_high",
    "p_value",
}


def wtb(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def variant_dir(reference_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("variants")
    result = wtb("variants", reference_dir / "sessions.jsonl", "--out", out, "--levels", "transitions=-1,+1")
    assert result.exit_code == 0, result.output
    return out


def test_variants_writes_a_set_that_validates(variant_dir: Path):
    manifest = json.loads((variant_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["factors"] == ["names", "distractors", "explicit", "transitions"]
    assert set(manifest["counts"]["transitions"]) == {"-1", "+1"}
    assert manifest["task_counts"].keys() >= {"3", "4", "5"}  # a mixed set
    pairs = [json.loads(line) for line in (variant_dir / "pairs.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(pairs) == manifest["pairs"] == manifest["variants"]
    assert all(entry["rule"] for entries in manifest["skipped"].values() for entry in entries)
    assert manifest["names_maps"]["wild_tool_bench_0"]["getRealtimeCity"].startswith("tool_")
    result = wtb("validate", variant_dir / "sessions.jsonl")
    assert result.exit_code == 0, result.output


def test_unknown_factor_is_a_usage_error(reference_dir: Path, tmp_path: Path):
    result = wtb("variants", reference_dir / "sessions.jsonl", "--out", tmp_path, "--factors", "colour")
    assert result.exit_code == 2 and "unknown factor 'colour'" in result.output
    result = wtb("variants", reference_dir / "sessions.jsonl", "--out", tmp_path, "--levels", "names=1")
    assert result.exit_code == 2 and "names has no levels" in result.output
    assert not (tmp_path / "pairs.jsonl").exists()


@pytest.mark.parametrize(
    ("candidate", "factor", "level", "sign"),
    [
        ("names_sensitive", "names", None, -1),
        ("chat_sensitive", "transitions", "+1", -1),
        ("implicit_sensitive", "explicit", None, +1),
        ("long_list_sensitive", "distractors", "5", -1),
    ],
)
def test_ablate_finds_the_one_factor(variant_dir, tmp_path, monkeypatch, candidate, factor, level, sign):
    monkeypatch.setenv(DATASET_ENV, str(variant_dir / "sessions.jsonl"))
    spec = f"graph:{CANDIDATES}:{candidate}"
    result = wtb("ablate", "--model", spec, "--variants", variant_dir, "--out", tmp_path, "--no-progress")
    assert result.exit_code == 0, result.output
    document = json.loads((tmp_path / "ablate.json").read_text(encoding="utf-8"))
    assert document["test"] == "cluster sign-flip (exact)"
    for entry in document["effects"]:
        assert EFFECT_KEYS <= set(entry)
        if (entry["factor"], entry["level"]) == (factor, level):
            assert (entry["ci_high"] < 0) if sign < 0 else (entry["ci_low"] > 0), entry
            assert entry["p_value"] < 0.05
        elif entry["factor"] == factor:  # another level of the same factor: not the one asserted
            continue
        else:
            assert entry["ci_low"] <= 0 <= entry["ci_high"], entry
            assert entry["difference"] == 0.0  # these candidates are deterministic: no flip at all
    assert {(e["factor"], e["level"]) for e in document["effects"]} == {
        ("names", None),
        ("distractors", "5"),
        ("explicit", None),
        ("transitions", "-1"),
        ("transitions", "+1"),
    }
    curve = document["transitions_curve"]
    assert [p["level"] for p in curve] == [-1, 0, 1]
    # the pairs analysed, kept beside ablate.json for wtb report's Ablation view (tests/integration/test_ablation_view.py)
    kept = [json.loads(line) for line in (tmp_path / "pairs.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(kept) == sum(e["pairs"] for e in document["effects"]) + document["unscored_pairs"]
    assert not (tmp_path / "ablate.html").exists()
    assert f"wtb report {tmp_path} --out {tmp_path / 'report'}" in " ".join(result.output.split())
