from __future__ import annotations

import polars as pl
import pytest

from whowhen.attribution import attribute
from whowhen.attribution.baselines import agent_steps
from whowhen.errors import WhowhenError

from .helpers import pipeline


@pytest.fixture(scope="module")
def data():
    return pipeline("solver_verifier")


def test_baselines_predict_agent_steps(data) -> None:
    runs, steps = data["runs"], data["steps"]
    cands = agent_steps(steps)
    for name in ("random", "first_agent_step", "last_agent_step"):
        pred = attribute(runs, steps, name, seed=1)
        assert pred.height == runs.height and pred["parse_ok"].all()
        joined = pred.join(cands, left_on=["run_id", "step"], right_on=["run_id", "step"])
        assert joined.height == pred.height and (joined["agent"] == joined["actor"]).all()
    first = attribute(runs, steps, "first_agent_step", 1)
    assert (first["step"] == 1).all()  # step 0 is the task, step 1 the first agent action
    last = attribute(runs, steps, "last_agent_step", 1)
    assert (last["agent"] == "verifier").all()


def test_random_is_seeded(data) -> None:
    a = attribute(data["runs"], data["steps"], "random", 1)
    assert a.equals(attribute(data["runs"], data["steps"], "random", 1))
    assert not a["step"].equals(attribute(data["runs"], data["steps"], "random", 2)["step"])


def test_run_without_agent_steps_gets_an_empty_prediction(data) -> None:
    runs = pl.concat(
        [data["runs"], data["runs"].head(1).with_columns(pl.lit("lonely").alias("run_id"))]
    )
    pred = attribute(runs, data["steps"], "last_agent_step", 1)
    row = pred.filter(pl.col("run_id") == "lonely").row(0, named=True)
    assert row["step"] is None and not row["parse_ok"]


def test_unknown_attributor(data) -> None:
    with pytest.raises(WhowhenError, match="unknown attributor"):
        attribute(data["runs"], data["steps"], "oracle", 1)
