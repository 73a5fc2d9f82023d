"""Scores from SQL: DuckDB runs the files in `sql/` over registered Arrow tables."""

from __future__ import annotations

from importlib import resources
from typing import Any

import duckdb
import polars as pl

from whowhen.attribution.baselines import agent_steps

ACCURACY_KEYS = (
    "n",
    "agent_acc",
    "step_acc",
    "step_acc_pm1",
    "step_acc_pmk",
    "agent_acc_substring",
    "step_acc_substring",
)


def sql_text(name: str) -> str:
    return resources.files("whowhen.analysis").joinpath("sql", f"{name}.sql").read_text()


def run_sql(
    name: str, tables: dict[str, pl.DataFrame], params: dict[str, Any] | None = None
) -> pl.DataFrame:
    """Run `sql/<name>.sql` with `tables` visible under their names and the macros of
    `sql/_macros.sql` (Wilson intervals) defined. One thread: a parallel `sum` of doubles
    adds in whatever order the threads finish, and a total that sits on a rounding edge
    (0.4851455 -> 0.485145 or 0.485146) then differs between two runs of the same data."""
    con = duckdb.connect(config={"threads": 1})
    try:
        con.execute(sql_text("_macros"))
        for table_name, frame in tables.items():
            con.register(table_name, frame.to_arrow())
        return pl.from_arrow(con.sql(sql_text(name), params=params or {}).to_arrow_table())
    finally:
        con.close()


def accuracy(
    labels: pl.DataFrame,
    predictions: pl.DataFrame,
    runs: pl.DataFrame,
    tolerance: int,
    covered_only: bool = False,
) -> pl.DataFrame:
    """Exact and Who&When-compatible (substring) accuracy per attributor, dataset, split.
    A labelled run an attributor did not predict counts as wrong (`missing` says how
    many), unless `covered_only`: then only the runs it predicted are scored."""
    return run_sql(
        "accuracy",
        {"labels": labels, "predictions": predictions, "runs": runs},
        {"tolerance": tolerance, "covered_only": covered_only},
    )


def random_expected(labels: pl.DataFrame, runs: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """Analytic expected accuracy of the uniform random baseline over the same candidates."""
    return run_sql(
        "random_expected", {"labels": labels, "runs": runs, "candidates": agent_steps(steps)}
    )


def funnel(continuations: pl.DataFrame) -> pl.DataFrame:
    # tables from before a column existed (the earlier-slip flag, the control outcome)
    for name, dtype in (("earlier_error_step", pl.Int64), ("controls_passed", pl.Boolean)):
        if name not in continuations.columns:
            continuations = continuations.with_columns(pl.lit(None, dtype=dtype).alias(name))
    return run_sql("funnel", {"continuations": continuations})


def timing(predictions: pl.DataFrame) -> pl.DataFrame:
    """Latency per attributor (`sql/timing.sql`): the run's one non-reproducible table."""
    return run_sql("timing", {"predictions": predictions})


def rerollout_drift(continuations: pl.DataFrame) -> pl.DataFrame:
    return run_sql("rerollout", {"continuations": continuations})


def recovery_by_mode(continuations: pl.DataFrame) -> pl.DataFrame:
    return run_sql("recovery", {"continuations": continuations})


def composition(labels: pl.DataFrame, runs: pl.DataFrame) -> pl.DataFrame:
    return run_sql("composition", {"labels": labels, "runs": runs})


def metrics(
    acc: pl.DataFrame,
    funnel_table: pl.DataFrame,
    labels: pl.DataFrame,
    runs: pl.DataFrame,
    expected: pl.DataFrame | None = None,
) -> dict[str, Any]:
    """The headline numbers for `results/metrics.json` (DVC metrics)."""
    totals = funnel_table.select(pl.col("injections", "flipped", "recovered", "invalid").sum())
    n_inj = int(totals["injections"][0] or 0)
    exact = float((funnel_table["prefix_exact_rate"] * funnel_table["injections"]).sum())

    def rounded(row: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
        return {k: round(row[k], 6) if isinstance(row[k], float) else row[k] for k in keys}

    out = {
        "dataset": {
            "items": labels.height,
            "train": int((labels["split"] == "train").sum()),
            "dev": int((labels["split"] == "dev").sum()),
            "test": int((labels["split"] == "test").sum()),
            "by_system": dict(sorted(runs.group_by("system").len().rows())),
        },
        "injection": {k: int(totals[k][0] or 0) for k in totals.columns}
        | {"prefix_fidelity": round(exact / n_inj, 6) if n_inj else None},
        "attribution": {
            f"{r['attributor']}/{r['dataset']}/{r['split']}": rounded(r, ACCURACY_KEYS)
            for r in acc.iter_rows(named=True)
        },
    }
    if expected is not None:
        out["dataset"]["by_dataset"] = {
            r["dataset"]: r["n"]
            for r in expected.filter(pl.col("split") == "all").iter_rows(named=True)
            if r["dataset"] != "all"
        }
        out["random_expected"] = {
            f"{r['dataset']}/{r['split']}": rounded(
                r, ("n", "expected_agent_acc", "expected_step_acc")
            )
            for r in expected.iter_rows(named=True)
        }
    return out
