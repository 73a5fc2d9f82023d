"""An infrastructure failure is never an agent failure: a tool environment that did not
start, a provider that did not answer after retries, or a gateway the framework could not
use ends the run `infra_error: <reason>`; such runs leave the shard for a table of their
own, no later stage reads them, and a shard with too many of them fails with the cause."""

from __future__ import annotations

import contextlib
import subprocess
import sys

import polars as pl
import pytest

from whowhen.analysis.feedback_analysis import feedback_tables
from whowhen.analysis.infra import infra_html, infra_table
from whowhen.assembly import make_system
from whowhen.benchmarks.base import AnswerEnv
from whowhen.continuation_records import record_outcome
from whowhen.errors import InfraError, WhowhenError, is_infra
from whowhen.feedback.attempts import Setting
from whowhen.feedback.loop import Context, originals, run_feedback
from whowhen.frameworks.base import run_framework
from whowhen.gateway.server import Gateway
from whowhen.gateway.session import ForwardError
from whowhen.models import make_client
from whowhen.registry import get_benchmark
from whowhen.replay.probe import replay_run
from whowhen.rollouts import run_rollouts, set_apart_infra
from whowhen.rollouts import stage as rollouts_stage
from whowhen.runtime import Action, run_episode
from whowhen.runtime.infra import check_infra_share
from whowhen.runtime.warm_start import warm_start
from whowhen.sandbox import Limits
from whowhen.sandbox import run as sandbox_run
from whowhen.schema import CONTINUATIONS, FEEDBACK, RUNS, STEPS, empty, read_table
from whowhen.standin.server import Behaviour, TestServer

from .conftest import one_benchmark
from .workdir import env as workdir_env
from .workdir import make_project


def _break_sql(monkeypatch: pytest.MonkeyPatch, task_ids: set[str]) -> None:
    """The SQL tool's worker "did not start" for the tasks named (the rest work)."""
    real = AnswerEnv.step

    def step(self: AnswerEnv, action: Action):
        if action.tool == "sql" and self.task_id in task_ids:
            raise InfraError("the SQL sandbox did not start (worker binary missing)")
        return real(self, action)

    monkeypatch.setattr(AnswerEnv, "step", step)


def _table_qa_rollouts(monkeypatch: pytest.MonkeyPatch, n_broken: int):
    tasks = get_benchmark("table_qa", {"n_tasks": 4}).make_tasks({"n_tasks": 4}, 3)
    _break_sql(monkeypatch, {t.task_id for t in tasks[:n_broken]})
    return run_rollouts("table_qa", "react", {"n_tasks": 4}, 3, 0.0, 120), tasks


def test_a_tool_that_does_not_start_ends_the_run_as_infra(monkeypatch) -> None:
    (runs, steps, _), _ = _table_qa_rollouts(monkeypatch, 1)
    infra = runs.filter(pl.col("end_reason").str.starts_with("infra_error"))
    assert infra.height == 1
    assert "the SQL sandbox did not start" in infra["end_reason"][0]
    assert not infra["success"][0]
    # no observation of the broken tool was recorded as if the agent had caused it
    assert not steps["content"].str.contains("did not start").any()


def test_infra_runs_leave_the_shard_and_too_many_fail_it(monkeypatch) -> None:
    (runs, steps, _), _ = _table_qa_rollouts(monkeypatch, 1)
    kept, kept_steps, infra = set_apart_infra(runs, steps, 1.0, "rollouts table_qa/react")
    assert infra.height == 1 and kept.height == runs.height - 1
    assert not kept["end_reason"].str.starts_with("infra_error").any()
    assert set(kept_steps["run_id"]) == set(kept["run_id"])
    assert not set(kept_steps["run_id"]) & set(infra["run_id"])
    with pytest.raises(InfraError, match=r"1 of 4 runs .*max_infra_share=0.02.*did not start"):
        set_apart_infra(runs, steps, 0.02, "rollouts table_qa/react")


