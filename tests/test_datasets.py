from __future__ import annotations

import json

import polars as pl
import pytest

from whowhen.dataset.export import export_who_and_when
from whowhen.errors import WhowhenError
from whowhen.imports.generic import import_generic
from whowhen.imports.stage import import_dataset
from whowhen.imports.who_and_when import agent_of_role, import_who_and_when

from .helpers import pipeline
from .wnw_files import SAMPLE, ag_record, hc_record, needs_sample, write_files


@pytest.mark.parametrize(
    ("role", "agent"),
    [
        ("Orchestrator (thought)", "Orchestrator"),
        ("Orchestrator (-> WebSurfer)", "Orchestrator"),
        ("Orchestrator (termination condition)", "Orchestrator"),
        ("WebSurfer", "WebSurfer"),
        ("human", "user"),
    ],
)
def test_hand_crafted_roles_map_to_agents(role: str, agent: str) -> None:
    assert agent_of_role(role) == agent


def test_import_both_subsets_keeps_indexing_and_fields(tmp_path) -> None:
    write_files(tmp_path / "Algorithm-Generated", {"1.json": ag_record()})
    write_files(tmp_path / "Hand-Crafted", {"7.json": hc_record()})
    result = import_who_and_when(tmp_path)
    assert result.errors == [] and result.n_runs == 2
    t = result.tables()
    runs = {r["subset"]: r for r in t["runs"].iter_rows(named=True)}
    assert runs["Algorithm-Generated"]["question"] == "What is 2+2?"
    assert runs["Algorithm-Generated"]["gold_answer"] == "4"
    assert json.loads(runs["Algorithm-Generated"]["meta"])["level"] == "1"
    assert runs["Hand-Crafted"]["n_steps"] == 4
    labels = t["labels"].join(t["runs"].select("run_id", "subset"), on="run_id")
    hc = labels.filter(pl.col("subset") == "Hand-Crafted").row(0, named=True)
    assert (hc["decisive_agent"], hc["decisive_step"], hc["reason"]) == (
        "WebSurfer",
        3,
        "wrong page",
    )
    hc_steps = t["steps"].filter(pl.col("run_id") == hc["run_id"]).sort("step")
    assert hc_steps["actor"].to_list() == ["user", "Orchestrator", "Orchestrator", "WebSurfer"]
    assert hc_steps["role"][2] == "Orchestrator (-> WebSurfer)"
    assert hc_steps.row(hc["decisive_step"], named=True)["actor"] == hc["decisive_agent"]


def test_one_subset_folder_and_ids_are_stable(tmp_path) -> None:
    folder = write_files(
        tmp_path / "Algorithm-Generated", {"1.json": ag_record(), "2.json": ag_record("0")}
    )
    a, b = import_who_and_when(folder), import_who_and_when(folder)
    assert a.n_runs == 2 and a.tables()["runs"]["subset"].unique().to_list() == [
        "Algorithm-Generated"
    ]
    assert a.tables()["runs"]["run_id"].equals(b.tables()["runs"]["run_id"])


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "bad JSON"),
        (ag_record(step="9"), "field 'mistake_step': step 9 out of range (history has 3 entries)"),
        (ag_record(step="two"), "field 'mistake_step': 'two' is not a step index"),
        (
            {k: v for k, v in ag_record().items() if k != "mistake_agent"},
            "field 'mistake_agent': missing field",
        ),
        (
            ag_record(history=[{"role": "user"}, {"content": "a", "name": "b"}]),
            "field 'history.0.content'",
        ),
        ([1, 2], "top level must be a JSON object"),
    ],
)
def test_malformed_file_is_reported_and_others_import(tmp_path, content, expected) -> None:
    folder = write_files(
        tmp_path / "Algorithm-Generated",
        {"1.json": ag_record(), "2.json": content, "3.json": ag_record("2")},
    )
    result = import_who_and_when(folder)
    assert result.n_runs == 2
    assert len(result.errors) == 1
    assert "2.json" in result.errors[0] and expected in result.errors[0]


def test_not_a_folder(tmp_path) -> None:
    with pytest.raises(WhowhenError, match="no Who&When JSON files"):
        import_who_and_when(tmp_path)


