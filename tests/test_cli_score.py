"""`whowhen score` on hand-made tables (missing and unmatched predictions, --covered-only,
intervals, the 'all' row), a closed stdout pipe, and the model options' defaults
(packaged price table, user response cache) from outside the repository."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from whowhen.analysis.attributor_info import attributor_info_from_config
from whowhen.cli import PIPE_CLOSED, main
from whowhen.cli.defaults import PROJECT_CACHE, default_cache_dir, in_project_repo
from whowhen.config import config_schema
from whowhen.models import DEFAULT_PRICES, load_prices, make_client, prices_path
from whowhen.schema import LABELS, PREDICTIONS, RUNS, STEPS, write_table

from .conftest import ROOT

Run = tuple[str, str | None, str, int]
"""(run id, subset, gold agent, gold step) of a who_and_when-like run."""


def make_dataset(folder: Path, runs: list[Run]) -> Path:
    """runs/steps/labels tables: each run is a task, then agents a (step 1) and b (step 2)."""
    write_table(
        [
            {"run_id": r, "benchmark": "bench", "subset": sub, "task_id": r, "question": "q?",
             "modality": "text", "system": "s", "topology": "multi", "policy": "p", "seed": 0,
             "origin": "imported", "success": False, "n_steps": 3}
            for r, sub, _agent, _step in runs
        ],
        RUNS,
        folder / "runs.parquet",
    )  # fmt: skip
    write_table(
        [
            {"run_id": r, "step": i, "actor": actor, "kind": "message", "content": f"{actor} {i}"}
            for r, *_ in runs
            for i, actor in enumerate(("user", "a", "b"))
        ],
        STEPS,
        folder / "steps.parquet",
    )
    write_table(
        [
            {"run_id": r, "decisive_agent": agent, "decisive_step": step, "source": "imported",
             "split": "test"}
            for r, _sub, agent, step in runs
        ],
        LABELS,
        folder / "labels.parquet",
    )  # fmt: skip
    return folder


def predict(folder: Path, attributor: str, rows: list[tuple[str, str, int]]) -> None:
    """A predictions file of `attributor`: (run id, agent, step) rows."""
    write_table(
        [
            {"run_id": r, "attributor": attributor, "agent": agent, "step": step,
             "parse_ok": True}
            for r, agent, step in rows
        ],
        PREDICTIONS,
        folder / "predictions" / f"{attributor}.parquet",
    )  # fmt: skip


FOUR = [("r1", None, "a", 1), ("r2", None, "a", 1), ("r3", None, "b", 2), ("r4", None, "b", 2)]


@pytest.fixture
def half(tmp_path: Path) -> Path:
    """Four labelled runs; `half` predicts two of them (both right) and one unknown run."""
    data = make_dataset(tmp_path / "ds", FOUR)
    predict(data, "half", [("r1", "a", 1), ("r3", "b", 2), ("ghost", "a", 1)])
    return data


def _scores(data: Path) -> list[dict]:
    return json.loads((data / "scores.json").read_text())["accuracy"]


def _total(data: Path, attributor: str) -> dict:
    return next(
        r
        for r in _scores(data)
        if r["attributor"] == attributor and r["dataset"] == "all" and r["split"] == "all"
    )


def test_a_labelled_run_without_a_prediction_is_scored_wrong(half: Path, capsys) -> None:
    assert main(["score", str(half)]) == 0
    captured = capsys.readouterr()
    total = _total(half, "half")
    assert (total["n"], total["missing"], total["unmatched"]) == (4, 2, 1)
    assert total["step_acc"] == 0.5 and total["agent_acc"] == 0.5
    assert "scored wrong" in captured.out and "COVERED" not in captured.out
    assert "warning: half: 1 of its 3 predictions match no labelled run" in captured.err
    assert "warning: half: 2 labelled runs have no prediction, scored wrong" in captured.err
    expected = json.loads((half / "scores.json").read_text())["random_expected"]
    assert {r["n"] for r in expected if r["dataset"] == "all"} == {total["n"]}


def test_covered_only_scores_the_predicted_runs_and_says_so(half: Path, capsys) -> None:
    assert main(["score", str(half), "--covered-only"]) == 0
    out = capsys.readouterr().out
    total = _total(half, "half")
    assert (total["n"], total["missing"], total["step_acc"]) == (2, 2, 1.0)
    assert out.splitlines()[0].startswith("Attribution accuracy, COVERED RUNS ONLY")
    assert json.loads((half / "scores.json").read_text())["covered_only"] is True


def test_predictions_for_no_labelled_run_warn(tmp_path: Path, capsys) -> None:
    data = make_dataset(tmp_path / "ds", FOUR)
    predict(data, "elsewhere", [("x1", "a", 1), ("x2", "b", 2)])
    assert main(["score", str(data)]) == 0
    err = capsys.readouterr().err
    assert "warning: elsewhere: none of its 2 predictions matches a labelled run" in err
    assert (_total(data, "elsewhere")["n"], _total(data, "elsewhere")["step_acc"]) == (4, 0.0)


def test_the_table_shows_n_and_95_percent_intervals(half: Path, capsys) -> None:
    assert main(["score", str(half), "--scoring", "exact"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header, row = lines[2], next(x for x in lines if x.startswith("half "))
    assert re.search(r"\bn\s+missing\s+unmatched\b", header)
    total = _total(half, "half")
    interval = f"0.500 [{total['step_acc_lo']:.3f}, {total['step_acc_hi']:.3f}]"
    assert interval in row and re.search(r"\s4\s+2\s+1\s", row)


def test_the_all_row_only_with_two_or_more_datasets(tmp_path: Path, capsys) -> None:
    one = make_dataset(tmp_path / "one", FOUR)
    predict(one, "p", [("r1", "a", 1)])
    assert main(["score", str(one)]) == 0
    out = capsys.readouterr().out
    assert not re.search(r"^p\s+all\s", out, re.M)  # the accuracy table
    assert not re.search(r"^all\s", out, re.M)  # the random expectation beside it
    assert {r["dataset"] for r in _scores(one)} == {"all", "bench"}  # the JSON keeps it
    two = [(r, "A" if i % 2 else "B", agent, step) for i, (r, _s, agent, step) in enumerate(FOUR)]
    both = make_dataset(tmp_path / "two", two)
    predict(both, "p", [("r1", "a", 1)])
    assert main(["score", str(both)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^p\s+all\s", out, re.M) and re.search(r"^all\s", out, re.M)


class _ClosedPipe:
    """A stdout whose reader has gone away."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_stdout_ends_quietly(half: Path, monkeypatch) -> None:
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert main(["score", str(half)]) == PIPE_CLOSED


