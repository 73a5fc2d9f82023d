"""Models playing the built-in systems' roles over real HTTP: how a turn is shown and read
back, when a run that goes nowhere ends, mixed scripted and model roles, and the control
continuations that keep a stochastic agent's label honest."""

from __future__ import annotations

import json
import zlib

import polars as pl
import pytest

from whowhen.agents import protocol
from whowhen.agents.team import speaker
from whowhen.assembly import AgentModels, TeamLimits, make_system
from whowhen.benchmarks.arithmetic.env import TOOL_SPECS
from whowhen.continuation import continue_injections
from whowhen.injection.plan import plan_injections
from whowhen.models import make_client
from whowhen.registry import SYSTEMS
from whowhen.rollouts import run_rollouts
from whowhen.runtime import Step
from whowhen.runtime.records import by_run, steps_from_frame
from whowhen.standin.responders import default_responder
from whowhen.standin.server import Behaviour, TestServer
from whowhen.taxonomy import load_taxonomy

from .conftest import ROOT
from .responders import looping


def _client(srv: TestServer, native: bool = False):
    return make_client(
        "m",
        {"cache_dir": None, "progress": False},
        {"m": {"id": "openai-compatible/mock", "base_url": srv.url, "native_tools": native}},
    )


def test_a_turn_is_shown_back_exactly_as_written() -> None:
    """No 'Thought: ' is added to a turn that already has one, however many turns pass."""
    own = Step(1, "assistant", "action", "Thought: add 2.", "calculator", {"expression": "1 + 2"})
    history = [Step(0, "user", "message", "Task."), own, Step(2, "calculator", "observation", "3")]
    messages = protocol.to_messages(history * 1, "assistant")
    written = 'Thought: add 2.\nAction: calculator({"expression": "1 + 2"})'
    assert [m.role for m in messages] == ["user", "assistant", "user"]
    assert messages[1].joined_text() == written
    turn = protocol.parse_turn("assistant", written, TOOL_SPECS)
    assert (
        turn.problem is None
        and protocol.render_turn(
            Step(1, "assistant", "action", turn.action.content, "calculator", turn.action.tool_args)
        )
        == written
    )


def test_an_unreadable_turn_gets_a_reminder_and_user_blocks_merge() -> None:
    history = [
        Step(0, "user", "message", "Task."),
        Step(1, "assistant", "message", "Thought: hmm"),
        Step(2, "feedback", "message", "Feedback on attempt 0 (failed): ..."),
    ]
    messages = protocol.to_messages(history, "assistant")
    assert [m.role for m in messages] == ["user", "assistant", "user"]  # roles alternate
    assert messages[2].joined_text().startswith(protocol.REMINDER)
    assert "[feedback]: Feedback on attempt 0" in messages[2].joined_text()
    assert protocol.parse_turn("assistant", "Action: rm(-rf)", TOOL_SPECS).problem
    assert (
        protocol.parse_turn("solver", "Proposed answer: 3.", TOOL_SPECS, team=True).problem is None
    )


def test_the_oldest_observations_are_trimmed_first() -> None:
    history = [Step(0, "user", "message", "Task.")]
    for i in range(1, 20, 2):
        history += [
            Step(i, "assistant", "action", "look", "calculator", {"expression": "1"}),
            Step(i + 1, "calculator", "observation", "x" * 500),
        ]
    shown, trimmed = protocol.fit(history, 2000)
    assert trimmed > 0 and sum(len(s.content) for s in shown) <= 2000
    assert shown[2].content == protocol.TRIMMED and shown[-1].content == "x" * 500
    assert [s.content for s in shown if s.kind != "observation"] == [
        s.content for s in history if s.kind != "observation"
    ]


@pytest.mark.parametrize(("system", "benchmark"), [("solver_verifier", "arithmetic"),
                                                   ("orchestrator", "web_shop")])  # fmt: skip
