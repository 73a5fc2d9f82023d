"""`whowhen view` and `whowhen runs` on dataset folders of every kind: Who&When, JSONL and
gateway imports (labelled or not) and the pipeline's layout (predictions in
`results/predictions/<dataset>/`), each attributor's predictions marked, bad input one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from whowhen.analysis.viewer import page_name
from whowhen.cli import main

from .recordings import write_recording
from .wnw_files import ag_record, hc_record, write_files


def _import(argv: list[str]) -> None:
    assert main(["import", *argv]) == 0


def who_and_when(tmp: Path) -> Path:
    raw = tmp / "raw"
    write_files(raw / "Algorithm-Generated", {"1.json": ag_record(), "2.json": ag_record("0")})
    write_files(raw / "Hand-Crafted", {"1.json": hc_record()})
    _import(["who-and-when", str(raw), "-o", str(tmp / "wnw")])
    return tmp / "wnw"


def jsonl(tmp: Path) -> Path:
    lines = [
        {"run_id": f"j{i}", "history": [{"name": "a", "content": "hi"},
                                        {"name": "b", "content": f"oops {i}"}],
         "mistake_agent": "b", "mistake_step": 1}
        for i in range(2)
    ]  # fmt: skip
    (tmp / "logs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    _import(["jsonl", str(tmp / "logs.jsonl"), "-o", str(tmp / "jl")])
    return tmp / "jl"


def gateway(tmp: Path) -> Path:
    write_recording(tmp / "rec", "run-ok", "6 * 7", "42", True)
    write_recording(tmp / "rec", "run-bad", "6 * 7", "43", False)
    _import(["gateway", str(tmp / "rec"), "-o", str(tmp / "gw")])
    return tmp / "gw"


def pipeline(tmp: Path) -> Path:
    """The pipeline's layout: `results/dataset/` (no manifest), its predictions under
    `results/predictions/built/` (attributed here, then moved there)."""
    built = who_and_when(tmp / "src")
    assert main(["attribute", str(built), "--attributor", "first_agent_step"]) == 0
    dataset = tmp / "results" / "dataset"
    dataset.mkdir(parents=True)
    for name in ("runs", "steps", "labels"):
        (built / f"{name}.parquet").rename(dataset / f"{name}.parquet")
    (tmp / "results" / "predictions").mkdir()
    (built / "predictions").rename(tmp / "results" / "predictions" / "built")
    return dataset


MAKERS = {"who_and_when": who_and_when, "jsonl": jsonl, "gateway": gateway}


def _page(out: Path, run_id: str) -> str:
    return (out / f"{page_name(run_id)}.html").read_text()


def _gold_step(page: str) -> int | None:
    found = re.search(r'<section class="step k-\w+ gold" id="step-(\d+)"', page)
    return int(found[1]) if found else None


@pytest.mark.parametrize("kind", MAKERS)
def test_view_writes_a_page_per_run_with_predictions_and_gold(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = MAKERS[kind](tmp_path)
    for attributor in ("first_agent_step", "last_agent_step"):
        assert main(["attribute", str(data), "--attributor", attributor]) == 0
    capsys.readouterr()
    out = tmp_path / "pages"
    assert main(["view", str(data), "-o", str(out)]) == 0
    said = capsys.readouterr().out
    runs = pl.read_parquet(data / "runs.parquet")["run_id"].to_list()
    labels = dict(pl.read_parquet(data / "labels.parquet").select("run_id", "decisive_step").rows())
    assert f"{len(runs)} trajectory pages" in said and str(out / "index.html") in said
    index = (out / "index.html").read_text()
    preds = pl.read_parquet(data / "predictions" / "last_agent_step.parquet")
    last = dict(preds.select("run_id", "step").rows())
    for run_id in runs:
        page = _page(out, run_id)
        assert f"{page_name(run_id)}.html" in index
        assert _gold_step(page) == labels.get(run_id)  # None: unlabelled, no gold marked
        for attributor in ("first_agent_step", "last_agent_step"):
            assert f'data-attributor="{attributor}"' in page
        marked = page.split(f'id="step-{last[run_id]}"', 1)[1].split("</section>", 1)[0]
        assert 'data-attributor="last_agent_step"' in marked


def test_view_finds_the_pipelines_predictions(tmp_path: Path, capsys) -> None:
    data = pipeline(tmp_path)
    assert main(["view", str(data), "-o", str(tmp_path / "pages")]) == 0
    run_id = pl.read_parquet(data / "runs.parquet")["run_id"][0]
    page = _page(tmp_path / "pages", run_id)
    assert 'data-attributor="first_agent_step"' in page and _gold_step(page) is not None


def test_view_of_bad_input_is_one_line(tmp_path: Path, capsys) -> None:
    out = str(tmp_path / "pages")
    assert main(["view", str(tmp_path / "nowhere"), "-o", out]) == 1
    assert capsys.readouterr().err == f"error: {tmp_path / 'nowhere'}: dataset folder not found\n"
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "notes.txt").write_text("hello")
    assert main(["view", str(tmp_path / "plain"), "-o", out]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a dataset folder" in err and "runs.parquet" in err
    assert not Path(out).exists()
    data = jsonl(tmp_path)
    (data / "predictions").mkdir()
    (data / "predictions" / "broken.parquet").write_bytes(b"not parquet")
    capsys.readouterr()
    assert main(["view", str(data), "-o", out]) == 0  # the other files still shown
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "broken.parquet" in err and err.startswith("warning: ")


def test_runs_lists_outcome_agents_steps_and_label(tmp_path: Path, capsys) -> None:
    data = gateway(tmp_path)
    capsys.readouterr()
    assert main(["runs", str(data)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["run_id", "outcome", "agents", "steps", "label"]
    rows = [line.split() for line in lines[2:] if line.startswith("run-")]
    assert rows == [
        ["run-bad", "failure", "planner,solver", "4", "-"],
        ["run-ok", "success", "planner,solver", "4", "-"],
    ]
    assert main(["runs", str(data), "--failed"]) == 0
    text = capsys.readouterr().out
    assert "run-bad" in text and "run-ok" not in text


def test_runs_shows_labels_as_agent_at_step(tmp_path: Path, capsys) -> None:
    data = who_and_when(tmp_path)
    capsys.readouterr()
    assert main(["runs", str(data)]) == 0
    lines = capsys.readouterr().out.splitlines()
    runs = pl.read_parquet(data / "runs.parquet").sort("run_id")
    labels = pl.read_parquet(data / "labels.parquet")
    table = [line.split() for line in lines[2 : 2 + runs.height]]
    assert [row[0] for row in table] == runs["run_id"].to_list()  # one row per run, sorted
    for row in table:
        label = labels.filter(pl.col("run_id") == row[0]).row(0, named=True)
        assert row[1] == "failure"
        assert row[-1] == f"{label['decisive_agent']}@{label['decisive_step']}"
    hand = labels.filter(pl.col("decisive_agent") == "WebSurfer")["run_id"][0]
    assert next(r for r in table if r[0] == hand)[2] == "Orchestrator,WebSurfer"


def test_runs_of_bad_input_is_one_line(tmp_path: Path, capsys) -> None:
    assert main(["runs", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a dataset folder" in err
