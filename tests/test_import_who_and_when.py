"""Who&When import: subsets read from each file's content, role detail kept for `show`
and prompts, doubtful public labels warned about, tool output imported as observations,
and the manifest that records how."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import polars as pl
import pytest

from whowhen.attribution.baselines import agent_steps
from whowhen.attribution.llm import LLMAttributor, build_request
from whowhen.cli import main
from whowhen.imports.stage import import_dataset, stage
from whowhen.imports.who_and_when import (
    TOOL_SPEAKERS,
    detect_subset,
    import_who_and_when,
    parse_tool_speakers,
)
from whowhen.schema import step_label
from whowhen.trajectory import render_trajectory

from .wnw_files import SAMPLE, ag_record, hc_record, needs_sample, write_files


def _hc_terminal(step: str = "3", agent: str = "Coder") -> dict:
    """Hand-Crafted, with Magentic-One's terminal speaking step 4."""
    return {
        "question": "Run it",
        "ground_truth": "7",
        "is_corrected": False,
        "history": [
            {"content": "Run it", "role": "human"},
            {"content": "plan", "role": "Orchestrator (thought)"},
            {"content": "write code", "role": "Orchestrator (-> Coder)"},
            {"content": "print(3+3)", "role": "Coder"},
            {"content": "6", "role": "ComputerTerminal"},
        ],
        "mistake_agent": agent,
        "mistake_step": step,
        "mistake_reason": "off by one",
    }


def _tables(result) -> dict[str, pl.DataFrame]:
    assert result.errors == []
    return result.tables()


def _only(frame: pl.DataFrame) -> dict:
    assert frame.height == 1
    return frame.row(0, named=True)


# --- 1. subset and system from each file's content ------------------------------------


@pytest.mark.parametrize(
    ("history", "subset"),
    [
        (ag_record()["history"], "Algorithm-Generated"),
        (hc_record()["history"], "Hand-Crafted"),
        (_hc_terminal()["history"], "Hand-Crafted"),
        ([{"content": "x", "role": "assistant"}], "Hand-Crafted"),  # role only
        ([{"content": "x", "role": "assistant", "name": "Solver"}], "Algorithm-Generated"),
    ],
)
def test_detect_subset(history: list[dict], subset: str) -> None:
    assert detect_subset(history) == subset


def test_folder_names_do_not_decide_the_subset(tmp_path: Path) -> None:
    write_files(tmp_path / "HC", {"1.json": hc_record()})
    write_files(tmp_path / "Hand-Crafted", {"1.json": ag_record()})  # misfiled: still AG
    runs = _tables(import_who_and_when(tmp_path))["runs"]
    assert sorted(runs.select("subset", "system").rows()) == [
        ("Algorithm-Generated", "captain_agent"),
        ("Hand-Crafted", "magentic_one"),
    ]


def test_a_folder_of_both_subsets_classifies_each_file(tmp_path: Path) -> None:
    folder = write_files(
        tmp_path / "mixed", {"1.json": ag_record(), "2.json": hc_record(), "3.json": ag_record("0")}
    )
    runs = _tables(import_who_and_when(folder))["runs"]
    got = {json.loads(r["meta"])["file"]: r["system"] for r in runs.iter_rows(named=True)}
    assert got == {"1.json": "captain_agent", "2.json": "magentic_one", "3.json": "captain_agent"}


def test_the_subset_option_overrides_detection(tmp_path: Path) -> None:
    folder = write_files(tmp_path / "x", {"1.json": ag_record(), "2.json": hc_record()})
    runs = _tables(import_who_and_when(folder, subset="Hand-Crafted"))["runs"]
    assert runs["subset"].unique().to_list() == ["Hand-Crafted"]
    assert runs["system"].unique().to_list() == ["magentic_one"]


def test_same_file_name_in_two_folders_of_one_subset_keeps_both(tmp_path: Path) -> None:
    write_files(tmp_path / "a", {"1.json": ag_record()})
    write_files(tmp_path / "b", {"1.json": ag_record("0")})
    runs = _tables(import_who_and_when(tmp_path))["runs"]
    assert runs.height == 2 and runs["run_id"].n_unique() == 2


