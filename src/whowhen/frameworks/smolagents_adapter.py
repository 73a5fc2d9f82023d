"""smolagents (`pip install -e '.[smolagents]'`): a `ToolCallingAgent` playing `react`'s one
agent with the benchmark's tools as native smolagents tools.

The agent's model is smolagents' own `OpenAIModel` pointed at the gateway, so every
call it makes (its system prompt, its "Calling tools:" history format, its stop
sequences) is recorded as smolagents sent it. `final_answer` is the benchmark's tool
(it replaces smolagents' built-in one), so the answer reaches the environment.
"""

from __future__ import annotations

from typing import Any

from whowhen.frameworks.base import FrameworkTask
from whowhen.frameworks.record import tool_call_actions
from whowhen.gateway.server import MODEL
from whowhen.runtime import Action
from whowhen.schema import canonical_json

_TYPES = {"string", "boolean", "integer", "number", "object", "array", "null"}


def _native_tool(spec: dict[str, Any], task: FrameworkTask) -> Any:
    """The benchmark tool `spec` as a smolagents `Tool` that runs it in the environment."""
    from smolagents import Tool  # deferred: an optional extra

    params = spec.get("parameters") or {}
    inputs = {
        name: {
            "type": prop.get("type") if prop.get("type") in _TYPES else "any",
            "description": prop.get("description") or name,
        }
        for name, prop in (params.get("properties") or {}).items()
    }
    name = spec["name"]

    def forward(self: Any, **kwargs: Any) -> str:
        return task.call_tool(name, kwargs)

    cls = type(
        f"{name.title().replace('_', '')}Tool",
        (Tool,),
        {
            "name": name,
            "description": spec.get("description") or name,
            "inputs": inputs,
            "output_type": "string",
            "skip_forward_signature_validation": True,
            "forward": forward,
        },
    )
    return cls()


class SmolagentsToolCalling:
    """`smolagents_react`: smolagents' ToolCallingAgent as react's `assistant`."""

    system = "smolagents_react"
    plays = "react"
    agents = ("assistant",)
    volatile: tuple[str, ...] = ()

    def run(self, task: FrameworkTask) -> None:
        from smolagents import LogLevel, OpenAIModel, ToolCallingAgent  # deferred: optional

        (agent,) = self.agents
        model = OpenAIModel(
            MODEL,
            api_base=task.base_url(agent),
            api_key="whowhen-gateway",  # the gateway holds the real key
            client_kwargs={"max_retries": 0},
        )
        runner = ToolCallingAgent(
            tools=[_native_tool(spec, task) for spec in task.tools],
            model=model,
            max_steps=task.max_turns,
            verbosity_level=LogLevel.OFF,
            instructions=task.prompts[agent],
        )
        runner.run(task.text)

    def read(self, agent: str, message: dict[str, Any]) -> list[Action]:
        return tool_call_actions(agent, message)

    def write(self, action: Action, message: dict[str, Any]) -> dict[str, Any]:
        return native_message(action, message)


def native_message(action: Action, message: dict[str, Any]) -> dict[str, Any]:
    """An assistant message with native tool calls holding `action` (the recorded call's id
    kept, so the framework's later requests refer to it as before)."""
    out: dict[str, Any] = {"role": "assistant", "content": action.content or None}
    if action.tool is None:
        out["content"] = action.content
        return out
    calls = message.get("tool_calls") or [{}]
    out["tool_calls"] = [
        {
            "id": calls[0].get("id", "call_injected"),
            "type": "function",
            "function": {
                "name": action.tool,
                "arguments": canonical_json(action.tool_args or {}) or "{}",
            },
        }
    ]
    return out
