"""The built dataset as released: splits, agent balance, shortcut predictors, re-rollout
comparison, exports (Who&When JSON, Hugging Face Parquet), no tell-tale markers, and the
human-validation sheets."""

from __future__ import annotations

import csv
import json
import re

import polars as pl
import pytest

from whowhen.attribution.offline import attribute
from whowhen.cli import main as cli
from whowhen.continuation import continue_injections
from whowhen.dataset.build import assign_splits, balance_agents, build_dataset
from whowhen.dataset.export import export_hf, export_who_and_when
from whowhen.dataset.review import agreement, cohen_kappa, export_sheet, read_sheet
from whowhen.errors import WhowhenError
from whowhen.injection.plan import plan_injections
from whowhen.rollouts import run_rollouts
from whowhen.schema import LABELS, RUNS, STEPS, write_table
from whowhen.taxonomy import load_taxonomy

from .conftest import MAX_STEPS, ROOT

PAIRS = [
    ("arithmetic", "solver_verifier"),
    ("table_qa", "react"),
    ("doc_qa", "orchestrator"),
    ("web_shop", "react"),
    ("chart_qa", "orchestrator"),
    ("visual_count", "react"),
    ("event_timing", "orchestrator"),
    ("humaneval", "pipeline"),
]
MARKERS = re.compile(r"inject|attack|\bslip|mistake|\boops\b|tamper|corrupt", re.I)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    """A small dataset over every modality and both topologies, built as the stage does."""
    tax = load_taxonomy(ROOT / "config" / "taxonomy.yaml")
    parts, rollout_steps = [], []
    for bench, system in PAIRS:
        cfg = {"n_tasks": 8}
        runs, steps, _ = run_rollouts(bench, system, cfg, 2, 0.05, MAX_STEPS)
        plan = plan_injections(runs, steps, tax, 4, 3, step_selection="stratified")
        parts.append(continue_injections(plan, runs, steps, cfg, 2, 100, rerollout_slip_rate=0.1))
        rollout_steps.append(steps)
    data = build_dataset(parts, 3, 0.6, 0.2)
    return {
        **data,
        "parts": parts,
        "rollout_steps": pl.concat(rollout_steps),
        "continuations": pl.concat([p["continuations"] for p in parts]),
    }


def test_splits_by_task_and_dev_split(built) -> None:
    labels = built["labels"].join(
        built["runs"].select("run_id", "benchmark", "task_id"), on="run_id"
    )
    assert set(labels["split"]) == {"train", "dev", "test"}
    per_task = labels.group_by("benchmark", "task_id").agg(pl.col("split").n_unique())
    assert (per_task["split"] == 1).all()
    with pytest.raises(WhowhenError, match="test split"):
        assign_splits(built["labels"], built["runs"], 3, 0.7, 0.3)


def test_balancing_caps_the_most_blamed_agent(built) -> None:
    labels = pl.concat([p["labels"] for p in built["parts"]])
    runs = pl.concat([p["runs"] for p in built["parts"]])
    balanced = balance_agents(labels, runs)
    shares = (
        balanced.join(runs.select("run_id", "system", "topology"), on="run_id")
        .filter(pl.col("topology") == "multi")
        .group_by("system", "decisive_agent")
        .len()
        .with_columns((pl.col("len") / pl.col("len").sum().over("system")).alias("share"))
    )
    assert shares.height > 0 and (shares["share"] <= 0.5 + 1e-9).all()
    single = labels.join(runs.select("run_id", "topology"), on="run_id").filter(
        pl.col("topology") == "single"
    )
    assert set(single["run_id"]) <= set(balanced["run_id"])  # single-agent items untouched


def test_positions_are_stratified(built) -> None:
    plan = built["continuations"]
    assert plan.height > 0
    tax = load_taxonomy(ROOT / "config" / "taxonomy.yaml")
    runs, steps, _ = run_rollouts("event_timing", "react", {"n_tasks": 12}, 2, 0.0, 80)
    uniform = plan_injections(runs, steps, tax, 4, 3)
    strat = plan_injections(runs, steps, tax, 4, 3, step_selection="stratified")
    counts = strat["position"].value_counts()
    assert set(counts["position"]) == {"early", "middle", "late"}
    assert counts["count"].max() - counts["count"].min() <= strat.height // 3
    assert set(uniform["position"]) <= {"early", "middle", "late"}


def test_rerollout_drift_is_measured_and_zero_without_randomness(built) -> None:
    cont = built["continuations"]
    assert cont["prefix_exact"].all()  # warm start: every prefix exact
    assert cont["rerollout_prefix_exact"].null_count() == 0
    tax = load_taxonomy(ROOT / "config" / "taxonomy.yaml")
    runs, steps, _ = run_rollouts("arithmetic", "react", {"n_tasks": 10}, 2, 0.0, MAX_STEPS)
    plan = plan_injections(runs, steps, tax, 4, 2)
    same = continue_injections(plan, runs, steps, {"n_tasks": 10}, 2, 80, rerollout_slip_rate=0.0)
    c = same["continuations"]
    assert c["rerollout_prefix_exact"].all() and (c["rerollout_status"] == c["status"]).all()
    noisy = continue_injections(plan, runs, steps, {"n_tasks": 10}, 2, 80, rerollout_slip_rate=0.5)
    assert (~noisy["continuations"]["rerollout_prefix_exact"]).sum() > 0


