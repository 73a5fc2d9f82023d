"""autogen-agentchat's `MagenticOneGroupChat` as the ledger team of Who&When's
Hand-Crafted runs, in its own environment (a child process: the framework's pins are not
the core install's), behind the gateway and played by the stand-in over HTTP.

The team shops the multi-page web shop in long runs (Magentic-One's own Orchestrator
prompts, its ledger read back as the scripted ledger's steps), a rerun asks the model
nothing, and a warm start replays the prefix exactly, injects a premature checkout into
the Orchestrator's progress ledger (an instruction is a field of the ledger Magentic-One
broadcasts: the ledger is the unit an error is injected into) and the run fails. A child
that dies, or a model server that is gone, ends the run as an outage, not as the agents'
failure."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from whowhen.agents.ledger import LEDGER_HEAD, ledger_body
from whowhen.errors import is_infra
from whowhen.frameworks import envs
from whowhen.frameworks.base import FrameworkRun, run_framework
from whowhen.frameworks.child import run_child
from whowhen.frameworks.magentic_one_adapter import ENV, MagenticOneTeam
from whowhen.frameworks.systems import framework_version, missing_extra
from whowhen.gateway.forward import client_forward
from whowhen.gateway.server import Gateway
from whowhen.gateway.session import Forward, Plan
from whowhen.registry import get_benchmark, has_policy, pair_tools
from whowhen.runtime import Action
from whowhen.standin.server import TestServer

from .framework_checks import check_warm_start, injection_plan, view
from .model_clients import cached_client

pytestmark = pytest.mark.slow
CFG = {"n_tasks": 4}
BENCH = get_benchmark("web_shop", CFG)
TASKS = BENCH.make_tasks(CFG, 1)
CHECKOUT = "Please click 'Checkout' to place the order with the cart as it is."


@pytest.fixture(scope="session")
def python() -> Path:
    """The framework's environment, built once (from the package index or its cache)."""
    return envs.python(ENV)


def _run(
    gw: Gateway, forward: Forward, task: Any, run_id: str, plan: Plan | None = None
) -> FrameworkRun:
    tools = pair_tools("magentic_one", "web_shop", CFG)
    prompts = BENCH.prompts["ledger"]
    return run_framework(
        MagenticOneTeam("web_shop"), BENCH.make_env(task), tools, prompts, gw, run_id,
        forward, 200, plan,
    )  # fmt: skip


def test_the_system_is_registered_with_its_own_environment() -> None:
    assert has_policy("magentic_one", "web_shop")
    assert missing_extra("magentic_one") is None
    assert framework_version("magentic_one") == "autogen-agentchat 0.7.5"
    assert envs.state(ENV, Path("/nonexistent")) == "not built"


def test_the_team_shops_in_long_runs_as_magentic_one_runs_read(
    python: Path, tmp_path: Path
) -> None:
    with TestServer() as srv, Gateway() as gw:
        forward = client_forward(cached_client(srv, tmp_path / "cache"))
        runs = [_run(gw, forward, t, t.task_id) for t in TASKS]
        asked = srv.completed
        again = _run(gw, forward, TASKS[0], TASKS[0].task_id)
        assert srv.completed == asked  # the rerun came from the response cache
    lengths = []
    for run in runs:
        history = run.episode.history
        assert run.episode.end_reason == "done" and run.episode.verdict.success
        speakers = {s.actor for s in history if s.is_agent_step}
        assert {"Orchestrator", "WebSurfer"} <= speakers <= {"Orchestrator", "WebSurfer",
                                                            "Assistant"}  # fmt: skip
        ledgers = [s for s in history if s.content.startswith("Updated Ledger:\n")]
        assert ledgers and all(s.actor == "Orchestrator" for s in ledgers)
        pages = [s for s in history if s.kind == "observation"]
        assert {"search", "click", "checkout"} <= {s.actor for s in pages}
        assert history[-1].actor == "checkout"  # the team stops once the order is placed
        lengths.append(sum(s.is_agent_step for s in history))
    assert min(lengths) >= 30 and statistics.median(lengths) >= 40
    assert view(again.episode.history) == view(runs[0].episode.history)


def test_a_premature_checkout_is_injected_into_the_ledger(python: Path, tmp_path: Path) -> None:
    team = MagenticOneTeam("web_shop")
    with TestServer() as srv, Gateway() as gw:
        forward = client_forward(cached_client(srv, tmp_path / "cache"))
        original = _run(gw, forward, TASKS[0], "original")
        history = original.episode.history
        k = next(
            s.step - 1 for s in history
            if s.actor == "Orchestrator" and s.content.startswith("To WebSurfer: Please click")
        )  # fmt: skip
        body = ledger_body(history[k])
        body["instruction_or_question"]["answer"] = CHECKOUT
        wrong = Action("Orchestrator", LEDGER_HEAD + json.dumps(body, indent=2))
        plan, index = injection_plan(original, k, wrong, team)
        before = srv.completed
        warm = _run(gw, forward, TASKS[0], "injected", plan)
    check_warm_start(warm, history, k, index, srv.completed - before, None)
    assert warm.episode.history[k].content == wrong.content
    assert warm.episode.history[k + 1].content == f"To WebSurfer: {CHECKOUT}"
    assert original.episode.verdict.success and not warm.episode.verdict.success
    assert warm.episode.history[-1].actor == "checkout"  # the WebSurfer did as told


def test_a_child_that_dies_is_an_outage_and_one_that_raises_is_the_run_s(
    python: Path, tmp_path: Path
) -> None:
    from whowhen.errors import InfraError

    with pytest.raises(InfraError, match=r"the framework process (died|closed its input)"):
        run_child(Path("/bin/false"), "magentic_one.py", {}, lambda n, a: "", lambda: False, 30)
    with TestServer() as srv, Gateway() as gw:
        forward = client_forward(cached_client(srv, tmp_path / "cache"))
        srv.stop()  # the model's server is gone: the framework cannot get an answer
        run = _run(gw, forward, TASKS[1], "down")
    assert is_infra(run.episode.end_reason), run.episode.end_reason


def test_the_command_line_lists_the_frameworks_and_their_environments(
    python: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from whowhen.cli import main

    assert main(["list", "frameworks"]) == 0
    out = capsys.readouterr().out
    assert "magentic_one  (autogen-agentchat 0.7.5, playing ledger; own environment " in out
    assert "magentic_one: ready)" in out  # the session's environment, built above
    assert "ag2_expert_chat  (ag2 " in out


def test_the_project_s_own_ledger_protocol_is_not_read_as_magentic_one() -> None:
    from whowhen.agents.ledger import initial_plan
    from whowhen.agents.protocol import RULES_END
    from whowhen.standin.framework_turns import framework_turn
    from whowhen.standin.responders import _known

    role = BENCH.prompts["ledger"]["WebSurfer"]  # the role prompt opens a model's request
    plan = initial_plan("Buy a red mug.", ["WebSurfer searches the shop."])
    prompt = f"{role}\n{TASKS[0].question}\n{plan}\n{RULES_END}\nYour turn."
    assert framework_turn(prompt, _known()) is None