def test_cli_subset_and_config_subset(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    folder = write_files(tmp_path / "raw", {"1.json": hc_record()})
    out = tmp_path / "out"
    argv = ["import", "who-and-when", str(folder), "-o", str(out)]
    assert main([*argv, "--subset", "Algorithm-Generated"]) == 0
    assert _only(pl.read_parquet(out / "runs.parquet"))["system"] == "captain_agent"
    assert json.loads((out / "manifest.json").read_text())["subset"] == "Algorithm-Generated"
    with pytest.raises(SystemExit):
        main([*argv, "--subset", "HC"])
    capsys.readouterr()
    spec = {"name": "w", "format": "who_and_when", "path": str(folder)}
    assert _only(import_dataset(spec).tables()["runs"])["subset"] == "Hand-Crafted"
    forced = import_dataset(spec | {"subset": "Algorithm-Generated"}).tables()["runs"]
    assert _only(forced)["subset"] == "Algorithm-Generated"


# --- 2. Hand-Crafted role detail in show and in the LLM prompt --------------------------


def test_role_detail_is_shown_and_prompted(tmp_path: Path) -> None:
    t = _tables(import_who_and_when(write_files(tmp_path / "hc", {"7.json": hc_record()})))
    run = t["runs"].row(0, named=True)
    shown = render_trajectory(run, t["steps"], None, pl.DataFrame({"attributor": []}))
    assert "[  1] Orchestrator (thought)" in shown
    assert "[  2] Orchestrator (-> WebSurfer)" in shown
    assert "[  3] WebSurfer (message)" in shown and "[  0] user (message)" in shown
    request = build_request(LLMAttributor("a", "m"), run, t["steps"], ["WebSurfer"], [])
    prompt = request.messages[1].joined_text()
    assert "[1] Orchestrator (thought): plan" in prompt
    assert "[2] Orchestrator (-> WebSurfer): please look" in prompt
    assert "[3] WebSurfer (message): found Y" in prompt


@pytest.mark.parametrize(
    ("actor", "role", "kind", "label"),
    [
        ("planner", "assistant", "message", "planner (message)"),  # built data's roles
        ("python", "tool", "observation", "python (observation)"),
        ("user", "user", "message", "user (message)"),
        ("WebSurfer", "WebSurfer", "message", "WebSurfer (message)"),
        ("a", None, "action", "a (action)"),
        ("Orchestrator", "Orchestrator (thought)", "message", "Orchestrator (thought)"),
        ("Orchestrator", "Orchestrator ()", "message", "Orchestrator (message)"),
        ("T", "T (stdout)", "observation", "T (observation, stdout)"),
        ("Coder", "Orchestrator (-> Coder)", "message", "Coder (message)"),
    ],
)
def test_step_label_adds_detail_only_to_agent_detail_roles(
    actor: str, role: str | None, kind: str, label: str
) -> None:
    assert step_label({"actor": actor, "role": role, "kind": kind}) == label


# --- 3. gold steps spoken by another agent: kept, with a warning ------------------------


def test_a_gold_step_of_another_speaker_is_kept_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    folder = write_files(
        tmp_path / "raw", {"1.json": ag_record(), "2.json": ag_record("0")}
    )  # 0 is Planner's
    result = import_who_and_when(folder)
    assert result.n_runs == 2 and result.errors == []
    assert result.warnings == [
        f"{folder / '2.json'}: gold agent 'Math_Expert' but gold step 0 is spoken by 'Planner'"
    ]
    assert main(["import", "who-and-when", str(folder), "-o", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [f"warning: {result.warnings[0]}"]
    labels = pl.read_parquet(tmp_path / "o" / "labels.parquet")
    assert sorted(labels["decisive_step"].to_list()) == [0, 1]  # as published
    assert json.loads((tmp_path / "o" / "manifest.json").read_text())["label_warnings"] == 1


def test_a_gold_step_of_tool_output_is_warned_about(tmp_path: Path) -> None:
    folder = write_files(tmp_path / "raw", {"1.json": _hc_terminal("4", "ComputerTerminal")})
    result = import_who_and_when(folder)
    assert result.n_runs == 1
    assert len(result.warnings) == 1
    assert "gold step 4 is tool output of 'ComputerTerminal'" in result.warnings[0]
    assert "1.json" in result.warnings[0]


def test_the_stage_logs_warnings_and_writes_the_manifest(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = write_files(tmp_path / "raw", {"1.json": ag_record("0")})
    out = tmp_path / "imports" / "w"
    outputs = {n: str(out / f"{n}.parquet") for n in ("runs", "steps", "labels")}
    spec = {"name": "w", "format": "who_and_when", "path": str(folder), "optional": False}
    with caplog.at_level(logging.WARNING):
        stage({"spec": spec}, [], outputs | {"manifest": str(out / "manifest.json")}, {})
    assert [r.getMessage() for r in caplog.records] == [
        f"label: {folder / '1.json'}: gold agent 'Math_Expert' but gold step 0 "
        "is spoken by 'Planner'"
    ]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["label_warnings"] == 1 and manifest["format"] == "who_and_when"
    (out / "manifest.json").unlink()
    stage({"spec": spec}, [], outputs, {})  # a rule that declares no manifest: none
    assert not (out / "manifest.json").exists() and (out / "runs.parquet").exists()


# --- 4. tool-output speakers as observations, and the manifest --------------------------


def test_tool_speakers_import_as_observations(tmp_path: Path) -> None:
    folder = write_files(tmp_path / "raw", {"1.json": ag_record(), "2.json": _hc_terminal()})
    steps = _tables(import_who_and_when(folder))["steps"]
    tools = steps.filter(pl.col("actor").is_in(TOOL_SPEAKERS))
    assert sorted(tools.select("actor", "role", "kind").rows()) == [
        ("ComputerTerminal", "ComputerTerminal", "observation"),
        ("Computer_terminal", "user", "observation"),
    ]
    assert not agent_steps(steps)["actor"].is_in(TOOL_SPEAKERS).any()
    assert steps.filter(~pl.col("actor").is_in(TOOL_SPEAKERS))["kind"].unique().to_list() == [
        "message"
    ]


def test_tool_speakers_are_configurable(tmp_path: Path) -> None:
    folder = write_files(tmp_path / "raw", {"1.json": ag_record()})
    none = _tables(import_who_and_when(folder, tool_speakers=[]))["steps"]
    assert none["kind"].unique().to_list() == ["message"]
    planner = _tables(import_who_and_when(folder, tool_speakers=["Planner"]))["steps"]
    assert planner.filter(pl.col("kind") == "observation")["actor"].to_list() == ["Planner"]
    spec = {"name": "w", "format": "who_and_when", "path": str(folder), "tool_speakers": []}
    assert import_dataset(spec).tables()["steps"]["kind"].unique().to_list() == ["message"]
    assert parse_tool_speakers(None) == list(TOOL_SPEAKERS)
    assert parse_tool_speakers("") == []
    assert parse_tool_speakers(" A, ,B ") == ["A", "B"]


def test_manifest_is_deterministic_and_complete(tmp_path: Path) -> None:
    folder = write_files(
        tmp_path / "raw", {"1.json": ag_record(), "2.json": hc_record(), "3.json": "{bad"}
    )
    written = []
    for out in ("o1", "o2"):
        argv = ["import", "who-and-when", str(folder), "-o", str(tmp_path / out)]
        assert main([*argv, "--tool-speakers", "Computer_terminal,Extra"]) == 0
        written.append((tmp_path / out / "manifest.json").read_bytes())
    assert written[0] == written[1]
    assert json.loads(written[0]) == {
        "format": "who_and_when",
        "label_warnings": 0,
        "runs": 2,
        "skipped": 1,
        "subset": "detected",
        "subsets": {"Algorithm-Generated": 1, "Hand-Crafted": 1},
        "tool_speakers": ["Computer_terminal", "Extra"],
    }


def test_show_names_tool_speakers_and_their_observations(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    folder = write_files(tmp_path / "raw", {"1.json": _hc_terminal()})
    out = tmp_path / "o"
    assert main(["import", "who-and-when", str(folder), "-o", str(out)]) == 0
    run_id = pl.read_parquet(out / "runs.parquet")["run_id"][0]
    capsys.readouterr()
    assert main(["show", run_id, "--data", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "tool output, read as observations: Computer_terminal, ComputerTerminal" in shown
    assert "[  4] ComputerTerminal (observation)" in shown
    assert "[  2] Orchestrator (-> Coder)" in shown
    (out / "manifest.json").unlink()  # an import from before manifests: from the steps
    assert main(["show", run_id, "--data", str(out)]) == 0
    assert "tool output, read as observations: ComputerTerminal\n" in capsys.readouterr().out


def test_built_runs_show_no_tool_header() -> None:
    run = {"run_id": "r", "benchmark": "arithmetic", "system": "react", "origin": "rollout"}
    run |= {"success": False}
    steps = pl.DataFrame(
        {
            "step": [0],
            "actor": ["python"],
            "role": ["tool"],
            "kind": ["observation"],
            "content": ["6"],
            "tool": [None],
            "tool_args": [None],
        }
    )
    shown = render_trajectory(run, steps, None, pl.DataFrame({"attributor": []}))
    assert "tool output" not in shown and "[  0] python (observation)" in shown


# --- the public sample, where present ---------------------------------------------------


@needs_sample
def test_sample_subsets_systems_and_tool_steps() -> None:
    t = _tables(import_who_and_when(SAMPLE))
    systems = dict(t["runs"].select("subset", "system").unique().rows())
    assert systems == {"Algorithm-Generated": "captain_agent", "Hand-Crafted": "magentic_one"}
    tools = t["steps"].filter(pl.col("actor").is_in(TOOL_SPEAKERS))
    assert (tools["kind"] == "observation").all()
    assert not agent_steps(t["steps"])["actor"].is_in(TOOL_SPEAKERS).any()
    roles = t["steps"].filter(pl.col("role") == "Orchestrator (-> WebSurfer)")
    assert roles.height > 0
    assert {step_label(s) for s in roles.iter_rows(named=True)} == {"Orchestrator (-> WebSurfer)"}