def test_the_rollouts_job_writes_no_infra_run_into_later_stages_inputs(
    monkeypatch, tmp_path
) -> None:
    tasks = get_benchmark("table_qa", {"n_tasks": 4}).make_tasks({"n_tasks": 4}, 3)
    _break_sql(monkeypatch, {tasks[0].task_id})
    monkeypatch.chdir(tmp_path)
    names = ("runs", "steps", "slips", "exchanges", "infra")
    outputs = {n: str(tmp_path / f"{n}.parquet") for n in names}
    params = {
        "bench": {"n_tasks": 4},
        "seed": 3,
        "rollouts": {
            "max_steps": 120,
            "slip_rate": 0.0,
            "slips": "natural",
            "max_infra_share": 0.5,
        },
        "agents": {"model": None},
        "models": {},
        "llm": {},
    }
    rollouts_stage(params, {}, outputs, {"benchmark": "table_qa", "system": "react"})
    runs, steps = read_table(outputs["runs"], RUNS), read_table(outputs["steps"], STEPS)
    infra = read_table(outputs["infra"], RUNS)
    assert infra.height == 1 and runs.height == 3
    assert not runs["end_reason"].str.starts_with("infra_error").any()
    assert infra["run_id"][0] not in set(steps["run_id"])
    params["rollouts"]["max_infra_share"] = 0.02
    with pytest.raises(InfraError, match="rollouts table_qa/react: 1 of 4 runs"):
        rollouts_stage(params, {}, outputs, {"benchmark": "table_qa", "system": "react"})


def test_a_tool_environment_that_does_not_start_stops_the_shard_before_any_run(
    monkeypatch, tmp_path
) -> None:
    """The preflight: the SQL worker is started once before the rollouts."""

    def no_worker() -> None:
        raise InfraError("the SQL sandbox did not start: duckdb is not importable")

    spec = get_benchmark("table_qa", {"n_tasks": 2})
    monkeypatch.setattr(type(spec), "preflight", property(lambda self: no_worker))
    ran: list[str] = []
    monkeypatch.setattr("whowhen.rollouts.run_rollouts", lambda *a, **k: ran.append("ran"))
    outputs = {n: str(tmp_path / f"{n}.parquet") for n in ("runs", "steps", "slips", "exchanges")}
    params = {"bench": {"n_tasks": 2}, "seed": 1, "rollouts": {"max_infra_share": 0.02}}
    with pytest.raises(InfraError, match="duckdb is not importable"):
        rollouts_stage(params, {}, outputs, {"benchmark": "table_qa", "system": "react"})
    assert ran == []


def test_a_provider_that_does_not_answer_is_an_outage_not_an_agent_failure() -> None:
    with TestServer(Behaviour(fail_rate=1.0, faults=("500",), retry_after_s=0.0)) as srv:
        client = make_client(
            "m",
            {"cache_dir": None, "progress": False, "max_retries": 1},
            {"m": {"id": "openai-compatible/mock", "base_url": srv.url}},
        )
        runs, _, _ = run_rollouts(
            "arithmetic", "llm_react", {"n_tasks": 2}, 1, 0.0, 50, client=client
        )
    assert all(is_infra(r) for r in runs["end_reason"]), runs["end_reason"].to_list()
    assert runs["end_reason"].str.contains("model call failed after retries").all()


def test_a_warm_start_whose_tool_does_not_start_is_no_flip_and_no_drift(monkeypatch) -> None:
    """Replay and continuation see an outage as such: neither a decisive step nor drift."""
    bench = get_benchmark("table_qa", {"n_tasks": 2})
    task = bench.make_tasks({"n_tasks": 2}, 3)[0]
    agent = make_system("react", "table_qa", slip_rate=0.0, seed=3)
    recorded = run_episode(bench.make_env(task), agent, 120).history
    t = next(i for i, s in enumerate(recorded) if s.is_agent_step and i > 0)
    _break_sql(monkeypatch, {task.task_id})
    again = make_system("react", "table_qa", slip_rate=0.0, seed=3)
    result = warm_start(bench.make_env(task), again, recorded, t, recorded[t].as_action(), 120)
    assert is_infra(result.episode.end_reason)
    record: dict = {}
    assert record_outcome(record, result) is False
    assert is_infra(record["reason"])
    replay = replay_run(
        recorded,
        lambda: bench.make_env(task),
        _Differs(),
        lambda: make_system("react", "table_qa", slip_rate=0.0, seed=3),
        5,
        120,
    )
    assert replay.status == "infra_error" and replay.decisive is None
    assert replay.probes[-1].outcome == "infra_error"


