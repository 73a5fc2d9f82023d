"""The check the Who&When-shaped systems' tests share: built runs written as Who&When
files and imported again keep their speakers, their kinds of step and their gold step."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from whowhen.dataset.export import export_who_and_when
from whowhen.imports.who_and_when import import_who_and_when
from whowhen.runtime import Step
from whowhen.runtime.episode import Episode
from whowhen.runtime.records import step_rows


def check_round_trip(histories: list[list[Step]], folder: Path) -> None:
    """Export `histories` (gold: each run's first agent step after step 2), import them
    back, and compare speakers, kinds and gold steps."""
    runs, steps, labels = [], [], []
    for i, history in enumerate(histories):
        run_id = f"run{i}"
        steps += step_rows(Episode(history=list(history)), run_id)
        runs.append({"run_id": run_id, "task_id": f"t{i}", "question": history[0].content,
                     "gold_answer": "x"})  # fmt: skip
        gold = next(s for s in history if s.is_agent_step and s.step > 2)
        labels.append({"run_id": run_id, "decisive_agent": gold.actor,
                       "decisive_step": gold.step, "reason": "injected",
                       "mode": None})  # fmt: skip
    export_who_and_when(pl.DataFrame(runs), pl.DataFrame(steps), pl.DataFrame(labels), folder)
    result = import_who_and_when(folder, "Algorithm-Generated")
    assert not result.errors
    tables = result.tables()
    back = tables["steps"]
    for row in tables["runs"].to_dicts():
        history = histories[int(row["task_id"].removeprefix("t"))]
        mine = back.filter(pl.col("run_id") == row["run_id"]).sort("step")
        assert mine["actor"].to_list() == [s.actor for s in history]
        kinds = ["observation" if s.kind == "observation" else "message" for s in history]
        assert mine["kind"].to_list()[1:] == kinds[1:]  # the task: the user's message
    gold = {r["decisive_step"] for r in tables["labels"].to_dicts()}
    assert gold == {r["decisive_step"] for r in labels}