def test_shortcut_predictors_fit_on_train(built) -> None:
    runs, steps, labels = built["runs"], built["steps"], built["labels"]
    for name in ("majority_agent", "position_prior", "length_prior"):
        preds = attribute(runs, steps, name, 0, labels)
        assert preds["parse_ok"].all() and preds.height == runs.height
    none = attribute(runs, steps, "majority_agent", 0, labels.clear())
    assert not none["parse_ok"].any()  # no train split: no predictions, never a leak


def test_hf_export_loads_with_datasets(built, tmp_path) -> None:
    datasets = pytest.importorskip("datasets")
    paths = export_hf(built["runs"], built["steps"], built["labels"], tmp_path / "hf")
    files = {p.stem: str(p) for p in paths}
    assert set(files) == {"train", "dev", "test"}
    ds = datasets.load_dataset("parquet", data_files=files)
    assert sum(ds[s].num_rows for s in ds) == built["labels"].height
    row = ds["train"][0]
    assert {"decisive_agent", "decisive_step", "history", "modality"} <= set(row)
    assert not {"origin", "parent_run_id", "replacement_action"} & set(ds["train"].column_names)
    assert row["history"][0]["actor"] == "user"


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]{3,}", text.lower()))


def test_exported_dataset_has_no_tell_tale_markers(built, tmp_path) -> None:
    export_who_and_when(built["runs"], built["steps"], built["labels"], tmp_path / "wnw")
    export_hf(built["runs"], built["steps"], built["labels"], tmp_path / "hf")
    for path in (tmp_path / "wnw").glob("*.json"):
        record = json.loads(path.read_text())
        assert not MARKERS.search(path.name)
        for step in record["history"]:
            assert not MARKERS.search(step["content"]), (path.name, step["content"][:200])
    # an "Error:" text comes from a tool; an agent only ever repeats one it was shown
    for (run_id,), steps in built["steps"].sort("step").group_by("run_id"):
        shown = False
        for row in steps.iter_rows(named=True):
            said = f"{row['content']} {row['tool_args'] or ''}"
            if row["kind"] == "observation":
                shown = shown or "error:" in said.lower()
            else:
                assert shown or "error:" not in said.lower(), (run_id, row["step"])
    # replacement-only tokens: words in injected actions that no rollout ever produced
    vocabulary: set[str] = set()
    rollout = built["rollout_steps"]
    for text in rollout["content"].to_list() + rollout["tool_args"].drop_nulls().to_list():
        vocabulary |= _words(text)
    new = set()
    for text in built["labels"]["replacement_action"]:
        action = json.loads(text)
        new |= _words(action["content"] + json.dumps(action["tool_args"] or {})) - vocabulary
    assert not new, sorted(new)[:20]


def test_review_sheet_round_trip(built, tmp_path) -> None:
    sheet = tmp_path / "sheet.csv"
    n = export_sheet(built["labels"], built["runs"], built["steps"], sheet, n=20, seed=1)
    rows = list(csv.DictReader(sheet.open()))
    assert len(rows) == n > 0
    assert len({(r["benchmark"], r["mode"]) for r in rows}) == len(
        built["labels"].join(built["runs"], on="run_id").select("benchmark", "mode").unique()
    )  # every stratum is represented
    assert all(f">> [{r['labelled_step']}]" in r["trajectory"] for r in rows)
    filled = []
    for reviewer, flip in (("ana", set()), ("ben", {rows[0]["item_id"]})):
        path = tmp_path / f"{reviewer}.csv"
        with path.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, rows[0].keys())
            writer.writeheader()
            for r in rows:
                doubt = r["mode"].startswith("coordination") ^ (r["item_id"] in flip)
                verdict = "no" if doubt else "yes"
                writer.writerow({**r, "verdict": verdict, "reviewer": reviewer})
        filled.append(path)
    out = tmp_path / "agreement.json"
    assert cli(["review", "import", *map(str, filled), "-o", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["items"] == n and result["reviews"] == 2 * n and result["kappa_items"] == n
    assert result["overall"]["yes"] + result["overall"]["no"] == 2 * n
    assert result["kappa"] is None or result["kappa"] < 1.0
    assert agreement([read_sheet(filled[0])])["by_mode"]
    assert cohen_kappa(["yes", "no"], ["yes", "no"]) == 1.0
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,mode,verdict\nx,m,maybe\n")
    with pytest.raises(WhowhenError, match="row 2") as err:
        read_sheet(bad)
    assert "bad.csv" in str(err.value) and "verdict" in str(err.value)


def test_cli_exports(built, tmp_path) -> None:
    folder = tmp_path / "ds"
    for name, spec in (("runs", RUNS), ("steps", STEPS), ("labels", LABELS)):
        write_table(built[name], spec, folder / f"{name}.parquet")
    assert cli(["export", str(folder), "-o", str(tmp_path / "hf"), "--format", "hf"]) == 0
    assert (tmp_path / "hf" / "data" / "test.parquet").exists()
    assert cli(["review", "export", str(folder), "-o", str(tmp_path / "s.csv"), "-n", "5"]) == 0
