"""The model gateway over real HTTP: a client speaking the OpenAI API (the `openai` SDK, as
frameworks use it) records a run through the gateway to the test server, then replays
it exactly, is answered with an injected message at the injection point, and is refused
when an observation of the prefix changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest

from whowhen.gateway.exchange import first_difference, normalise
from whowhen.gateway.forward import client_forward
from whowhen.gateway.server import MODEL, Gateway
from whowhen.gateway.session import Plan, Session
from whowhen.models import DEFAULT_PRICES, ModelClient, ResponseCache, parse_model
from whowhen.standin.server import Behaviour, TestServer, chat_turns

from .model_clients import PRICES, cached_client

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "calculator",
            "description": "Evaluate an arithmetic expression.",
            "parameters": {
                "type": "object",
                "properties": {"expression": {"type": "string"}},
                "required": ["expression"],
            },
        },
    }
]


def calc_model(prompt: str, schema: dict[str, Any] | None) -> str:
    """A scripted model: ask the calculator once, then answer with what it said."""
    observed = [line for line in prompt.splitlines() if line.startswith("Observation (")]
    if not observed:
        return 'I will compute it.\nAction: calculator({"expression": "6 * 7"})'
    return f"The answer is {observed[-1].split(': ', 1)[1]}."


def agent_run(base_url: str, calculator: Any = None) -> list[dict[str, Any]]:
    """A minimal framework: the model calls tools until it answers in text."""
    calculator = calculator or (lambda expression: str(eval(expression)))  # trusted test input
    llm = openai.OpenAI(base_url=base_url, api_key="framework-key", max_retries=0)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a careful calculator agent."},
        {"role": "user", "content": "What is 6 * 7?"},
    ]
    for _ in range(5):
        reply = llm.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
        message = reply.choices[0].message.model_dump(exclude_none=True)
        messages.append(message)
        if not message.get("tool_calls"):
            break
        for call in message["tool_calls"]:
            args = json.loads(call["function"]["arguments"])
            messages.append(
                {"role": "tool", "tool_call_id": call["id"], "content": calculator(**args)}
            )
    return messages


def test_normalise_drops_volatile_fields_and_differences_are_named() -> None:
    body = {
        "model": "x",
        "stream": False,
        "messages": [{"role": "user", "content": "hi", "meta": {"ts": 5}}],
    }
    assert normalise(body, ("messages.*.meta.ts",)) == {
        "messages": [{"role": "user", "content": "hi", "meta": {}}]
    }
    a = {"messages": [{"role": "user", "content": "hi"}, {"role": "tool", "content": "42"}]}
    b = {"messages": [{"role": "user", "content": "hi"}, {"role": "tool", "content": "41"}]}
    assert first_difference(a, b) == 'messages[1].content: "41", recorded "42"'
    assert first_difference(a, a) is None
    assert "1 items, recorded 2" in first_difference(a, {"messages": a["messages"][:1]})


def test_record_replay_inject_and_refuse_a_changed_observation(tmp_path: Path) -> None:
    with TestServer(Behaviour(responder=calc_model)) as srv, Gateway() as gw:
        forward = client_forward(cached_client(srv, tmp_path / "cache"))

        # record: every call live, tool-call ids the gateway's own
        recorded = Session("run-1", forward)
        gw.open(recorded)
        messages = agent_run(gw.base_url("run-1", "solver"))
        assert messages[-1]["content"] == "The answer is 42."
        assert [e.source for e in recorded.exchanges] == ["live", "live"]
        assert [e.agent for e in recorded.exchanges] == ["solver", "solver"]
        assert messages[2]["tool_calls"][0]["id"] == "call_0_0"
        assert messages[2]["content"] == "I will compute it."
        asked = srv.completed
        assert asked == 2

        # replay up to call 1, which gets an injected answer: the server is not asked
        injected = {"role": "assistant", "content": "The answer is 41."}
        plan = Plan(recorded.exchanges, inject_at=1, injected=injected)
        replay = Session("run-1-inj", forward, plan)
        gw.open(replay)
        messages = agent_run(gw.base_url("run-1-inj", "solver"))
        assert messages[-1]["content"] == "The answer is 41."
        assert [e.source for e in replay.exchanges] == ["replayed", "injected"]
        assert srv.completed == asked
        assert [e.request for e in replay.exchanges] == [e.request for e in recorded.exchanges]

        # the same replay with the calculator's observation changed: refused at call 1
        tampered = Session("run-1-bad", forward, Plan(recorded.exchanges, 1, injected))
        gw.open(tampered)
        with pytest.raises(openai.APIStatusError) as err:
            agent_run(gw.base_url("run-1-bad", "solver"), calculator=lambda expression: "43")
        assert err.value.status_code == 409
        assert "call 1 (solver) differs from the recording at messages[3].content" in str(err.value)
        assert '"43", recorded "42"' in tampered.failure

        # a call from another agent than recorded is refused too
        other = Session("run-1-other", forward, Plan(recorded.exchanges, 1, injected))
        gw.open(other)
        with pytest.raises(openai.APIStatusError, match="comes from verifier, recorded from"):
            agent_run(gw.base_url("run-1-other", "verifier"))

        # recording again is served from the response cache: no new model call
        again = Session("run-2", forward)
        gw.open(again)
        agent_run(gw.base_url("run-2", "solver"))
        assert srv.completed == asked
        assert all(e.cached for e in again.exchanges)


def test_live_after_the_injection_and_streaming(tmp_path: Path) -> None:
    """A call after the injection point goes to the model; `stream: true` gets one chunk."""
    with TestServer(Behaviour(responder=calc_model)) as srv, Gateway() as gw:
        forward = client_forward(cached_client(srv, tmp_path / "cache"))
        recorded = Session("r", forward)
        gw.open(recorded)
        agent_run(gw.base_url("r", "solver"))
        # inject a different tool call at call 0: call 1 (after it) is live
        injected = {
            "role": "assistant",
            "content": "I will compute it.",
            "tool_calls": [{"id": "call_0_0", "type": "function",
                            "function": {"name": "calculator",
                                         "arguments": '{"expression": "6 * 8"}'}}],
        }  # fmt: skip
        replay = Session("r-inj", forward, Plan(recorded.exchanges, 0, injected))
        gw.open(replay)
        messages = agent_run(gw.base_url("r-inj", "solver"))
        assert [e.source for e in replay.exchanges] == ["injected", "live"]
        assert messages[-1]["content"] == "The answer is 48."

        llm = openai.OpenAI(base_url=gw.base_url("s", "solver"), api_key="k")
        gw.open(Session("s", forward))
        chunks = list(
            llm.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": "What is 1 + 1?"}],
                tools=TOOLS, stream=True,
            )
        )  # fmt: skip
        call = chunks[0].choices[0].delta.tool_calls[0]
        assert call.function.name == "calculator" and call.id == "call_0_0"


def test_chat_turns_render_tool_traffic_as_text() -> None:
    turns = chat_turns(
        [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function",
                 "function": {"name": "calculator", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "7"},
        ]
    )  # fmt: skip
    assert turns == [
        ("user", "q"),
        ("assistant", "Action: calculator({})"),
        ("user", "Observation (calculator): 7"),
    ]


def test_the_gateway_forwards_to_an_in_process_scripted_model(tmp_path: Path) -> None:
    """Behind the gateway any provider of the model layer: here `scripted/<name>`."""
    from whowhen.models.scripted_provider import RESPONDERS, register_responder

    register_responder("gateway_calc", calc_model, __file__, replace=True)
    try:
        spec = parse_model("scripted/gateway_calc", {})
        client = ModelClient(spec, PRICES, ResponseCache(tmp_path / "c"), progress=False)
        with Gateway() as gw:
            session = Session("run", client_forward(client))
            gw.open(session)
            messages = agent_run(gw.base_url("run", "solver"))
        assert messages[-1]["content"] == "The answer is 42."
        assert session.exchanges[0].message["tool_calls"][0]["function"]["name"] == "calculator"
        assert session.exchanges[0].cost_usd > 0 or session.exchanges[0].input_tokens > 0
    finally:
        RESPONDERS.pop("gateway_calc", None)


def test_the_gateway_command_records_your_own_agent(tmp_path: Path) -> None:
    """`whowhen gateway`: any run id and agent in the URL; one JSONL per run."""
    import re
    import signal
    import subprocess
    import sys

    main = "import sys; from whowhen.cli import main; sys.exit(main(sys.argv[1:]))"
    with TestServer(Behaviour(responder=calc_model)) as srv:
        proc = subprocess.Popen(
            [sys.executable, "-c", main, "gateway", "--model", "openai-compatible/mock",
             "--base-url", srv.url, "--port", "0", "--record", str(tmp_path / "runs"),
             "--cache-dir", str(tmp_path / "cache"),
             "--prices", str(DEFAULT_PRICES)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            line = proc.stdout.readline()
            port = re.search(r"127\.0\.0\.1:(\d+)/run/", line).group(1)
            messages = agent_run(f"http://127.0.0.1:{port}/run/my-run-7/planner/v1")
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                out, err = proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:  # never leave a gateway behind
                proc.kill()
                out, err = proc.communicate()
    assert proc.returncode == 0, err
    assert messages[-1]["content"] == "The answer is 42."
    lines = (tmp_path / "runs" / "my-run-7.jsonl").read_text().splitlines()
    records = [json.loads(x) for x in lines]
    assert [(r["index"], r["agent"], r["source"]) for r in records] == [
        (0, "planner", "live"), (1, "planner", "live"),
    ]  # fmt: skip
    assert records[0]["message"]["tool_calls"][0]["function"]["name"] == "calculator"
    assert records[1]["request"]["messages"][3]["content"] == "42"
    assert "2 calls" in out
