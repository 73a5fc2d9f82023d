"""The framework systems' place in the pipeline, piece by piece: the registry and config
know them, an injection becomes a gateway plan (an answer's earlier tool calls kept, the
injected one written in), a warm start's prefix is compared step by step, and the
report's per-framework table counts what happened."""

from __future__ import annotations

import copy
import json

import polars as pl
import pytest

from whowhen.analysis.frameworks import COLUMNS, frameworks_table
from whowhen.config import validate_config
from whowhen.errors import WhowhenError
from whowhen.frameworks.base import FrameworkRun
from whowhen.frameworks.stage import (
    exchange_rows,
    exchanges_from_frame,
    injection_plan,
    warm_start_result,
)
from whowhen.frameworks.systems import FRAMEWORK_SYSTEMS
from whowhen.gateway.exchange import Exchange
from whowhen.gateway.session import Answer, Plan, Session
from whowhen.registry import base_system, has_policy, model_systems
from whowhen.runtime import Action, Episode, Step
from whowhen.schema import EXCHANGES, to_arrow

from .conftest import ROOT
from .profile_config import merged_profile


class _Native:
    volatile = ("temperature",)

    def write(self, actions: list[Action], message: dict) -> dict:
        from whowhen.frameworks.record import native_message

        return native_message(actions, message)


def _calls(*names: str) -> list[dict]:
    return [
        {"id": f"call_0_{k}", "type": "function",
         "function": {"name": n, "arguments": json.dumps({"expression": f"{k} + 1"})}}
        for k, n in enumerate(names)
    ]  # fmt: skip


def _recorded() -> tuple[list[Exchange], list[Step]]:
    steps = [
        Step(0, "user", "message", "task"),
        Step(1, "solver", "action", "two calls", "calculator", {"expression": "0 + 1"}),
        Step(2, "solver", "action", "", "calculator", {"expression": "1 + 1"}),
        Step(3, "calculator", "observation", "1"),
        Step(4, "calculator", "observation", "2"),
        Step(5, "verifier", "message", "approved"),
    ]
    message = {"role": "assistant", "content": "two calls",
               "tool_calls": _calls("calculator", "calculator")}  # fmt: skip
    exchanges = [
        Exchange(0, "solver", {"messages": [1]}, message, "live", steps=[1, 2]),
        Exchange(
            1,
            "verifier",
            {"messages": [2]},
            {"role": "assistant", "content": "approved"},
            "live",
            steps=[5],
        ),
    ]
    return exchanges, steps


def test_an_injection_inside_a_multi_call_answer_keeps_the_calls_before_it() -> None:
    exchanges, steps = _recorded()
    wrong = Action("solver", "", "calculator", {"expression": "1 + 7"})
    plan = injection_plan(_Native(), exchanges, steps, 2, wrong)
    assert plan.inject_at == 0 and plan.volatile == ("temperature",)
    calls = plan.injected["tool_calls"]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [
        {"expression": "0 + 1"},
        {"expression": "1 + 7"},
    ]
    assert [c["id"] for c in calls] == ["call_0_0", "call_0_1"]  # the recorded ids kept
    assert plan.injected["content"] == "two calls"
    # the first call of the answer: the answer holds the injected action alone
    first = injection_plan(_Native(), exchanges, steps, 1, wrong)
    assert len(first.injected["tool_calls"]) == 1
    # a message step becomes a plain answer
    said = injection_plan(_Native(), exchanges, steps, 5, Action("verifier", "rejected"))
    assert said.inject_at == 1 and said.injected == {"role": "assistant", "content": "rejected"}


def test_an_injection_the_recording_cannot_hold_is_refused_with_the_field() -> None:
    exchanges, steps = _recorded()
    with pytest.raises(WhowhenError, match="step 3 is not part of a recorded model answer"):
        injection_plan(_Native(), exchanges, steps, 3, Action("calculator", "9"))
    with pytest.raises(WhowhenError, match="replacement actor 'verifier'") as err:
        injection_plan(_Native(), exchanges, steps, 2, Action("verifier", "x"))
    assert err.value.field == "replacement_action"


def test_the_exchanges_table_round_trips() -> None:
    exchanges, _ = _recorded()
    rows = exchange_rows("run-1", exchanges)
    table = pl.from_arrow(to_arrow(rows, EXCHANGES))
    back = exchanges_from_frame(table)
    assert [(e.index, e.agent, e.request, e.message, e.steps) for e in back] == [
        (e.index, e.agent, e.request, e.message, e.steps) for e in exchanges
    ]


def _run(history: list[Step], failure: str | None = None) -> FrameworkRun:
    episode = Episode()
    episode.history = list(history)
    session = Session("r", lambda request, agent: None)
    session.failure = failure
    return FrameworkRun(episode, session)


