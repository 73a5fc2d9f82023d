"""Import fidelity: one real smolagents program (a manager handing a task to a calculator
agent with a tool) run against the test server three ways, recorded behind the gateway,
traced by OpenInference's smolagents instrumentation, and traced by the official GenAI
OpenAI instrumentation, imports as the same steps: the same agents by the same names, the
same task, hand-off, tool calls and tool results, in the same order."""

from __future__ import annotations

import json
import sys

import pytest

from whowhen.cli import main
from whowhen.imports.conversation import Message, OpenCalls, ToolCall, tool_results
from whowhen.imports.gateway import import_gateway
from whowhen.imports.otel import import_otel
from whowhen.standin.server import Behaviour, TestServer

from .conftest import ROOT
from .otel_fixtures import (
    PROGRAM_TASK,
    smolagents_program_traces,
    start_smolagents_program_traces,
)

PROGRAM = ROOT / "tests" / "smolagents_program.py"


def _steps(result) -> list[tuple]:
    assert result.errors == [] and result.tables()["runs"].height == 1
    rows = result.tables()["steps"].sort("step").iter_rows(named=True)
    return [
        (
            s["actor"],
            s["kind"],
            s["content"],
            s["tool"],
            s["tool_args"] and json.loads(s["tool_args"]),
        )
        for s in rows
    ]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple]]:
    """way of recording -> the imported steps."""
    pytest.importorskip("smolagents")
    pytest.importorskip("openinference.instrumentation.smolagents")
    pytest.importorskip("opentelemetry.instrumentation.openai_v2")
    tmp = tmp_path_factory.mktemp("fidelity")
    start_smolagents_program_traces()  # the traced runs, while the recorded one runs here
    with TestServer(Behaviour(slip_rate=0.0)) as srv:
        model = ["--model", "openai-compatible/mock", "--base-url", srv.url]
        argv = ["record", "-o", str(tmp / "rec"), *model, "--cache-dir", str(tmp / "cache")]
        assert main([*argv, "--", sys.executable, str(PROGRAM), *PROGRAM_TASK]) == 0
    steps = {"gateway": _steps(import_gateway(tmp / "rec"))}
    for convention, trace in smolagents_program_traces(tmp / "traces").items():
        steps[convention] = _steps(import_otel(trace))
    return steps


def test_the_program_imports_as_the_same_steps_whichever_way_it_was_recorded(
    imported: dict[str, list[tuple]],
) -> None:
    gateway = imported["gateway"]
    assert imported["openinference"] == gateway
    assert imported["genai"] == gateway


def test_the_steps_are_what_the_program_did(imported: dict[str, list[tuple]]) -> None:
    """Read from the gateway's recording: the task, the manager's call of its managed
    agent, the hand-off, the tool call and its result (the tool's text, not smolagents'
    `Observation:` rendering), the calculator's answer as the manager's tool result."""
    task, answer = PROGRAM_TASK
    steps = imported["gateway"]
    actors = [(actor, kind, tool) for actor, kind, _, tool, _ in steps]
    assert actors == [
        ("user", "message", None),
        ("manager", "action", "calculator"),
        ("user", "message", None),
        ("calculator", "action", "multiply"),
        ("multiply", "observation", None),
        ("calculator", "action", "final_answer"),
        ("calculator", "observation", None),
        ("manager", "action", "final_answer"),
    ]
    assert steps[0][2].endswith(task) and task in steps[2][2]  # the task, then the hand-off
    assert steps[3][4] == {"a": 6, "b": 7} and steps[4][2] == answer
    assert steps[6][2].endswith(answer) and steps[7][4]["answer"] == steps[6][2]


def test_a_tool_result_sent_as_a_user_message_is_read_as_the_tools() -> None:
    """smolagents sends a tool result as a user message "Observation: ..." after its own
    turn (an error as "Call id: ...\nError: ..."): read as a tool result, its label off.
    A user message that does not follow the agent's turn stays the user's, labelled or
    not."""
    task = Message("user", "Observation: the sky is blue. What colour is the sea?")
    turn = Message("assistant", "Calling tools:\n[{'id': 'call_0', ...}]")
    messages = [
        Message("system", "You are the calculator agent."),
        task,
        turn,
        Message("user", "Observation:\n42"),
        turn,
        Message("user", "Call id: call_7\nError:\nmultiply() missing 'b'"),
    ]
    read = [(m.role, m.content, m.tool_call_id) for m in tool_results(messages)]
    assert read[1:] == [
        ("user", task.content, None),
        ("assistant", turn.content, None),
        ("tool-response", "42", None),
        ("assistant", turn.content, None),
        ("tool-response", "Error:\nmultiply() missing 'b'", "call_7"),
    ]
    calls = OpenCalls()
    calls.issue("calculator", [ToolCall("call_0", "multiply", {"a": 6, "b": 7})])
    assert calls.answer("manager", Message("tool-response", "42")) == "tool"  # not its call
    assert calls.answer("calculator", Message("tool-response", "42")) == "multiply"
    assert calls.answer("calculator", Message("tool-response", "42")) == "tool"  # answered
