"""Your own agent, end to end, offline: a program the project has never seen (two agents,
a calculator tool, the plain `openai` client) is recorded behind the gateway, imported,
attributed, replayed with one step changed, and its failure labelled by counterfactual
replay, all against the test server."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from whowhen.cli import main
from whowhen.gateway.recording import read_recording
from whowhen.standin.server import TestServer

from .conftest import ROOT
from .own_program import PLANNER, SOLVER, write_program

TASKS = [("(17 + 25) * 3", "126"), ("6 * 7 + 1", "43"), ("9 * 9", "81"), ("2 * (3 + 4)", "14")]
FAILING = "run-2"  # the test server's seeded slip makes "6 * 7 + 1" fail, deterministically
MODEL = ["--model", "openai-compatible/mock"]
WHOWHEN = str(Path(sys.executable).with_name("whowhen"))  # the installed command


@pytest.fixture(scope="module")
def server():
    with TestServer() as srv:
        yield srv


def _model(srv: TestServer, tmp: Path) -> list[str]:
    return [*MODEL, "--base-url", srv.url, "--cache-dir", str(tmp / "cache")]


@pytest.fixture(scope="module")
def recorded(server, tmp_path_factory) -> tuple[Path, list[str]]:
    """Four runs of the program recorded in one folder; the program's command."""
    tmp = tmp_path_factory.mktemp("own")
    command = write_program(tmp)
    for task, answer in TASKS:
        assert main(["record", "-o", str(tmp / "rec"), *_model(server, tmp), "--",
                     *command, task, answer]) == 0  # fmt: skip
    return tmp, command