@needs_sample
def test_shared_sample_imports_without_errors() -> None:
    result = import_who_and_when(SAMPLE)
    assert result.errors == []
    t = result.tables()
    assert result.n_runs == 9
    assert sorted(t["runs"]["subset"].unique()) == ["Algorithm-Generated", "Hand-Crafted"]
    # every gold label points at a step of its run whose actor is the gold agent
    joined = t["labels"].join(
        t["steps"], left_on=["run_id", "decisive_step"], right_on=["run_id", "step"]
    )
    assert joined.height == 9
    assert (joined["actor"] == joined["decisive_agent"]).all()


def test_generic_jsonl_trajectories_with_mapping(tmp_path) -> None:
    lines = [
        {
            "id": "t1",
            "task": {"q": "sum"},
            "msgs": [{"who": "planner", "text": "plan"}, {"who": "coder", "text": "code"}],
            "blame": {"agent": "coder", "step": 1},
        },
        {
            "id": "t2",
            "msgs": [{"who": "planner", "text": "p"}],
            "blame": {"agent": "planner", "step": 5},
        },
        "not an object",
    ]
    path = tmp_path / "logs.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n{broken\n")
    fields = {
        "run_id": "id",
        "history": "msgs",
        "actor": "who",
        "content": "text",
        "question": "task.q",
        "decisive_agent": "blame.agent",
        "decisive_step": "blame.step",
    }
    result = import_generic(path, "jsonl", "trajectories", fields, "mylogs")
    assert result.n_runs == 1
    assert len(result.errors) == 3
    assert any("line 2" in e and "blame.step" in e and "out of range" in e for e in result.errors)
    assert any("line 3" in e and "not a JSON object" in e for e in result.errors)
    assert any("line 4" in e and "bad JSON" in e for e in result.errors)
    t = result.tables()
    assert t["runs"]["question"][0] == "sum" and t["runs"]["benchmark"][0] == "mylogs"
    assert t["labels"].select("decisive_agent", "decisive_step").row(0) == ("coder", 1)


def test_generic_parquet_steps_layout(tmp_path) -> None:
    rows = pl.DataFrame(
        {
            "trace": ["a", "a", "a", "b", "b"],
            "idx": [2, 0, 1, 0, 1],
            "agent": ["x", "user", "y", "x", "y"],
            "msg": ["m2", "m0", "m1", "n0", "n1"],
            "culprit": ["y", "y", "y", "x", "x"],
            "culprit_step": [1, 1, 1, 0, 0],
        }
    )
    path = tmp_path / "steps.parquet"
    rows.write_parquet(path)
    spec = {
        "name": "mine",
        "format": "parquet",
        "path": str(path),
        "layout": "steps",
        "fields": {
            "run_id": "trace",
            "step": "idx",
            "actor": "agent",
            "content": "msg",
            "decisive_agent": "culprit",
            "decisive_step": "culprit_step",
        },
    }
    result = import_dataset(spec)
    assert result.errors == [] and result.n_runs == 2
    steps = result.tables()["steps"].sort("run_id", "step")
    a = steps.filter(pl.col("run_id") == steps["run_id"][0])
    assert a["content"].to_list() in (["m0", "m1", "m2"], ["n0", "n1"])


def test_generic_bad_parquet_file(tmp_path) -> None:
    path = tmp_path / "x.parquet"
    path.write_bytes(b"junk")
    with pytest.raises(WhowhenError, match="not a readable Parquet file"):
        import_generic(path, "parquet", "steps", {}, "d")


def test_export_then_import_round_trips_labels_exactly(tmp_path) -> None:
    data = pipeline("solver_verifier")
    paths = export_who_and_when(data["runs"], data["steps"], data["labels"], tmp_path / "exp")
    assert len(paths) == data["labels"].height > 0
    # file names are hashes: nothing reveals the injected step or mode
    assert all(len(p.stem) == 16 and "inject" not in p.read_text() for p in paths)
    back = import_who_and_when(tmp_path / "exp")
    assert back.errors == []
    got = back.tables()["labels"].join(back.tables()["runs"].select("run_id", "meta"), on="run_id")
    got = got.with_columns(
        pl.col("meta")
        .str.json_path_match("$.file")
        .str.replace(".json", "", literal=True)
        .alias("orig")
    )
    pairs = sorted(zip(got["orig"], got["decisive_agent"], got["decisive_step"], strict=True))
    want = sorted(data["labels"].select("run_id", "decisive_agent", "decisive_step").rows())
    assert pairs == want