def test_the_turn_taking_rule_matches_the_scripted_systems(system: str, benchmark: str) -> None:
    _, steps, _ = run_rollouts(benchmark, system, {"n_tasks": 6}, 1, 0.1, 300)
    agents = SYSTEMS[system][benchmark].agents
    for frame in by_run(steps).values():
        history = steps_from_frame(frame)
        for i, step in enumerate(history):
            if step.is_agent_step:
                assert speaker(system, agents, history[:i]) == step.actor


def test_a_model_that_never_calls_a_tool_stops_early() -> None:
    with TestServer(Behaviour(responder=looping, native_tools=False)) as srv:
        runs, _, _ = run_rollouts(
            "arithmetic", "llm_react", {"n_tasks": 2}, 1, 0.0, 200, client=_client(srv)
        )
        assert len(srv.requests) == 8  # 4 turns per run, then the run ends
    assert runs["end_reason"].to_list() == ["stalled: assistant made no tool call in 4 turns"] * 2
    assert [json.loads(m)["parse_failures"] for m in runs["meta"]] == [4, 4]
    assert not runs["success"].any()


def test_a_model_that_repeats_itself_stops_early() -> None:
    def same(prompt: str, schema) -> str:
        if protocol.RULES_END not in prompt:
            return default_responder(prompt, schema)
        return 'Thought: again.\nAction: calculator({"expression": "1 + 1"})'

    with TestServer(Behaviour(responder=same, native_tools=False)) as srv:
        runs, _, _ = run_rollouts(
            "arithmetic", "llm_react", {"n_tasks": 1}, 1, 0.0, 200, client=_client(srv)
        )
    assert runs["end_reason"][0] == "stalled: assistant repeated the same turn 3 times"


def test_history_is_trimmed_to_the_context_budget() -> None:
    with TestServer(Behaviour(native_tools=False)) as srv:
        models = AgentModels(_client(srv), limits=TeamLimits(context_chars=1000))
        runs, _, _ = run_rollouts(
            "table_qa", "llm_react", {"n_tasks": 2}, 1, 0.0, 200, client=models
        )
        longest = max(len(json.dumps(b["messages"])) for b in srv.bodies)
    assert sum(json.loads(m)["trimmed"] for m in runs["meta"]) > 0
    assert longest < 6000  # the rules, the task and the turns; old observations cut


def test_scripted_and_model_roles_mix() -> None:
    """The verifier played by the reference policy, the solver by the model: only the
    solver's turns are asked of the server, and the team still solves the tasks."""
    with TestServer(Behaviour(native_tools=False)) as srv:
        models = AgentModels(_client(srv), roles={"verifier": "scripted"})
        runs, steps, _ = run_rollouts(
            "arithmetic", "llm_solver_verifier", {"n_tasks": 3}, 1, 0.0, 300, client=models
        )
        asked = len(srv.requests)
    assert runs["success"].all() and runs["topology"][0] == "multi"
    agent_steps = steps.filter(pl.col("actor").is_in(["solver", "verifier"]))
    assert asked == agent_steps.filter(pl.col("actor") == "solver").height
    assert agent_steps.filter(pl.col("actor") == "verifier").height > 0
    assert set(runs["policy"]) == {"openai-compatible/mock+scripted"}


def test_a_role_without_a_model_is_a_clear_error() -> None:
    from whowhen.errors import WhowhenError

    with pytest.raises(WhowhenError, match="no model plays solver"):
        make_system(
            "llm_solver_verifier", "arithmetic", client=AgentModels(None, {"verifier": "scripted"})
        )


def flaky(prompt: str, schema, seed) -> str:
    """The stand-in, except that under some seeds (not the rollouts' seed 1) it gives a
    wrong final answer: a model that fails from a good prefix now and then."""
    text = default_responder(prompt, schema)
    if "Action: final_answer" not in text or seed == 1:
        return text
    task = prompt.split(protocol.RULES_END, 1)[-1][:400]
    if zlib.crc32(f"{seed}:{task}".encode()) % 3:
        return text
    return text.replace('"answer": "', '"answer": "9')


