"""tracer-lite from the command line (`whowhen fit`, `whowhen attribute --attributor
tracer_lite`), its cross-validation, its template-independent cues, and the attributors
that cannot predict on an import saying so instead of writing empty predictions."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from whowhen.attribution.heuristics import has_error, rejects
from whowhen.attribution.tracer import TracerConfig
from whowhen.attribution.tracer_cues import run_cues
from whowhen.attribution.tracer_cv import cross_validate
from whowhen.attribution.tracer_features import DENSE, run_features
from whowhen.attribution.tracer_train import fold_of
from whowhen.cli import main
from whowhen.schema import LABELS, PREDICTIONS, RUNS, STEPS, read_table, write_table

from .tracer_data import steps_table, synthetic_runs


def _dataset(folder: Path, tables: dict[str, pl.DataFrame]) -> Path:
    for name, spec in (("runs", RUNS), ("steps", STEPS), ("labels", LABELS)):
        write_table(tables[name], spec, folder / f"{name}.parquet")
    return folder


@pytest.fixture(scope="module")
def planted() -> dict[str, pl.DataFrame]:
    return synthetic_runs(80, seed=4)


def test_fit_cross_validates_saves_and_attribute_uses_the_model(
    planted: dict[str, pl.DataFrame], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _dataset(tmp_path / "ds", planted)
    model = tmp_path / "m" / "tracer.json"
    args = ["fit", str(data), "-o", str(model), "--folds", "4", "--features", "full"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "the train split" in out and "4-fold cross-validation by task" in out
    assert "random_step" in out and "[" in out  # accuracy with its interval, beside random
    assert json.loads(model.read_text())["n_train_runs"] == 40
    assert main(["attribute", str(data), "--attributor", "tracer_lite", "--model", str(model)]) == 0
    preds = read_table(data / "predictions" / "tracer_lite.parquet", PREDICTIONS)
    assert preds.height == 80 and preds["parse_ok"].all()
    test = preds.join(planted["labels"].filter(pl.col("split") == "test"), on="run_id")
    assert (test["step"] == test["decisive_step"]).mean() > 0.9  # the planted word, learned


def test_cross_validation_is_out_of_fold_and_keeps_tasks_whole(
    planted: dict[str, pl.DataFrame],
) -> None:
    runs = planted["runs"].with_columns(  # pairs of runs share a task
        (pl.col("run_id").str.slice(3).cast(pl.Int64) // 2).cast(pl.String).alias("task_id")
    )
    labels = planted["labels"].with_columns(pl.lit("train").alias("split"))
    folds = fold_of(runs, labels, 5, seed=0)
    task = dict(zip(runs["run_id"], runs["task_id"], strict=True))
    by_task: dict[str, set[int]] = {}
    for run_id, fold in folds.items():
        by_task.setdefault(task[run_id], set()).add(fold)
    assert all(len(f) == 1 for f in by_task.values()) and len(set(folds.values())) == 5
    oof = cross_validate(runs, planted["steps"], labels, TracerConfig.of(features="full"), k=5)
    assert oof.height == 80 and oof["step"].is_not_null().all()
    assert oof["step_ok"].mean() > 0.8 > oof["random_step_chance"].mean()
    # a model that had seen the held-out labels would not need them: scramble one fold's
    # labels and the other folds' out-of-fold predictions stay the same
    held = [r for r, f in folds.items() if f == 0]
    moved = labels.with_columns(
        pl.when(pl.col("run_id").is_in(held))
        .then(pl.col("decisive_step") % 6 + 1)
        .otherwise(pl.col("decisive_step"))
        .alias("decisive_step")
    )
    again = cross_validate(runs, planted["steps"], moved, TracerConfig.of(features="full"), k=5)
    assert again.filter(pl.col("fold") == 0)["step"].equals(oof.filter(pl.col("fold") == 0)["step"])


def test_fit_on_an_import_uses_every_label(
    planted: dict[str, pl.DataFrame], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    imported = planted | {"labels": planted["labels"].with_columns(pl.lit("test").alias("split"))}
    data = _dataset(tmp_path / "ds", imported)
    assert main(["fit", str(data), "-o", str(tmp_path / "m.json"), "--folds", "0"]) == 0
    assert "80 labels (every label)" in capsys.readouterr().out
    assert main(["fit", str(data), "-o", str(tmp_path / "m.json"), "--split", "train"]) == 1
    assert "no labels in split 'train'" in capsys.readouterr().err


def test_tracer_lite_without_a_model_says_where_it_looked(
    planted: dict[str, pl.DataFrame],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = _dataset(tmp_path / "ds", planted)
    monkeypatch.chdir(tmp_path)
    assert main(["attribute", str(data), "--attributor", "tracer_lite"]) == 1
    err = capsys.readouterr().err
    assert "results/models/tracer_lite.json" in err and "whowhen fit" in err
    assert "Traceback" not in err and not (data / "predictions").exists()


def test_help_lists_tracer_lite_and_fit(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--help"], ["attribute", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        text = capsys.readouterr().out
        assert "tracer_lite" in text or "fit DATASET" in text


def test_shortcut_predictors_write_nothing_without_a_train_split(
    planted: dict[str, pl.DataFrame], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    imported = planted | {"labels": planted["labels"].with_columns(pl.lit("test").alias("split"))}
    data = _dataset(tmp_path / "import", imported)
    assert main(["attribute", str(data), "--attributor", "majority_agent"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nothing written" in err[0] and "train split" in err[0]
    assert not (data / "predictions").exists()
    # with a train split they are fitted on it and predict (the CLI used to pass no labels)
    built = _dataset(tmp_path / "built", planted)
    assert main(["attribute", str(built), "--attributor", "majority_agent"]) == 0
    preds = read_table(built / "predictions" / "majority_agent.parquet", PREDICTIONS)
    assert preds["parse_ok"].all()


# ---- the template-independent cues ------------------------------------------------------


def _cues(rows: list[tuple], question: str | None = None) -> dict[str, list[float]]:
    steps = steps_table("r", rows).to_dicts()
    index = [i for i, r in enumerate(steps) if r["actor"] not in ("user", "tool")]
    cues = run_cues(steps, index, question)
    return {name: getattr(cues, name) for name in cues.__dataclass_fields__}


def test_cues_read_corrections_plans_errors_repeats_and_origins() -> None:
    cues = _cues(
        [
            ("user", "message", "How many moons? Report the count."),
            ("planner", "message", "From my knowledge the count is probably 9541."),  # 1
            ("searcher", "action", "search moons", "search", {"q": "moons"}),  # 2
            ("tool", "observation", "Error: service not available"),
            ("searcher", "message", "The result: 9541 moons, confirmed."),  # 4
            ("checker", "message", "I apologize, 9541 is wrong. Let us try a new plan."),  # 5
            ("searcher", "action", "search moons", "search", {"q": "moons"}),  # 6
            ("checker", "message", "Final answer: 9541."),  # 7
        ]
    )
    # candidates in order: steps 1, 2, 4, 5, 6, 7
    assert cues["hedges"] == [1, 0, 0, 0, 0, 0]
    assert cues["contradicted_later"] == [1, 0, 0, 0, 0, 0]  # 9541 first said at step 1
    assert cues["origin_of_final"] == [1, 0, 0, 0, 0, 0]
    assert cues["after_error"] == [0, 0, 1, 0, 0, 0]
    assert cues["error_ignored"] == [0, 0, 1, 0, 0, 0]  # moves on without a word
    assert cues["approves"] == [0, 0, 1, 0, 0, 0]
    assert cues["plan_change_after"] == [0, 0, 1, 0, 0, 0]  # step 5 follows step 4
    assert cues["repeats_earlier"] == [0, 0, 0, 0, 1, 0]
    assert cues["repeated_later"] == [0, 1, 0, 0, 0, 0]


def test_values_of_the_question_are_not_new() -> None:
    rows = [("user", "message", "Is the number prime?"), ("solver", "message", "9541 is prime.")]
    assert _cues(rows, question=None)["origin_of_final"] == [1]
    assert _cues(rows, question="Is 9541 prime?")["origin_of_final"] == [0]


@pytest.mark.parametrize(
    "text",
    [
        "Error: x",
        "Traceback (most recent call last):",
        "exitcode: 1 (execution failed)",
        "404 Not Found",
        "Unable to open the page",
        "KeyError exception raised",
        "3/5 examples passed",
        "the item is not available",
        "Invalid input",
        "I cannot read it",
    ],
)
def test_error_text_is_found_whatever_its_case(text: str) -> None:
    assert has_error(text) and has_error(text.upper().replace("/", "/"))
    assert has_error("x" * 50_000 + "\n" + text)  # in the tail of a long dump


@pytest.mark.parametrize(
    "text",
    ["Check failed: 12", "Please fix the sum", "Redo the last step", "Sending it back.",
     "The total does not match", "That is incorrect", "54 is wrong", "Mismatch in row 2"],
)  # fmt: skip
def test_rejections_are_found_whatever_their_case(text: str) -> None:
    assert rejects(text) and rejects(text.upper())


def test_features_survive_any_text() -> None:
    """Any script, numbers in any notation and length, a megabyte step: no crash, finite."""
    steps = steps_table(
        "r",
        [
            ("user", "message", "计算 0.00001 加 1e-05"),
            ("solver", "message", "答案是 " + "9" * 400 + " 和 0.00001。"),
            ("tool", "observation", "Résultat: ∞ " + "lorem 12.5 " * 100_000),
            ("solver", "message", "Final answer: ١٢٣ (Arabic-Indic digits) and -0.0"),
        ],
    )
    dense, _tokens, cands = run_features(steps, "unknown_system", dim=0)
    assert len(cands) == 2 and all(set(d) <= set(DENSE) for d in dense)
    assert all(abs(v) < 1e6 for d in dense for v in d.values())
