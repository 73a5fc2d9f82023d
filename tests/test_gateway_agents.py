"""How a one-run gateway tells a program's agents apart: a path `/agent/<name>/v1`, an
`X-Agent-Name` header, else the system prompt (a declared role, or `agent-N`)."""

from __future__ import annotations

import openai
import pytest

from whowhen.gateway.agents import AgentNames, declared_role
from whowhen.gateway.server import Gateway
from whowhen.gateway.session import Answer, Session


@pytest.mark.parametrize(
    ("prompt", "role"),
    [
        ("You are the planner agent. Plan.", "planner"),
        ("you are a Code-Reviewer agent", "code-reviewer"),
        ("You are an orchestrator_agent for the team", "orchestrator"),
        ("Your role is critic. Be harsh.", "critic"),
        ("You are a helpful assistant.", None),
        ("Answer briefly.", None),
    ],
)
def test_a_system_prompt_declares_a_role(prompt: str, role: str | None) -> None:
    assert declared_role(prompt) == role


def test_undeclared_prompts_are_numbered_in_call_order() -> None:
    names = AgentNames()

    def body(system: str | None) -> dict:
        head = [{"role": "system", "content": system}] if system is not None else []
        return {"messages": [*head, {"role": "user", "content": "hi"}]}

    got = [names.name(body(p)) for p in ("Be terse.", "You are the judge agent.", "Be kind.",
                                          "Be terse.", None)]  # fmt: skip
    assert got == ["agent-1", "judge", "agent-2", "agent-1", "agent"]


def test_path_then_header_then_prompt_over_http() -> None:
    def forward(request: dict, agent: str) -> Answer:
        return Answer(f"hello from {agent}", ())

    session = Session("run-1", forward)
    with Gateway(default_run="run-1") as gateway:
        gateway.open(session)
        root = f"http://127.0.0.1:{gateway.port}"
        messages = [{"role": "system", "content": "You are the scout agent."},
                    {"role": "user", "content": "go"}]  # fmt: skip
        for url, headers in (
            (f"{root}/agent/mapper/v1", {"X-Agent-Name": "ignored"}),
            (f"{root}/v1", {"X-Agent-Name": "pilot"}),
            (f"{root}/v1", {}),
        ):
            client = openai.OpenAI(base_url=url, api_key="x", default_headers=headers)
            client.chat.completions.create(model="m", messages=messages)
        bad = openai.OpenAI(base_url=f"{root}/v1", api_key="x",
                            default_headers={"X-Agent-Name": "../etc"})  # fmt: skip
        with pytest.raises(openai.BadRequestError, match=r"agent '\.\./etc' must be"):
            bad.chat.completions.create(model="m", messages=messages)
    assert [e.agent for e in session.exchanges] == ["mapper", "pilot", "scout"]
