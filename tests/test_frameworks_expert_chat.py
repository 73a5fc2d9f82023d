"""AG2's group chat as the expert chat of Who&When's Algorithm-Generated runs: the
arithmetic experts and the `Computer_terminal` behind the gateway, played by the stand-in
over HTTP. The chat solves tasks speaking in the scripted chat's order, the terminal's
output comes back as observations in AG2's executor format, a rerun asks the model
nothing, and a warm start injects a wrong program, whose output the terminal reports, and
goes live after it."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from whowhen.frameworks.base import FrameworkRun, run_framework
from whowhen.gateway.forward import client_forward
from whowhen.gateway.server import Gateway
from whowhen.gateway.session import Forward, Plan
from whowhen.registry import get_benchmark, has_policy, pair_tools
from whowhen.runtime import Action
from whowhen.standin.server import TestServer

from .framework_checks import check_warm_start, injection_plan, view
from .model_clients import cached_client

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("autogen") is None, reason="needs ag2 < 1 (autogen)"
)
CFG = {"n_tasks": 3, "min_ops": 2, "max_ops": 3}
BENCH = get_benchmark("arithmetic", CFG)
TASKS = BENCH.make_tasks(CFG, 1)
EXPERTS = {"Arithmetic_Expert", "Python_Expert", "Verification_Expert"}


def _adapter() -> Any:
    from whowhen.frameworks.ag2_adapter import AG2ExpertChat

    return AG2ExpertChat("arithmetic")


def _run(
    adapter: Any, gw: Gateway, forward: Forward, task: Any, run_id: str, plan: Plan | None = None
) -> FrameworkRun:
    tools = pair_tools("ag2_expert_chat", "arithmetic", CFG)
    prompts = BENCH.prompts["expert_chat"]
    return run_framework(
        adapter, BENCH.make_env(task), tools, prompts, gw, run_id, forward, 60, plan
    )


def test_the_expert_chat_pairs_with_the_benchmark_its_team_is_of() -> None:
    assert has_policy("ag2_expert_chat", "arithmetic")
    assert not has_policy("ag2_expert_chat", "table_qa")  # another team of experts


def test_the_group_chat_solves_tasks_as_captain_agent_chats_read(tmp_path: Path) -> None:
    adapter = _adapter()
    with TestServer() as srv, Gateway() as gw:
        forward = client_forward(cached_client(srv, tmp_path / "cache"))
        runs = [_run(adapter, gw, forward, t, t.task_id) for t in TASKS]
        asked = srv.completed
        again = [_run(adapter, gw, forward, t, t.task_id) for t in TASKS]
        assert srv.completed == asked  # the rerun came from the response cache
    for run, rerun in zip(runs, again, strict=True):
        history = run.episode.history
        assert run.episode.end_reason == "done" and run.episode.verdict.success
        assert {s.actor for s in history if s.is_agent_step} == EXPERTS
        terminal = [s for s in history if s.actor == "Computer_terminal"]
        assert terminal and all(s.kind == "observation" for s in terminal)
        assert all(s.content.startswith("exitcode: 0 (execution succeeded)") for s in terminal)
        assert all("```python\n" in history[s.step - 1].content for s in terminal)
        assert history[-1].actor == "Verification_Expert"
        assert history[-1].content.endswith("TERMINATE") and history[-1].tool == "final_answer"
        assert {e.agent for e in run.session.exchanges} == EXPERTS
        assert view(rerun.episode.history) == view(history)


def test_a_wrong_program_is_injected_and_the_chat_goes_on_live(tmp_path: Path) -> None:
    adapter = _adapter()
    task = TASKS[0]
    with TestServer() as srv, Gateway() as gw:
        forward = client_forward(cached_client(srv, tmp_path / "cache"))
        original = _run(adapter, gw, forward, task, "original")
        history = original.episode.history
        k = next(
            s.step for s in history if s.actor == "Python_Expert" and s.tool == "Computer_terminal"
        )
        step = history[k]
        code = step.tool_args["code"]
        wrong_code = code.replace(")", " + 1)", 1)
        wrong = Action(
            step.actor, step.content.replace(code, wrong_code), step.tool, {"code": wrong_code}
        )
        plan, index = injection_plan(original, k, wrong, adapter)
        before = srv.completed
        warm = _run(adapter, gw, forward, task, "injected", plan)
    check_warm_start(warm, history, k, index, srv.completed - before, wrong.tool_args)
    assert original.episode.verdict.success
    ran = warm.episode.history[k + 1]  # the terminal ran the injected program, live
    assert ran.actor == "Computer_terminal" and ran.content != history[k + 1].content
    assert view(warm.episode.history) != view(history)  # the chat went on from it