class _Differs:
    """A reference that proposes a different final answer at the first step it is asked."""

    def next_action(self, history):
        actor = next(s.actor for s in history[1:] if s.is_agent_step) if len(history) > 1 else None
        return Action(actor or "assistant", "done", "final_answer", {"answer": "-1"})


def test_check_share_names_the_most_common_cause() -> None:
    reasons = ["done", "infra_error: a", "infra_error: b", "infra_error: b", None]
    assert check_infra_share(reasons, 100, 0.05, "x") == 3
    with pytest.raises(WhowhenError, match=r"x: 3 of 5 runs.*\(2 of them\): b"):
        check_infra_share(reasons, 5, 0.5, "x")


def test_feedback_reruns_stopped_by_an_outage_are_neither_solved_nor_retried(
    monkeypatch,
) -> None:
    cfg = {"n_tasks": 12, "min_ops": 3, "max_ops": 5}
    runs, steps, _ = run_rollouts("arithmetic", "react", cfg, 5, 0.3, 60)
    bench = get_benchmark("arithmetic", cfg)
    tasks = {t.task_id: t for t in bench.make_tasks(cfg, 5)}
    failed = originals(runs, steps, tasks)
    assert failed
    real = AnswerEnv.step

    def step(self: AnswerEnv, action: Action):
        if action.tool == "calculator":
            raise InfraError("the calculator's worker died")
        return real(self, action)

    monkeypatch.setattr(AnswerEnv, "step", step)
    ctx = Context(Setting("arithmetic", "react", bench, cfg, 0.3, 0.8, 60), 3, 5, ["none"])
    attempts, reruns, rerun_steps = run_feedback(ctx, failed)
    assert attempts.height == len(failed) == len(ctx.infra)  # round 1 only: none retried
    assert set(attempts["round"]) == {1}
    assert attempts["end_reason"].map_elements(is_infra, return_dtype=pl.Boolean).all()
    assert reruns.is_empty() and rerun_steps.is_empty()
    tables = feedback_tables(attempts)
    assert all(t.is_empty() or t["n"].sum() == 0 for t in tables.values() if "n" in t.columns)
    counted = infra_table(empty(RUNS), empty(CONTINUATIONS), attempts)
    assert counted["runs"].to_list() == [len(failed)]
    assert counted["cause"].to_list() == ["the calculator's worker died"]
    with pytest.raises(InfraError, match="max_infra_share"):
        check_infra_share(ctx.infra, attempts.height, 0.02, "feedback arithmetic/react")


def test_the_report_counts_infra_runs_per_stage_and_says_when_there_were_none() -> None:
    none = infra_table(empty(RUNS), empty(CONTINUATIONS), empty(FEEDBACK))
    assert none.is_empty()
    assert "No run was stopped" in "".join(infra_html(none))
    rollouts = pl.DataFrame(
        {"benchmark": ["a"] * 3, "system": ["s"] * 3,
         "end_reason": ["infra_error: x", "infra_error: y", "infra_error: y"]}
    )  # fmt: skip
    cont = pl.DataFrame(
        {"benchmark": ["a", "a"], "system": ["s", "s"], "reason": ["infra_error: z", "done"]}
    )
    table = infra_table(rollouts, cont, empty(FEEDBACK))
    assert table.rows() == [("continuation", "a", "s", 1, "z"), ("rollouts", "a", "s", 3, "y")]
    assert "4 runs were stopped" in "".join(infra_html(table))


