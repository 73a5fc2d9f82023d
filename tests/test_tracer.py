"""The error-signal heuristic on hand-built runs, and tracer-lite: it learns a planted
signal, is deterministic, reads only the train split, and runs on imported trajectories."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from whowhen.attribution.baselines import agent_steps
from whowhen.attribution.heuristics import error_signal, error_signal_detail, numbers, signals
from whowhen.attribution.tracer import TracerConfig, TracerModel, fit, predict
from whowhen.schema import LABELS, PREDICTIONS, RUNS, STEPS, to_arrow

from .tracer_data import steps_table, synthetic_runs
from .wnw_files import SAMPLE, needs_sample


def _pick(steps: pl.DataFrame) -> tuple[str, int] | None:
    return error_signal(agent_steps(steps), steps)


# ---- the error-signal heuristic -------------------------------------------------------


def test_error_observation_blames_the_step_that_caused_it() -> None:
    steps = steps_table(
        "r",
        [
            ("user", "message", "Who founded Fjordline?"),
            ("assistant", "action", "I will search for Fjordline.", "search", {"query": "x"}),
            ("search", "observation", "Results: Fjordline"),
            ("assistant", "action", "I will read Fjordlne.", "read", {"title": "Fjordlne"}),
            ("read", "observation", "Error: no document titled 'Fjordlne'"),
            ("assistant", "action", "The answer is unknown.", "final_answer", {"answer": "?"}),
        ],
    )
    assert _pick(steps) == ("assistant", 3)
    assert error_signal_detail(agent_steps(steps), steps)[2].startswith("error_observation")


def test_stated_value_passed_differently_is_a_contradiction() -> None:
    steps = steps_table(
        "r",
        [
            ("user", "message", "Add 12 and 30, then subtract 5."),
            ("solver", "action", "Next, add 12 and 30.", "calculator", {"expression": "12 + 30"}),
            ("calculator", "observation", "42"),
            # states 42 - 5, passes 24 - 5: the contradiction is here, not at the answer
            ("solver", "action", "Next, 42 - 5.", "calculator", {"expression": "24 - 5"}),
            ("calculator", "observation", "19"),
            ("solver", "message", "Proposed answer: 19."),
            ("verifier", "action", "Final answer: 19.", "final_answer", {"answer": "19"}),
        ],
    )
    assert _pick(steps) == ("solver", 3)
    assert [s.kind for s in signals(steps)] == ["ungrounded_value"]


def test_numbers_in_any_notation_and_length_do_not_break_the_heuristic() -> None:
    """Real trajectories hold learning rates, long ids and huge integers: 0.00001 read as a
    float became `1e-05`, which the salience check could not parse, and a
    400-digit number became `inf`. Values keep one plain spelling, exactly."""
    assert numbers("lr 0.000010, 7.0 apples, id 007, -0.0") == {"0.00001", "7", "0"}
    assert numbers("9" * 400) == {"9" * 400}
    steps = steps_table(
        "r",
        [
            ("user", "message", "Pick the learning rate."),
            ("assistant", "message", "The learning rate is 0.00001 and the seed " + "7" * 400),
            ("assistant", "action", "Done.", "final_answer", {"answer": "0.00001"}),
        ],
    )
    assert _pick(steps) == ("assistant", 1)  # the unsupported value, stated first there


def test_rejection_blames_the_step_that_stated_the_disputed_value() -> None:
    steps = steps_table(
        "r",
        [
            ("user", "message", "How much higher is Nice than Bonn?"),
            ("reader", "action", "I will read the chart.", "read_chart", {}),
            ("read_chart", "observation", "Bonn 40, Nice 78."),
            ("reader", "message", "To orchestrator: Bonn 40, Nice 78."),
            ("orchestrator", "message", "To analyst: Bonn 40, Nice 78. Please answer."),
            ("analyst", "message", "To orchestrator: Nice 87 minus Bonn 40 is 47."),
            ("orchestrator", "message", "To verifier: please check the answer 47."),
            ("verifier", "message", "Check failed: the reader reports Nice at 78, not 87."),
        ],
    )
    # the analyst's 87 is unsupported (the first signal) and the rejection disputes it
    assert _pick(steps) == ("analyst", 5)
    kinds = {s.kind: s.blamed for s in signals(steps)}
    assert kinds["rejection"] == 5


def test_failed_tests_blame_the_step_whose_observation_shows_them() -> None:
    steps = steps_table(
        "r",
        [
            ("user", "message", "Implement add."),
            ("coder", "action", "I save a draft.", "write_code", {"code": "def add(a, b): ..."}),
            ("write_code", "observation", "Draft saved."),
            ("coder", "message", "To tester: please run the examples."),
            ("tester", "action", "I run the examples.", "run_tests", {}),
            (
                "run_tests",
                "observation",
                "FAIL  add(2, 3): expected 5, got 6\n0/1 examples passed.",
            ),
            ("tester", "message", "To reviewer: the draft passes."),
            ("reviewer", "action", "Approved.", "final_answer", {"answer": "def add"}),
        ],
    )
    assert _pick(steps) == ("tester", 4)  # the step whose observation shows the failure


def test_no_signal_falls_back_to_the_last_agent_step_and_no_agent_gives_none() -> None:
    steps = steps_table(
        "r",
        [
            ("user", "message", "Question?"),
            ("a", "message", "I think it is Ghent."),
            ("b", "message", "Agreed: Ghent."),
            ("system", "message", "Conversation ended."),
        ],
    )
    assert _pick(steps) == ("b", 2)
    only_task = steps_table("q", [("user", "message", "Question?")])
    assert _pick(only_task) is None


# ---- tracer-lite ----------------------------------------------------------------------


def _accuracy(preds: pl.DataFrame, labels: pl.DataFrame, split: str) -> tuple[float, float]:
    scored = preds.join(labels.filter(pl.col("split") == split), on="run_id")
    step = (scored["step"] == scored["decisive_step"]).mean()
    agent = (scored["agent"] == scored["decisive_agent"]).mean()
    return float(step), float(agent)


@pytest.fixture(scope="module")
def synthetic() -> dict[str, pl.DataFrame]:
    return synthetic_runs(160)


FULL = TracerConfig.of(features="full")
"""The planted signal is a word: only the `full` feature set (hashed tokens) reads words."""


def test_tracer_learns_a_planted_signal(synthetic: dict[str, pl.DataFrame]) -> None:
    model = fit(synthetic["runs"], synthetic["steps"], synthetic["labels"], FULL)
    assert model.n_train_runs == 80
    preds = predict(model, synthetic["runs"], synthetic["steps"])
    to_arrow(preds, PREDICTIONS)
    assert preds.height == 160 and preds["parse_ok"].all()
    step_acc, agent_acc = _accuracy(preds, synthetic["labels"], "test")
    assert step_acc >= 0.95  # random is 1/6
    assert agent_acc >= 0.95
    # without the marker the same model is no better than chance on the test runs
    blind = synthetic["steps"].with_columns(pl.col("content").str.replace("zorblax", "alpha"))
    assert _accuracy(predict(model, synthetic["runs"], blind), synthetic["labels"], "test")[0] < 0.5


def test_tracer_is_deterministic_and_round_trips(synthetic: dict[str, pl.DataFrame]) -> None:
    a = fit(synthetic["runs"], synthetic["steps"], synthetic["labels"], FULL)
    b = fit(synthetic["runs"], synthetic["steps"], synthetic["labels"], FULL)
    assert a.to_json() == b.to_json()
    again = TracerModel.from_json(a.to_json())
    assert again.to_json() == a.to_json()
    first = predict(a, synthetic["runs"], synthetic["steps"]).drop("latency_s")
    assert first.equals(predict(again, synthetic["runs"], synthetic["steps"]).drop("latency_s"))
    other_seed = fit(
        synthetic["runs"],
        synthetic["steps"],
        synthetic["labels"],
        TracerConfig.of(features="full", seed=1),
    )
    assert other_seed.to_json() != a.to_json()  # the seed is what fixes the init


def test_tracer_reads_only_the_train_split(synthetic: dict[str, pl.DataFrame]) -> None:
    labels = synthetic["labels"]
    model = fit(synthetic["runs"], synthetic["steps"], labels, FULL)
    scrambled = labels.with_columns(
        pl.when(pl.col("split") != "train")
        .then((pl.col("decisive_step") % 6) + 1)
        .otherwise(pl.col("decisive_step"))
        .alias("decisive_step"),
        pl.when(pl.col("split") != "train")
        .then(pl.lit("nobody"))
        .otherwise(pl.col("decisive_agent"))
        .alias("decisive_agent"),
    )
    assert not scrambled.equals(labels)
    same = fit(synthetic["runs"], synthetic["steps"], scrambled, FULL)
    assert same.to_json() == model.to_json()
    # and the train labels do matter
    moved = labels.with_columns(
        pl.when(pl.col("split") == "train")
        .then((pl.col("decisive_step") % 6) + 1)
        .otherwise(pl.col("decisive_step"))
        .alias("decisive_step")
    )
    assert fit(synthetic["runs"], synthetic["steps"], moved, FULL).to_json() != model.to_json()


def test_tracer_fit_saves_a_model_that_predicts_the_same(
    synthetic: dict[str, pl.DataFrame], tmp_path: Path
) -> None:
    from whowhen.attribution.stage import tracer_fit
    from whowhen.schema import write_table

    inputs = {
        name: str(write_table(synthetic[name], spec, tmp_path / f"{name}.parquet"))
        for name, spec in (("runs", RUNS), ("steps", STEPS), ("labels", LABELS))
    }
    out = tmp_path / "models" / "tracer_lite.json"
    built = tmp_path / "models" / "tracer_lite_built.json"
    outputs = {"model": str(out), "built_model": str(built)}
    outputs |= {"held_out": str(tmp_path / "oof"), "lifts": str(tmp_path / "lifts")}
    tracer_fit({}, inputs, outputs, {})
    saved = TracerModel.load(out)
    direct = fit(synthetic["runs"], synthetic["steps"], synthetic["labels"])
    assert saved.weights == direct.weights and saved.trained_on == {"built": direct.n_train_runs}
    assert TracerModel.load(built).weights == direct.weights  # nothing imported: the same


def test_without_a_train_split_the_tracer_predicts_nothing(
    synthetic: dict[str, pl.DataFrame],
) -> None:
    """An empty dataset (a model that never succeeded) is a result, not a crash: the
    model is saved, says it was fitted on nothing, and names no step."""
    no_train = synthetic["labels"].with_columns(pl.lit("test").alias("split"))
    model = fit(synthetic["runs"], synthetic["steps"], no_train)
    assert model.n_train_runs == 0
    preds = predict(model, synthetic["runs"], synthetic["steps"])
    assert preds["step"].is_null().all() and preds["reason"].str.contains("not fitted").all()


@needs_sample
def test_heuristic_and_tracer_run_on_imported_who_and_when(
    synthetic: dict[str, pl.DataFrame],
) -> None:
    from whowhen.imports.who_and_when import import_who_and_when

    data = import_who_and_when(SAMPLE).tables()
    runs, steps = data["runs"], data["steps"]
    model = fit(synthetic["runs"], synthetic["steps"], synthetic["labels"])
    preds = predict(model, runs, steps)
    assert preds.height == runs.height and preds["parse_ok"].all()
    candidates = agent_steps(steps)
    valid = set(zip(candidates["run_id"], candidates["actor"], candidates["step"], strict=True))
    for row in preds.iter_rows(named=True):
        assert (row["run_id"], row["agent"], row["step"]) in valid
        run_steps = steps.filter(pl.col("run_id") == row["run_id"])
        picked = error_signal(agent_steps(run_steps), run_steps)
        assert picked is not None and (row["run_id"], *picked) in valid


def test_a_stalled_ledger_marks_the_steps_after_it_and_long_pages_keep_their_numbers() -> None:
    """`stalled_before` is 1 only after a progress check that says the run is stuck; in a
    long run a step's values are read from its opening (a page dump's numbers are the
    page's), in a short one from the whole text."""
    from whowhen.attribution import tracer_features as tf

    stalled = 'Updated Ledger:\n{"is_progress_being_made": {"reason": "none", "answer": false}}'
    rows = [("user", "message", "Find the price.")]
    rows += [("WebSurfer", "message", f"I typed query {i}.") for i in range(3)]
    rows += [("Orchestrator", "message", stalled), ("WebSurfer", "message", "I clicked.")]
    dense, _, cands = tf.run_features(steps_table("s", rows), "ledger", 64)
    assert [d["stalled_before"] for d in dense] == [0.0, 0.0, 0.0, 0.0, 1.0]
    assert [c["step"] for c in cands] == [1, 2, 3, 4, 5]

    page = {"content": "x" * tf.LONG_HEAD + " 4711", "tool": None, "tool_args": None}
    assert tf._nums(page) == {"4711"}  # a short run reads the whole step
    assert tf._nums(page, tf.LONG_HEAD) == set()  # a long run reads its opening
