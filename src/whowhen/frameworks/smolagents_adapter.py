"""smolagents (`pip install -e '.[smolagents]'`): a `ToolCallingAgent` playing `react`'s one
agent with the benchmark's tools as native smolagents tools.

The agent's model is smolagents' own `OpenAIModel` pointed at the gateway, so every
call it makes (its system prompt, its "Calling tools:" history format, its stop
sequences) is recorded as smolagents sent it. `final_answer` is the benchmark's tool
(it replaces smolagents' built-in one), so the answer reaches the environment.
"""

from __future__ import annotations

from typing import Any

from whowhen.frameworks.base import FrameworkTask, NativeToolCalls
from whowhen.gateway.server import MODEL

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


def gateway_model(task: FrameworkTask, agent: str) -> Any:
    """smolagents' own `OpenAIModel` pointed at `agent`'s gateway URL, so every call is
    recorded as smolagents sent it (its prompts, history format and stop sequences)."""
    from smolagents import OpenAIModel  # deferred: an optional extra

    return OpenAIModel(
        MODEL,
        api_base=task.base_url(agent),
        api_key="whowhen-gateway",  # the gateway holds the real key
        client_kwargs={"max_retries": 0},
    )


class SmolagentsToolCalling(NativeToolCalls):
    """`smolagents_react`: smolagents' ToolCallingAgent as react's `assistant`."""

    system = "smolagents_react"
    plays = "react"
    agents = ("assistant",)
    volatile: tuple[str, ...] = ()

    def run(self, task: FrameworkTask) -> None:
        from smolagents import LogLevel, ToolCallingAgent  # deferred: an optional extra

        (agent,) = self.agents
        runner = ToolCallingAgent(
            tools=[_native_tool(spec, task) for spec in task.tools],
            model=gateway_model(task, agent),
            max_steps=task.max_turns,
            verbosity_level=LogLevel.OFF,
            instructions=task.prompts[agent],
        )
        runner.run(task.text)