class _Plain:
    """The smallest framework: one chat call through its gateway URL (or `url`), with
    the OpenAI SDK and no retries; `swallow`: it catches the error and stops."""

    system, plays, agents, volatile = "plain", "react", ("assistant",), ()

    def __init__(self, url: str | None = None, swallow: bool = False) -> None:
        self.url, self.swallow = url, swallow

    def run(self, task) -> None:
        import openai  # deferred: the test's stand-in for a framework

        url = self.url or task.base_url("assistant")
        api = openai.OpenAI(base_url=url, api_key="x", max_retries=0)
        with contextlib.suppress(*((openai.APIError,) if self.swallow else ())):
            api.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])

    def read(self, agent, message):
        return []

    def write(self, actions, message):
        return message


def _framework_run(adapter: _Plain, forward, run_id: str):
    bench = get_benchmark("arithmetic", {"n_tasks": 1})
    env = bench.make_env(bench.make_tasks({"n_tasks": 1}, 1)[0])
    with Gateway() as gateway:
        return run_framework(adapter, env, (), {}, gateway, run_id, forward, 5)


def test_a_framework_run_whose_model_did_not_answer_is_an_outage() -> None:
    """Through the real gateway: the forward fails, the framework gets an error, catches
    it and stops without an answer; the run is an outage all the same."""

    def forward(request, agent):
        raise ForwardError("m: server: 500 after 4 retries")

    run = _framework_run(_Plain(swallow=True), forward, "r1")
    assert is_infra(run.episode.end_reason)
    assert "did not answer through the gateway" in run.episode.end_reason


def test_a_framework_that_cannot_reach_the_gateway_is_an_outage() -> None:
    def never(request, agent):
        raise AssertionError("no call reaches the model")

    run = _framework_run(_Plain(url="http://127.0.0.1:9/v1"), never, "r2")
    assert is_infra(run.episode.end_reason), run.episode.end_reason
    assert "APIConnectionError" in run.episode.end_reason


def test_a_framework_run_whose_gateway_failed_is_an_outage() -> None:
    """The gateway's own fault (a 500 of type `gateway`, e.g. a recording that could not
    be written) reaches the framework as an HTTP error: an outage, not the agents'."""

    def broken(request, agent):
        raise OSError("no space left on device")

    run = _framework_run(_Plain(), broken, "r3")
    assert is_infra(run.episode.end_reason), run.episode.end_reason


@pytest.mark.slow
def test_a_shard_whose_sandbox_does_not_start_fails_in_seconds_with_the_cause(tmp_path) -> None:
    """End to end: a broken sandbox installation (`bwrap` that cannot run) stops the
    rollouts job before any run is recorded, with one line naming the cause."""
    project = make_project(tmp_path / "p", one_benchmark())
    target = "results/rollouts/arithmetic/react/runs.parquet"
    broken = dict(workdir_env(), WHOWHEN_BWRAP="/bin/false")
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", target, "--cores", "1"],
        cwd=project, env=broken, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode != 0
    log = (project / "logs/rollouts/arithmetic/react.log").read_text()
    assert "error: agent code cannot run: the sandbox did not start" in log
    assert "Traceback" not in log
    assert not (project / target).exists()


def test_a_sandbox_that_does_not_start_is_an_outage_and_a_program_cannot_fake_one(
    monkeypatch,
) -> None:
    """A program killing its own supervisor ends without a report, like a sandbox that
    never started; only the second is an infrastructure failure."""
    suicide = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nprint('x')"
    result = sandbox_run.run_python(suicide, Limits(wall_s=10.0))
    assert result.status == "error"
    monkeypatch.setenv("WHOWHEN_BWRAP", "/bin/false")
    monkeypatch.setitem(sandbox_run._probe, "error", None)  # as if it had started before
    with pytest.raises(InfraError, match="the sandbox did not start"):
        sandbox_run.run_python("print(1)")
    bench = get_benchmark("arithmetic", {"n_tasks": 1})
    task = bench.make_tasks({"n_tasks": 1}, 1)[0]
    env = bench.make_env(task)
    env.reset()
    with pytest.raises(InfraError):
        env.step(Action("assistant", "", "run_python", {"code": "print(2 + 2)"}))
