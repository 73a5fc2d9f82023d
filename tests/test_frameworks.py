"""Real agent frameworks behind the gateway, played by the stand-in over HTTP: smolagents'
ToolCallingAgent (react) and an AG2 group chat (solver, verifier, a tool executor and a
manager) solve arithmetic tasks; a warm start replays the recorded calls (each request
checked), answers the injection point with the injected tool call and goes live after
it; a changed observation in the prefix is refused; a rerun asks the model nothing."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from whowhen.frameworks.ag2_adapter import AG2SolverVerifier
from whowhen.frameworks.base import FrameworkRun, run_framework
from whowhen.frameworks.langgraph_adapter import LangGraphTeam
from whowhen.frameworks.smolagents_adapter import SmolagentsToolCalling
from whowhen.gateway.forward import client_forward
from whowhen.gateway.server import Gateway
from whowhen.gateway.session import Forward, Plan
from whowhen.registry import get_benchmark
from whowhen.runtime import Action
from whowhen.standin.server import TestServer

from .framework_checks import check_warm_start, injection_plan
from .model_clients import cached_client

CFG = {"n_tasks": 3, "min_ops": 2, "max_ops": 3}
BENCH = get_benchmark("arithmetic", CFG)
TASKS = BENCH.make_tasks(CFG, 1)
ADAPTERS = [
    pytest.param(SmolagentsToolCalling(), marks=pytest.mark.skipif(
        importlib.util.find_spec("smolagents") is None, reason="needs smolagents")),
    pytest.param(AG2SolverVerifier(), marks=pytest.mark.skipif(
        importlib.util.find_spec("autogen") is None, reason="needs ag2 < 1 (autogen)")),
    *(pytest.param(LangGraphTeam(plays, agents), marks=pytest.mark.skipif(
        importlib.util.find_spec("langgraph") is None, reason="needs langgraph"))
      for plays, agents in (("react", ("assistant",)),
                            ("solver_verifier", ("solver", "verifier")))),
]  # fmt: skip
NAMES = {
    "smolagents_react": {"assistant"},
    "ag2_solver_verifier": {"solver", "verifier"},
    "langgraph_react": {"assistant"},
    "langgraph_solver_verifier": {"solver", "verifier"},
}


def _run(
    adapter: Any,
    gw: Gateway,
    forward: Forward,
    task: Any,
    run_id: str,
    plan: Plan | None = None,
    env: Any = None,
    bench: Any = BENCH,
) -> FrameworkRun:
    env = env or bench.make_env(task)
    prompts = bench.prompts[adapter.plays]
    return run_framework(adapter, env, bench.tools, prompts, gw, run_id, forward, 20, plan)


def _view(history: list) -> list[tuple]:
    return [(s.actor, s.kind, s.content, s.tool, s.tool_args) for s in history]


TABLE_QA = get_benchmark("table_qa", {"n_tasks": 2})
TOOL_OF = {"arithmetic": "calculator", "table_qa": "sql"}


@pytest.mark.parametrize("name", ["arithmetic", pytest.param("table_qa", marks=pytest.mark.slow)])
@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.system)
def test_a_framework_solves_tasks_through_the_gateway(
    adapter: Any, name: str, tmp_path: Path
) -> None:
    bench = BENCH if name == "arithmetic" else TABLE_QA
    tasks = TASKS if name == "arithmetic" else TABLE_QA.make_tasks({"n_tasks": 2}, 1)
    with TestServer() as srv, Gateway() as gw:
        forward = client_forward(cached_client(srv, tmp_path / "cache"))
        runs = [_run(adapter, gw, forward, t, t.task_id, bench=bench) for t in tasks]
        asked = srv.completed
        # a rerun is served from the response cache: not one model call
        again = [_run(adapter, gw, forward, t, t.task_id, bench=bench) for t in tasks]
        assert srv.completed == asked
    for run, rerun in zip(runs, again, strict=True):
        episode = run.episode
        assert episode.end_reason == "done" and episode.verdict.success, episode.end_reason
        actors = {"user", TOOL_OF[name]} | NAMES[adapter.system]
        assert {s.actor for s in episode.history} == actors
        assert episode.history[-1].tool == "final_answer"
        kinds = [s.kind for s in episode.history]
        assert kinds.count("observation") == kinds.count("action") - 1  # all but the answer
        exchanges = run.session.exchanges
        assert all(e.source == "live" and e.steps for e in exchanges)
        assert {e.agent for e in exchanges} == NAMES[adapter.system]
        assert (
            sum(len(e.steps) for e in exchanges)
            == kinds.count("action") + kinds.count("message") - 1
        )  # every agent step came from one answer (step 0 is the task)
        assert _view(rerun.episode.history) == _view(episode.history)
    assert asked == sum(len(r.session.exchanges) for r in runs)


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.system)
def test_warm_start_replays_the_prefix_injects_and_goes_live(adapter: Any, tmp_path: Path) -> None:
    task = TASKS[0]
    with TestServer() as srv, Gateway() as gw:
        forward = client_forward(cached_client(srv, tmp_path / "cache"))
        original = _run(adapter, gw, forward, task, "original")
        history = original.episode.history
        k = next(s.step for s in history if s.tool == "calculator" and s.step > 2)
        exchange = next(e for e in original.session.exchanges if k in e.steps)
        step = history[k]
        a, op, b = step.tool_args["expression"].split()
        wrong = Action(
            step.actor, step.content, step.tool, {"expression": f"{a} {op} {int(b) + 1}"}
        )
        plan, index = injection_plan(original, k, wrong, adapter)
        before = srv.completed
        warm = _run(adapter, gw, forward, task, "injected", plan)
    check_warm_start(warm, history, k, index, srv.completed - before, wrong.tool_args)
    assert original.episode.verdict.success
    assert _view(warm.episode.history) != _view(history)  # it went on from the error
    if adapter.plays == "react":  # nobody checks a lone agent: the error decides
        assert not warm.episode.verdict.success
    replayed = warm.session.exchanges[: exchange.index + 1]
    assert [e.request for e in replayed] == [e.request for e in original.session.exchanges][
        : exchange.index + 1
    ]


class _Tampered:
    """The environment with one calculator result changed: a prefix that is not the
    recorded one."""

    def __init__(self, env: Any) -> None:
        self._env = env

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)

    def step(self, action: Action) -> Any:
        result = self._env.step(action)
        if action.tool == "calculator" and result is not None:
            return result[0], str(int(float(result[1])) + 100)
        return result


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.system)
def test_the_gateway_refuses_a_prefix_whose_observation_changed(
    adapter: Any, tmp_path: Path
) -> None:
    task = TASKS[0]
    with TestServer() as srv, Gateway() as gw:
        forward = client_forward(cached_client(srv, tmp_path / "cache"))
        original = _run(adapter, gw, forward, task, "original")
        last = original.session.exchanges[-1]
        plan = Plan(original.session.exchanges, last.index, last.message)
        before = srv.completed
        tampered = _run(
            adapter, gw, forward, task, "tampered", plan, _Tampered(BENCH.make_env(task))
        )
        assert srv.completed == before
    reason = tampered.episode.end_reason
    assert (
        reason.startswith("fidelity: call ") and "differs from the recording at messages[" in reason
    )
    first = next(s.content for s in original.episode.history if s.kind == "observation")
    assert str(int(float(first)) + 100) in reason and not tampered.episode.verdict.success