def test_a_warm_start_prefix_is_compared_step_by_step() -> None:
    _, steps = _recorded()
    exact = warm_start_result(_run(steps), steps, 4)
    assert exact.fidelity.exact and exact.fidelity.checked == 4
    changed = copy.deepcopy(steps)
    changed[3] = Step(3, "calculator", "observation", "100")
    drift = warm_start_result(_run(changed), steps, 5)
    assert not drift.fidelity.exact and drift.fidelity.first_mismatch_step == 3
    # the gateway refused the replay: no exact prefix even where the steps so far agree
    refused = warm_start_result(_run(steps[:2], "call 1 (verifier) differs"), steps, 5)
    assert not refused.fidelity.exact and refused.fidelity.first_mismatch_step == 2


def test_the_registry_and_config_know_the_framework_systems() -> None:
    assert set(FRAMEWORK_SYSTEMS) <= set(model_systems())
    assert base_system("ag2_solver_verifier") == "solver_verifier"
    assert has_policy("langgraph_solver_verifier", "table_qa")
    assert not has_policy("smolagents_react", "chart_qa")  # an image benchmark: not yet
    assert not has_policy("smolagents_code_act", "table_qa")  # no code_act policy there
    profile = ROOT / "config/profiles/frameworks.yaml"
    config = merged_profile(profile)
    config["agents"]["model"] = None
    with pytest.raises(WhowhenError, match="needs a model") as err:
        validate_config(config)
    assert err.value.field == "agents.model"
    valid = validate_config(merged_profile(profile))
    assert valid["sandbox"]["kernel_process_cap"] == "always"  # model-written code: capped


def test_the_per_framework_table_counts_runs_calls_and_fidelity() -> None:
    def run(system: str, success: bool, calls: int) -> dict:
        meta = {"agent_steps": 4, "calls": calls, "live": calls, "replayed": 0, "injected": 0}
        return {"system": system, "benchmark": "arithmetic", "origin": "rollout",
                "policy": "ag2 0.14.0/openai-compatible/mock", "success": success,
                "meta": json.dumps(meta), "cost_usd": 0.5}  # fmt: skip

    runs = pl.DataFrame(
        [run("ag2_solver_verifier", True, 3), run("ag2_solver_verifier", False, 5),
         run("react", True, 0)]
    )  # fmt: skip
    base = {"system": "ag2_solver_verifier", "benchmark": "arithmetic", "prefix_checked": 4}
    continuations = pl.DataFrame(
        [
            {**base, "prefix_exact": True, "status": "flipped", "reason": "done",
             "calls_replayed": 2, "calls_live": 1},
            {**base, "prefix_exact": False, "status": "invalid",
             "reason": "fidelity: call 1 (solver) differs from the recording at messages[2]",
             "calls_replayed": 1, "calls_live": 0},
            {**base, "prefix_checked": 0, "prefix_exact": False, "status": "invalid",
             "reason": "no recorded model calls", "calls_replayed": None, "calls_live": None},
        ]
    )  # fmt: skip
    [row] = frameworks_table(runs, continuations).to_dicts()
    assert row["framework"] == "ag2 0.14.0" and row["runs"] == 2 and row["success_rate"] == 0.5
    assert row["model_calls"] == 8 and row["agent_steps_per_run"] == 4.0
    assert row["warm_starts"] == 2 and row["prefix_exact"] == 0.5 and row["drifted"] == 1
    assert row["first_drift"].startswith("fidelity: call 1 (solver) differs")
    assert (row["calls_replayed"], row["calls_live"], row["flipped"]) == (3, 1, 1)
    empty = frameworks_table(runs.filter(pl.col("system") == "react"), continuations)
    assert empty.is_empty() and empty.columns == list(COLUMNS)


def test_replayed_and_injected_answers_carry_the_recorded_usage() -> None:
    """Tokens and cost of a warm-started framework run read as the recording's up to the
    injection point (the injected answer takes the usage of the answer it replaces), so
    no cost column marks where the error went in."""
    said = {"role": "assistant", "content": "x"}
    recorded = [
        Exchange(0, "a", {"messages": [1]}, said, "live", 10, 5, 0.1),
        Exchange(1, "a", {"messages": [2]}, said, "live", 20, 6, 0.2),
    ]
    session = Session(
        "r",
        lambda request, agent: Answer("z", (), 30, 7, 0.3),
        Plan(recorded, 1, {"role": "assistant", "content": "injected"}),
    )
    for k in (1, 2, 3):
        session.answer("a", {"messages": [k]})
    assert [(e.source, e.input_tokens, e.output_tokens, e.cost_usd) for e in session.exchanges] == [
        ("replayed", 10, 5, 0.1),
        ("injected", 20, 6, 0.2),
        ("live", 30, 7, 0.3),
    ]