def test_score_into_a_closed_pipe_prints_no_traceback(half: Path) -> None:
    code = "from whowhen.cli import main; raise SystemExit(main())"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "score", str(half)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    proc.stdout.close()  # as `| head` does, before the command has written a line
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == PIPE_CLOSED
    assert "Traceback" not in err and "BrokenPipeError" not in err
    assert (half / "scores.json").exists()  # written before the tables are printed


def test_the_price_table_ships_with_the_package(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert DEFAULT_PRICES.is_file() and DEFAULT_PRICES.parent.name == "data"
    assert prices_path() == prices_path(None) == DEFAULT_PRICES
    assert prices_path("config/prices.yaml") == DEFAULT_PRICES  # the former place, gone
    assert load_prices().price("scripted/standin").family == "standin"
    own = tmp_path / "mine.yaml"
    own.write_text("models:\n  openai/x: {input: 1, output: 2}\n")
    assert prices_path("mine.yaml") == Path("mine.yaml")
    assert set(load_prices(prices_path(str(own))).prices) == {"openai/x"}
    llm = config_schema()["properties"]["llm"]["properties"]
    assert llm["prices"]["default"] is None  # `llm.prices` unset: the packaged table
    client = make_client("scripted/standin", {"cache_dir": None, "progress": False})
    assert client.prices.price("scripted/standin") is not None
    info = attributor_info_from_config(
        {"llm": [{"name": "s_all_at_once", "model": "scripted/standin"}]}, {}, None
    )
    assert info["s_all_at_once"]["open_weight"] == "true"


def test_the_response_cache_default_depends_on_where_it_runs(tmp_path, monkeypatch) -> None:
    assert in_project_repo(ROOT) and default_cache_dir(ROOT) == PROJECT_CACHE
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir(tmp_path) == str(tmp_path / "xdg" / "whowhen" / "responses")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    expected = tmp_path / "home" / ".cache" / "whowhen" / "responses"
    assert default_cache_dir(tmp_path) == str(expected)


def test_attribute_with_a_model_from_outside_the_repository(tmp_path, monkeypatch, capsys) -> None:
    data = make_dataset(tmp_path / "ds", FOUR)
    work = tmp_path / "elsewhere"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    args = ["attribute", str(data), "--attributor", "all_at_once", "--model", "scripted/standin"]
    assert main(args) == 0, capsys.readouterr().err
    assert "4 predictions" in capsys.readouterr().out
    assert any((tmp_path / "xdg" / "whowhen" / "responses").rglob("*"))
    assert list(work.iterdir()) == []  # no .cache/ left in the working directory
    preds = pl.read_parquet(data / "predictions" / "all_at_once__scripted_standin.parquet")
    assert preds["cost_usd"].sum() > 0  # priced from the packaged table