def _whowhen(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([WHOWHEN, *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)  # fmt: skip


def test_the_agents_are_named_nowhere_in_the_project() -> None:
    for path in (ROOT / "src").rglob("*.py"):
        text = path.read_text().lower()
        assert PLANNER not in text and SOLVER not in text, path


def test_a_program_is_recorded_imported_and_attributed_step_for_call(recorded, capsys) -> None:
    tmp, _ = recorded
    rec = tmp / "rec"
    outcomes = {p.name: json.loads(p.read_text()) for p in sorted(rec.glob("*.run.json"))}
    assert [o["success"] for o in outcomes.values()] == [True, False, True, True]
    assert all(o["calls"] == 3 and o["agents"] == [PLANNER, SOLVER] for o in outcomes.values())
    assert main(["import", "gateway", str(rec), "-o", str(tmp / "ds")]) == 0
    steps = pl.read_parquet(tmp / "ds/steps.parquet").filter(pl.col("run_id") == FAILING)
    calls = read_recording(rec / f"{FAILING}.jsonl").exchanges
    # every call is one agent step, in call order, by the agent that made it; the task,
    # the hand-off and the tool result come in between as inputs
    agent_steps = steps.filter(pl.col("actor").is_in([PLANNER, SOLVER]))
    assert agent_steps["actor"].to_list() == [c.agent for c in calls]
    assert steps["actor"].to_list() == ["user", PLANNER, "user", SOLVER, "calculator", SOLVER]
    assert steps["kind"].to_list()[3:5] == ["action", "observation"]
    for row, call in zip(agent_steps.iter_rows(named=True), calls, strict=True):
        assert row["tokens_out"] == call.output_tokens
    assert main(["attribute", str(tmp / "ds"), "--attributor", "error_signal"]) == 0
    predictions = pl.read_parquet(tmp / "ds/predictions/error_signal.parquet")
    assert FAILING in predictions["run_id"].to_list()
    assert main(["view", str(tmp / "ds"), "-o", str(tmp / "pages")]) == 0
    pages = "".join(p.read_text() for p in (tmp / "pages").rglob("*.html"))
    assert PLANNER in pages and SOLVER in pages and "error_signal" in pages
    capsys.readouterr()


def test_replay_with_the_corrected_step_flips_the_failure(recorded, server, capsys) -> None:
    tmp, command = recorded
    task, answer = TASKS[1]
    capsys.readouterr()
    code = main(["replay", str(tmp / "rec"), FAILING, "--at", "3", "--replace",
                 json.dumps({"expression": task}), "-o", str(tmp / "rec2"),
                 *_model(server, tmp), "--", *command, task, answer])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "success (exit status 0); calls: 1 replayed, 1 injected, 1 live" in out
    old = read_recording(tmp / "rec" / f"{FAILING}.jsonl")
    new = read_recording(tmp / "rec2" / f"{FAILING}.jsonl")
    assert new.outcome["success"] is True and old.outcome["success"] is False
    assert [e.source for e in new.exchanges] == ["replayed", "injected", "live"]
    # every call up to the changed one was the recorded request, answered as recorded
    for a, b in zip(old.exchanges[:2], new.exchanges[:2], strict=True):
        assert a.request == b.request
    assert new.exchanges[0].message == old.exchanges[0].message
    call = new.exchanges[1].message["tool_calls"][0]["function"]
    assert json.loads(call["arguments"]) == {"expression": task}


def test_blame_finds_the_decisive_step_and_its_labels_score(recorded, server, capsys) -> None:
    tmp, command = recorded
    task, answer = TASKS[1]
    labels = tmp / "labels.csv"
    capsys.readouterr()
    code = main(["blame", str(tmp / "rec"), FAILING, *_model(server, tmp), "--labels",
                 str(labels), "--", *command, task, answer])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"{FAILING}: decisive step " in out and "replays, $" in out
    [row] = pl.read_csv(labels).to_dicts()
    # the solver's calculator call slipped (6 * 7 + 1 read with one number off)
    assert (row["run_id"], row["agent"], row["step"]) == (FAILING, SOLVER, 3)
    ds = tmp / "blamed"
    assert main(["import", "gateway", str(tmp / "rec"), "-o", str(ds), "--labels",
                 str(labels)]) == 0  # fmt: skip
    assert main(["attribute", str(ds), "--attributor", "error_signal"]) == 0
    capsys.readouterr()
    assert main(["score", str(ds)]) == 0
    assert "error_signal" in capsys.readouterr().out
    # --max-replays bounds the cost: with none allowed, no program is rerun
    assert main(["blame", str(tmp / "rec"), FAILING, *_model(server, tmp), "--max-replays",
                 "0", "--", *command, task, answer]) == 1  # fmt: skip
    assert f"{FAILING}: capped: 0 replays without a flip; 0 replays" in capsys.readouterr().out
    # a run that succeeded has nothing to blame: one line, exit 1
    assert main(["blame", str(tmp / "rec"), "run-1", *_model(server, tmp), "--", *command,
                 *TASKS[0]]) == 1  # fmt: skip
    assert "not a failure" in capsys.readouterr().out


def test_a_replay_whose_program_diverges_is_one_line(recorded, server, capsys) -> None:
    tmp, command = recorded
    capsys.readouterr()
    code = main(["replay", str(tmp / "rec"), FAILING, "--at", "3", "--replace", "{}", "-o",
                 str(tmp / "rec3"), *_model(server, tmp), "--", *command, "6 * 7 + 2",
                 "44"])  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert out[-1].startswith(f"{FAILING}: 0 calls") and "diverged" in out[-1]
    assert 'call 0 (quillwright) differs from the recording at messages[1].content: "6 * 7' \
        in out[-1]  # fmt: skip
    # a step that is not an agent's is refused before anything runs
    assert main(["replay", str(tmp / "rec"), FAILING, "--at", "4", "--replace", "x", "-o",
                 str(tmp / "rec3"), *MODEL, "--", *command]) == 1  # fmt: skip
    err = capsys.readouterr().err
    assert "step 4 is calculator's observation: only an agent's step can be replaced" in err


def test_bad_programs_are_one_line_and_lose_nothing(recorded, server, tmp_path, capsys) -> None:
    tmp, command = recorded
    rec = tmp_path / "rec"
    model = _model(server, tmp)
    crash = tmp_path / "crash.py"
    crash.write_text(
        "from openai import OpenAI\nOpenAI().chat.completions.create(model='m', "
        "messages=[{'role': 'user', 'content': 'hi'}])\nraise SystemExit(3)\n"
    )
    silent = tmp_path / "silent.py"
    silent.write_text("print('no model here')\n")
    capsys.readouterr()
    assert main(["record", "-o", str(rec), *model, "--", sys.executable, str(crash)]) == 0
    assert "run-1: 1 calls" in capsys.readouterr().out
    assert json.loads((rec / "run-1.run.json").read_text())["reason"] == "exit status 3"
    assert main(["record", "-o", str(rec), *model, "--", sys.executable, str(silent)]) == 1
    out = capsys.readouterr().out
    assert "no model call reached the gateway" in out and not (rec / "run-2.jsonl").exists()
    assert main(["record", "-o", str(rec), *model, "--run-id", "run-1", "--", *command]) == 1
    assert "run run-1 is already recorded" in capsys.readouterr().err
    assert main(["record", "-o", str(rec), *model, "--", "/no/such/program"]) == 1
    assert "cannot start '/no/such/program'" in capsys.readouterr().out
    # a recording cut mid-line and one with no outcome: one line each, the rest imports
    shutil_copy(tmp / "rec" / "run-1.jsonl", rec / "cut.jsonl", cut=True)
    shutil_copy(tmp / "rec" / "run-4.jsonl", rec / "open.jsonl")
    assert main(["import", "gateway", str(rec), "-o", str(tmp_path / "ds")]) == 0
    err = capsys.readouterr()
    text = err.out + err.err
    assert "cut.jsonl: record line 3: cut off mid-line" in text
    assert "open.jsonl: run open: no outcome" in text
    runs = pl.read_parquet(tmp_path / "ds/runs.parquet")
    assert runs["run_id"].to_list() == ["run-1"]


def shutil_copy(source: Path, target: Path, cut: bool = False) -> None:
    data = source.read_bytes()
    target.write_bytes(data[:-20] if cut else data)


def test_sigterm_and_sigkill_reach_the_recorder(recorded, server, tmp_path) -> None:
    tmp, _ = recorded
    rec = tmp_path / "rec"
    slow = tmp_path / "slow.py"
    slow.write_text("import os, time\nfrom openai import OpenAI\nparent = os.getppid()\n"
                    "OpenAI().chat.completions.create(model='m', messages=[{'role': 'user', "
                    "'content': 'hi'}])\nprint('asked', flush=True)\n"
                    "while os.getppid() == parent:\n    time.sleep(0.1)\n")  # fmt: skip
    args = ["record", "-o", str(rec), *_model(server, tmp), "--", sys.executable, str(slow)]
    for sig, run in ((signal.SIGTERM, "run-1"), (signal.SIGKILL, "run-2")):
        proc = subprocess.Popen([WHOWHEN, *args], cwd=ROOT,
                                stdout=subprocess.PIPE, text=True)  # fmt: skip
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "asked"
        proc.send_signal(sig)
        out = proc.communicate(timeout=30)[0]
        if sig == signal.SIGTERM:
            assert proc.returncode == 1
            assert out.startswith(f"{run}: 1 calls") and "interrupted (SIGTERM received" in out
            assert json.loads((rec / f"{run}.run.json").read_text())["success"] is None
        else:
            assert not (rec / f"{run}.run.json").exists()
            assert len(read_recording(rec / f"{run}.jsonl").exchanges) == 1
    proc = _whowhen("import", "gateway", str(rec), "-o", str(tmp_path / "ds"))
    assert "run run-1: outcome interrupted" in proc.stdout + proc.stderr
    assert "run run-2: no outcome" in proc.stdout + proc.stderr


def test_the_gateway_prints_its_summary_on_sigterm(server, tmp_path) -> None:
    proc = subprocess.Popen(
        [WHOWHEN, "gateway", *MODEL, "--base-url", server.url, "--port", "0", "--record",
         str(tmp_path / "runs"), "--cache-dir", str(tmp_path / "cache")],
        stdout=subprocess.PIPE, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("gateway for openai-compatible/mock on ")
    proc.send_signal(signal.SIGTERM)
    out = proc.communicate(timeout=30)[0]
    assert proc.returncode == 0
    assert out.strip() == "0 calls, 0 cache hits, $0.0000 spent"


def test_a_gateway_never_merges_two_runs_and_its_runs_import_with_outcomes(
    server, tmp_path, capsys
) -> None:
    import openai

    runs = tmp_path / "runs"
    for attempt in (1, 2):
        proc = subprocess.Popen(
            [WHOWHEN, "gateway", *MODEL, "--base-url", server.url, "--port", "0", "--record",
             str(runs), "--cache-dir", str(tmp_path / "cache")],
            stdout=subprocess.PIPE, text=True, cwd=tmp_path,
        )  # fmt: skip
        assert proc.stdout is not None
        port = proc.stdout.readline().split("http://127.0.0.1:", 1)[1].split("/", 1)[0]
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/run/run-1/helper/v1",
                               api_key="x", max_retries=0)  # fmt: skip
        try:
            hello = [{"role": "user", "content": "hi"}]
            if attempt == 1:
                client.chat.completions.create(model="m", messages=hello)
            else:  # the same fixed run id in a second gateway: refused, not appended
                with pytest.raises(openai.ConflictError, match="run run-1 is already recorded"):
                    client.chat.completions.create(model="m", messages=hello)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=30)
    assert len(read_recording(runs / "run-1.jsonl").exchanges) == 1
    capsys.readouterr()
    assert main(["import", "gateway", str(runs), "-o", str(tmp_path / "none")]) == 1
    assert "run run-1: no outcome" in capsys.readouterr().err
    outcomes = tmp_path / "outcomes.json"
    outcomes.write_text('{"run-1": false}')
    assert main(["import", "gateway", str(runs), "-o", str(tmp_path / "ds"), "--outcomes",
                 str(outcomes)]) == 0  # fmt: skip
    [run] = pl.read_parquet(tmp_path / "ds/runs.parquet").to_dicts()
    assert (run["run_id"], run["success"], run["n_steps"]) == ("run-1", False, 2)
