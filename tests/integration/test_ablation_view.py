"""``wildtoolbench.ablate(...)`` and the Ablation view of ``wtb report`` (issue 39; docs/variants.md §6.7,
docs/guides/scripting.md): one ablation run for the module (the first 8 reference sessions, factors ``names``
and ``transitions +1``, the candidate that fails after a chat exchange), then its effects from Python, its errors
against the command line's, ``out=None``, ``ablate.json`` read as untrusted input, and the view in headless
Chromium (skipped without chromium unless ``WTB_REQUIRE_BROWSER=1``).

``WTB_REPORT_SCREENSHOTS=DIR`` also saves the view and a pair's two trajectories as PNGs in DIR.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

import wildtoolbench as wtb
from tests.support.browser import chromium
from tests.support.sensitive_candidates import DATASET_ENV
from wildtoolbench.cli import app
from wildtoolbench.reports import build_report
from wildtoolbench.reports.ablation import ABLATE_RULES, AblationFileError, expand_folders, read_ablation
from wildtoolbench.reports.ablation_plots import effect_tip

CANDIDATE = "graph:" + str(Path(__file__).resolve().parents[1] / "support" / "sensitive_candidates.py") + ":chat_sensitive"


def wtb_cli(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def variant_dir(reference_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("ablation-view")
    lines = (reference_dir / "sessions.jsonl").read_text(encoding="utf-8").splitlines()[:8]
    (base / "eight.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = wtb_cli(
        "variants", base / "eight.jsonl", "--factors", "names,transitions", "--levels", "transitions=+1",
        "--out", base / "variants",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return base / "variants"


@pytest.fixture(scope="module")
def ablation(variant_dir: Path) -> wtb.AblationRun:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(DATASET_ENV, str(variant_dir / "sessions.jsonl"))
        return wtb.ablate(CANDIDATE, variants=variant_dir, out=variant_dir.parent / "ablate", progress=False)


@pytest.fixture(scope="module")
def report(ablation: wtb.AblationRun) -> Path:
    """A report of the folder that holds the ablation folder (found one level down)."""
    out = ablation.out.parent / "report"
    build_report([ablation.out.parent], out, resamples=100)
    return out


def test_ablate_returns_the_effects_of_ablate_json(ablation: wtb.AblationRun):
    written = json.loads((ablation.out / "ablate.json").read_text(encoding="utf-8"))
    assert ablation.effects == written["effects"] and ablation.document == written
    assert [(e.factor, e.level) for e in ablation.effect_list] == [("names", None), ("transitions", "+1")]
    chat = ablation.effect("transitions", "+1")
    assert chat.excludes_zero and chat.difference < 0 and chat.ci_high < 0 and chat.p_value < 0.05
    names = ablation.effect("names")
    assert names.difference == 0.0 and not names.excludes_zero and names.pairs == written["effects"][0]["pairs"]
    assert ablation.control is None and [p["level"] for p in ablation.transitions_curve] == [0, 1]
    with pytest.raises(KeyError, match="there are: names, transitions \\+1"):
        ablation.effect("distractors", 5)
    pairs = (ablation.out / "pairs.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(pairs) == sum(e["pairs"] for e in written["effects"])
    assert not (ablation.out / "ablate.html").exists()  # one renderer: wtb report
    run = ablation.run
    assert len(run.tasks) == run.metrics["total_info"]["task"]["total_count"] and run.out == ablation.out / "run"
    rows = ablation.rows()
    assert [r["difference"] for r in rows] == [e["difference"] for e in written["effects"]]
    try:
        import pandas
    except ImportError:  # not a dependency: the call says how to get it
        with pytest.raises(ImportError, match="needs pandas, which wildtoolbench does not install"):
            ablation.to_pandas()
    else:
        frame = ablation.to_pandas()
        assert isinstance(frame, pandas.DataFrame) and list(frame["factor"]) == ["names", "transitions"]


@pytest.mark.parametrize(
    ("settings", "argv"),
    [
        ({"trials": 0}, ["--trials", "0"]),
        ({"factors": "colour"}, ["--factors", "colour"]),
        ({"variants": "no-such-folder"}, ["--variants", "no-such-folder"]),
    ],
)
def test_ablate_raises_what_the_command_prints(tmp_path, monkeypatch, settings, argv):
    monkeypatch.chdir(tmp_path)
    if "variants" in settings:
        (tmp_path / "no-such-folder").mkdir()
    with pytest.raises(wtb.UsageError) as raised:
        wtb.ablate("baseline:chat", out="ablate", progress=False, **settings)
    result = wtb_cli("ablate", "--model", "baseline:chat", "--out", "ablate", "--no-progress", *argv)
    assert result.exit_code == 2
    assert str(raised.value) in " ".join(result.output.split())  # the same message, line-wrapped by the terminal
    with pytest.raises(TypeError, match="unknown setting\\(s\\) colour; the settings of wtb ablate are cache"):
        wtb.ablate("baseline:chat", colour="red")


def test_out_none_leaves_nothing_behind(reference_dir, tmp_path, monkeypatch, capsys):
    lines = (reference_dir / "sessions.jsonl").read_text(encoding="utf-8").splitlines()[:2]
    (tmp_path / "two.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    before = {p.name for p in Path(tempfile.gettempdir()).glob("wtb-ablate-*")}
    model = wtb.chat_model("baseline:chat")  # a Python object, as wtb.evaluate takes one
    found = wtb.ablate(model, dataset="two.jsonl", factors=["names"], progress=False)
    assert found.out is None and found.run.out is None
    assert found.document["model"].startswith("graph:object:")
    said = " ".join(capsys.readouterr().err.split())
    assert "in a temporary folder removed when the call returns: pass out=FOLDER to keep it" in said
    names = found.effect("names")
    assert [e["factor"] for e in found.effects] == ["names"] and names.difference == 0.0 and names.pairs > 0
    assert [p.name for p in tmp_path.iterdir()] == ["two.jsonl"]  # nothing written beside the input
    assert {p.name for p in Path(tempfile.gettempdir()).glob("wtb-ablate-*")} == before


def test_report_md_holds_the_effects_table(report, ablation):
    text = (report / "report.md").read_text(encoding="utf-8")
    section = text.split("\n## Ablation\n", 1)[1]
    chat = ablation.effect("transitions", "+1")
    row = (
        f"| transitions | +1 | {chat.pairs} | {chat.sessions} | {chat.origin_accuracy:.1f} | {chat.variant_accuracy:.1f} "
        f"| {chat.difference:+.1f} | [{chat.ci_low:+.1f}, {chat.ci_high:+.1f}] | {chat.p_value:.3g} | - |"
    )
    assert row in section.splitlines()
    assert "| names | - |" in section


def test_folders_expand_to_their_runs(ablation: wtb.AblationRun, tmp_path: Path):
    folder = ablation.out
    assert expand_folders([folder]) == ([folder / "run"], [folder])
    assert expand_folders([folder.parent]) == ([folder / "run"], [folder])  # a folder holding one
    assert expand_folders([folder / "run"]) == ([folder / "run"], [])  # a run folder stays one


BROKEN = [
    (lambda d: d.pop("effects"), "effects: missing", "missing"),
    (lambda d: d["effects"][0].pop("factor"), "effects[0].factor: missing", "missing"),
    (lambda d: d.update(effects={"0": {}}), "effects: expected a list", "not_list"),
    (lambda d: d.update(by_task_type=[3]), "by_task_type[0]: expected an object", "not_list"),
    (lambda d: d["effects"][1].update(ci_low="x"), 'effects[1].ci_low: expected a number or null, got "x"', "not_number"),
    (lambda d: d["effects"][0].update(difference=None), "effects[0].difference: expected a number, got null", "not_number"),
    (lambda d: d["effects"][0].update(p_value=2), "effects[0].p_value: 2 is outside [0, 1]", "out_of_range"),
    (lambda d: d["effects"][0].update(origin_accuracy=100.5), "effects[0].origin_accuracy: 100.5 is outside [0, 100]", "out_of_range"),
    (lambda d: d["effects"][0].update(pairs=True), "effects[0].pairs: expected a whole number >= 0, got true", "not_whole"),
    (lambda d: d["transitions_curve"][0].update(level="0"), "transitions_curve[0].level: expected a whole number", "not_whole"),
    (lambda d: d["by_task_type"][0].pop("task_type"), "by_task_type[0].task_type: expected a string, got null", "not_text"),
    (lambda d: d["effects"][0].update(level=5), "effects[0].level: expected a string or null, got 5", "not_text"),
    (lambda d: d["effects"][0].update(small="yes"), "effects[0].small: expected true or false", "not_boolean"),
    (lambda d: d["effects"][0].update(control=5), "effects[0].control: expected an object or null", "not_control"),
]
NARROWLY_FINE = [
    lambda d: d["effects"][0].update(p_value=0, origin_accuracy=0, variant_accuracy=100, difference=-100),
    lambda d: d["effects"][0].update(p_value=1, ci_low=None, ci_high=None, level=None, small=False, control=None),
    lambda d: d["effects"][0].update(ci_low=-100, ci_high=100, sessions=0, control={"difference": 0, "ci_low": None, "ci_high": None}),
    lambda d: d["transitions_curve"][0].update(level=-3, ci_low=None, ci_high=None),
    lambda d: [d.pop(key) for key in ("by_task_type", "by_turn_subtype", "transitions_curve", "model")],
]


def _edited(ablation, tmp_path: Path, edit) -> Path:
    document = json.loads((ablation.out / "ablate.json").read_text(encoding="utf-8"))
    edit(document)
    path = tmp_path / "ablate.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_every_rule_of_ablate_json_is_listed_and_tested():
    assert {rule for _, _, rule in BROKEN} | {"not_json"} == set(ABLATE_RULES)


@pytest.mark.parametrize(("edit", "message", "rule"), BROKEN)
def test_a_bad_ablate_json_is_named_with_its_field_and_rule(ablation, tmp_path, edit, message, rule):
    with pytest.raises(AblationFileError) as raised:
        read_ablation(_edited(ablation, tmp_path, edit))
    assert raised.value.rule == rule and str(raised.value) == f"{tmp_path}/ablate.json: {message} [{rule}]"


@pytest.mark.parametrize("edit", NARROWLY_FINE)
def test_an_ablate_json_at_the_edges_passes(ablation, tmp_path, edit):
    document = read_ablation(_edited(ablation, tmp_path, edit))
    assert document == json.loads((tmp_path / "ablate.json").read_text(encoding="utf-8"))


def test_wtb_report_exits_1_naming_the_file_and_field(ablation, tmp_path):
    copy = tmp_path / "ablation"
    shutil.copytree(ablation.out, copy)
    (copy / "ablate.json").write_text('{"effects": [{"factor": 3}]}', encoding="utf-8")
    result = wtb_cli("report", copy, "--out", tmp_path / "report")
    assert result.exit_code == 1
    assert "ablate.json: effects[0].level: missing [missing]" in " ".join(result.output.split())
    (copy / "ablate.json").write_text("[1, 2", encoding="utf-8")
    result = wtb_cli("report", copy, "--out", tmp_path / "report")
    assert result.exit_code == 1 and "ablate.json: not JSON" in " ".join(result.output.split())
    assert "[not_json]" in result.output
    (copy / "ablate.json").write_text("[]", encoding="utf-8")
    with pytest.raises(AblationFileError, match=r"ablate.json: expected a JSON object \[not_json\]"):
        read_ablation(copy / "ablate.json")


# ------------------------------------------------------------------ the view in a browser


@pytest.fixture(scope="module")
def browser():
    with chromium() as launched:
        yield launched


def _open(browser, index: Path, hash_: str, problems: list[str], requests: list[str]):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(index.as_uri() + hash_)
    page.wait_for_selector("body[data-ready='1']")
    page.wait_for_function("h => document.body.getAttribute('data-rendered') === h", arg=hash_)
    return page


def test_the_view_draws_the_effects_of_ablate_json(report, ablation, browser):
    problems, requests = [], []
    page = _open(browser, report / "index.html", "#ablation", problems, requests)
    try:
        assert page.locator('header nav a[data-view="ablation"]').inner_text() == "Ablation"
        effects = ablation.effects
        tips = page.locator("#ablation-forest svg g.tip title").evaluate_all("all => all.map(e => e.textContent)")
        assert tips == [effect_tip(e) for e in effects]  # one row per factor and level, in order
        assert "transitions +1: -" in tips[1] and "names: +0.0 points [+0.0, +0.0]" in tips[0]
        rows = page.locator("#ablation-effects tbody tr")
        assert rows.count() == len(effects)
        for number, effect in enumerate(effects):
            cells = rows.nth(number).locator("td").all_inner_texts()
            assert cells[0] == effect["factor"] and cells[1] == (effect["level"] or "–")
            assert cells[2:6] == [str(effect["pairs"]), str(effect["sessions"]), f"{effect['origin_accuracy']:.1f}", f"{effect['variant_accuracy']:.1f}"]
            assert cells[6] == f"{effect['difference']:+.1f}"
            assert cells[7] == f"[{effect['ci_low']:+.1f}, {effect['ci_high']:+.1f}]"
        curve = page.locator("#ablation-curve-table tbody tr").all_inner_texts()
        assert len(curve) == len(ablation.transitions_curve) == 2 and curve[0].startswith("0 (origins)")
        small = [c for c in ablation.by_task_type if c["small"]]
        assert page.locator("#ablation-by-type tbody tr.small").count() == len(small) > 0
        assert page.locator("#ablation-by-type tbody tr.small .small-mark").count() == len(small)
        changed = sum(e["worse"] + e["better"] for e in effects)
        assert page.locator("#ablation-pairs tbody a.pair-link").count() == min(changed, 50) > 0
        if os.environ.get("WTB_REPORT_SCREENSHOTS"):
            page.screenshot(path=str(Path(os.environ["WTB_REPORT_SCREENSHOTS"]) / "report-ablation.png"), full_page=False)
        assert problems == [] and all(url.startswith(("file:", "data:", "about:")) for url in requests)
    finally:
        page.close()


def test_a_pair_link_opens_both_trajectories(report, ablation, browser):
    problems, requests = [], []
    page = _open(browser, report / "index.html", "#ablation?cell=transitions%7C%2B1", problems, requests)
    try:
        first = page.locator("#ablation-pairs tbody tr").first
        variant_id = first.locator("td").first.inner_text()
        pair = next(
            json.loads(line)
            for line in (ablation.out / "pairs.jsonl").read_text(encoding="utf-8").splitlines()
            if json.loads(line)["pair"] == variant_id
        )
        first.locator("a.pair-link").click()
        page.wait_for_function("() => (document.body.getAttribute('data-rendered') || '').startsWith('#pair/')")
        origin, variant = page.locator("#pair-origin"), page.locator("#pair-variant")
        assert origin.locator("#origin-traj-title").inner_text().startswith(
            f"{pair['origin']}, task {pair['origin_task'] + 1} "
        )
        assert variant.locator("#variant-traj-title").inner_text().startswith(
            f"{pair['variant']}, task {pair['target_task'] + 1} "
        )
        assert origin.locator(".step").count() >= 1 and variant.locator(".step").count() >= 1
        assert "correct" in origin.locator(".head").first.inner_text()  # this candidate: right on the origin ...
        assert "error" in variant.locator(".head").first.inner_text()  # ... wrong after the inserted chat
        box_a, box_b = origin.bounding_box(), variant.bounding_box()
        assert box_a["x"] + box_a["width"] <= box_b["x"] and abs(box_a["y"] - box_b["y"]) < 2  # side by side
        if os.environ.get("WTB_REPORT_SCREENSHOTS"):
            page.screenshot(path=str(Path(os.environ["WTB_REPORT_SCREENSHOTS"]) / "report-ablation-pair.png"))
        assert problems == []
    finally:
        page.close()


def test_text_from_the_files_stays_text_and_the_control_is_a_band(ablation, tmp_path, browser):
    """A tampered copy: hostile text in the model and a factor name, and a paraphrase control added."""
    copy = tmp_path / "ablation"
    shutil.copytree(ablation.out, copy)
    document = json.loads((copy / "ablate.json").read_text(encoding="utf-8"))
    hostile = '$x^2$ <img src=x onerror="document.title=1"></script><script>document.title=2</script>'
    document["model"] = hostile
    document["effects"][0]["factor"] = hostile
    control = {"difference": -6.5, "ci_low": -12.25, "ci_high": -0.75, "p_value": 0.04}
    for entry in document["effects"]:
        entry["control"] = control
    paraphrase = {**document["effects"][1], "factor": "paraphrase", "level": None, "control": None, **control}
    document["effects"].append(paraphrase)
    (copy / "ablate.json").write_text(json.dumps(document), encoding="utf-8")
    build_report([copy], tmp_path / "report", resamples=100)
    problems, requests = [], []
    page = _open(browser, tmp_path / "report" / "index.html", "#ablation", problems, requests)
    try:
        assert page.locator("main#view img").count() == 0 and page.locator("main#view script").count() == 0
        assert page.locator("#ablation-effects tbody tr").first.locator("td").first.inner_text() == hostile
        assert page.title() not in ("1", "2") and problems == []
        markdown = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
        assert "<img" not in markdown and "&lt;img src=x" in markdown  # report.md shows it as text too
        tips = page.locator("#ablation-forest svg g.tip title").evaluate_all("all => all.map(e => e.textContent)")
        assert len(tips) == 3 and tips[2].startswith("paraphrase (control): -6.5 points [-12.2, -0.8]")
        forest = page.locator("#ablation-forest").inner_html()
        assert "paraphrase control, 95% interval" in forest and "#d9d9d9" in forest  # the grey band
        control_cells = page.locator("#ablation-effects tbody tr td:last-child").all_inner_texts()
        assert control_cells == ["-6.5 [-12.2, -0.8]", "-6.5 [-12.2, -0.8]", "–"]
        assert "paraphrase control run" in page.locator("#ablation-summary").inner_text()
        if os.environ.get("WTB_REPORT_SCREENSHOTS"):
            page.locator("#ablation-forest").screenshot(path=str(Path(os.environ["WTB_REPORT_SCREENSHOTS"]) / "report-ablation-control.png"))
    finally:
        page.close()
