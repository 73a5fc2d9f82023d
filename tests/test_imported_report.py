"""The report's table per imported dataset: every attributor with intervals, and random's
analytic expectation on the same items beside them."""

from __future__ import annotations

import polars as pl

from whowhen.analysis import accuracy, random_expected
from whowhen.analysis.imported import RANDOM_ROW, answering, imported_html, imported_table
from whowhen.attribution.offline import attribute

from .tracer_data import synthetic_runs


def test_each_imported_dataset_gets_its_table_beside_random() -> None:
    data = synthetic_runs(24)
    runs = data["runs"].with_columns(
        pl.when(pl.col("run_id") < "run012")
        .then(pl.lit("arithmetic"))
        .otherwise(pl.lit("who_and_when"))
        .alias("benchmark")
    )
    names = ("random", "last_agent_step", "majority_agent")  # the last, with no labels: no answer
    preds = pl.concat([attribute(runs, data["steps"], a, 0) for a in names])
    acc = accuracy(data["labels"], preds, runs, 1)
    expected = random_expected(data["labels"], runs, data["steps"])
    table = imported_table(acc, expected, "who_and_when", answering(preds, runs))
    assert table["attributor"].to_list() == ["last_agent_step", "random", RANDOM_ROW]
    assert table["n"].to_list() == [12, 12, 12]
    assert all("[" in v for v in table["step_acc"][:2])  # value [lo, hi]
    chance = expected.filter((pl.col("dataset") == "who_and_when") & (pl.col("split") == "all"))
    assert table["step_acc"][2] == f"{chance['expected_step_acc'][0]:.3f}"
    html = "\n".join(imported_html(acc, expected, ["arithmetic"], answering(preds, runs)))
    assert "<h3>who_and_when</h3>" in html and "<h3>arithmetic</h3>" not in html
    assert "majority_agent" not in html  # a row of zeros would read as a result
    assert "majority_agent" in imported_table(acc, expected, "who_and_when")["attributor"].to_list()
    assert imported_html(acc, expected, ["arithmetic", "who_and_when"]) == []