def test_labels_of_a_stochastic_model_need_successful_controls() -> None:
    """Each flipped injection is continued 2 more times from the same prefix with the
    original action: items whose controls fail are dropped, the others kept."""
    with TestServer(Behaviour(responder=flaky, seeded=True, native_tools=False)) as srv:
        client = _client(srv)
        cfg = {"n_tasks": 12, "min_ops": 2, "max_ops": 3}
        runs, steps, slips = run_rollouts(
            "arithmetic", "llm_react", cfg, 1, 0.0, 200, client=client
        )
        assert runs["success"].all()
        plan = plan_injections(runs, steps, load_taxonomy(ROOT / "config/taxonomy.yaml"), 3, 1)
        out = continue_injections(plan, runs, steps, cfg, 1, 200, client=client, slips=slips,
                                  controls=(2, 1.0))  # fmt: skip
    cont = out["continuations"].filter(pl.col("status") == "flipped")
    assert (cont["controls_run"] == 2).all()
    labelled = set(out["labels"]["run_id"])
    kept = cont.filter(pl.col("controls_ok") == 2)
    dropped = cont.filter(pl.col("controls_ok") < 2)
    assert kept.height > 0 and dropped.height > 0
    assert set(kept["run_id"]) <= labelled and not set(dropped["run_id"]) & labelled
    assert dropped["reason"].str.contains("control continuations succeeded").all()
    assert (~dropped["controls_passed"]).all() and kept["controls_passed"].all()


def test_the_report_shows_what_the_model_did_beside_the_scripted_reference() -> None:
    from whowhen.analysis.played import played_html, played_table

    with TestServer(Behaviour(responder=looping, native_tools=False)) as srv:
        played, _, _ = run_rollouts(
            "arithmetic", "llm_react", {"n_tasks": 2}, 1, 0.0, 200, client=_client(srv)
        )
    scripted, _, _ = run_rollouts("arithmetic", "react", {"n_tasks": 2}, 1, 0.0, 200)
    table = played_table(pl.concat([played, scripted]))
    rows = {r["system"]: r for r in table.iter_rows(named=True)}
    assert set(rows) == {"react", "llm_react"}
    assert rows["llm_react"]["success_rate"] == 0 and rows["react"]["success_rate"] == 1
    assert rows["llm_react"]["unreadable_turns"] == 8 and rows["llm_react"]["stopped_early"] == 2
    assert rows["react"]["unreadable_turns"] == 0 and rows["react"]["tokens_in"] == 0
    assert "Model-played systems" in "".join(played_html(table))
    assert played_table(scripted).is_empty() and played_html(played_table(scripted)) == []


@pytest.mark.slow  # model-played teams against the test server, twice over
def test_model_played_runs_go_side_by_side_and_come_out_in_order() -> None:
    """With llm.max_concurrency 4, up to 4 runs wait on the model at once; the tables are
    the same as one run after another (task order, not finishing order)."""
    import threading
    import time

    state = {"now": 0, "most": 0}
    lock = threading.Lock()

    def slow(prompt: str, schema) -> str:
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        time.sleep(0.02)
        with lock:
            state["now"] -= 1
        return default_responder(prompt, schema)

    tables = {}
    for concurrency in (1, 4):
        state["most"] = 0
        with TestServer(Behaviour(responder=slow, native_tools=False)) as srv:
            models = AgentModels(_client(srv), concurrency=concurrency)
            tables[concurrency] = run_rollouts(
                "arithmetic", "llm_react", {"n_tasks": 6}, 1, 0.0, 200, client=models
            )
        assert state["most"] == concurrency
    for one, four in zip(tables[1], tables[4], strict=True):
        assert one.drop("latency_s", strict=False).equals(four.drop("latency_s", strict=False))
