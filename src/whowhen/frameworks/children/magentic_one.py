"""autogen-agentchat's `MagenticOneGroupChat`, run in its own environment for the parent's
`magentic_one` adapter: the team behind Who&When's Hand-Crafted runs.

The Orchestrator is Magentic-One's own (its facts, plan and progress-ledger prompts, its
speaker selection); the workers are `AssistantAgent`s with the benchmark's tools as
native tools (each call runs in the parent's environment and comes back as the page or
document the environment shows), a coder without tools, and the `ComputerTerminal`, a
`CodeExecutorAgent` whose executor hands the coder's script to the parent (the project's
sandbox runs it). Every agent asks its model at its own gateway URL. The team stops once
the environment is done (a checkout, an answer): the parent says so with each tool
result.

The team does not re-plan: `max_stalls` is the turn limit, as the scripted ledger it
plays has no outer loop to match.

Standard library, `protocol` and the framework only (this runs without whowhen).
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from protocol import Parent

MODEL_INFO = {"vision": False, "function_calling": True, "json_output": False,
              "structured_output": False, "family": "unknown"}  # fmt: skip
"""What the gateway's model is declared to offer: no JSON mode, so the Orchestrator asks
for its ledger in plain text as it does with most models."""
SUMMARY = "{tool_name}({arguments})\n{result}"
"""How a worker's tool call reads in the team's thread: the call, then what it showed."""
_EXIT = re.compile(r"exited with Unix exit code: (\d+)")


def main() -> None:
    parent = Parent()
    try:
        asyncio.run(run(parent.task(), parent))
    except BaseException as exc:  # the framework's error is the run's; the parent records it
        parent.fail(exc)
        return
    parent.end()


async def run(task: dict[str, Any], parent: Parent) -> None:
    from autogen_agentchat.agents import AssistantAgent, CodeExecutorAgent
    from autogen_agentchat.conditions import ExternalTermination
    from autogen_agentchat.teams import MagenticOneGroupChat
    from autogen_core.code_executor import CodeBlock, CodeExecutor, CodeResult
    from autogen_core.tools import BaseTool
    from autogen_ext.models.openai import OpenAIChatCompletionClient
    from pydantic import BaseModel, ConfigDict

    stop = ExternalTermination()

    def model(agent: str) -> Any:
        return OpenAIChatCompletionClient(
            model=task["model"], base_url=task["base_urls"][agent], api_key="whowhen-gateway",
            model_info=MODEL_INFO, max_retries=0,
        )  # fmt: skip

    def ran(text: str) -> str:
        if parent.done:
            stop.set()
        return text

    class Args(BaseModel):
        model_config = ConfigDict(extra="allow")

    class ParentTool(BaseTool[Args, str]):
        """A benchmark tool: its schema as the benchmark states it, run by the parent."""

        def __init__(self, spec: dict[str, Any]) -> None:
            super().__init__(Args, str, spec["name"], spec.get("description", ""))
            self.spec = spec

        @property
        def schema(self) -> Any:
            return {"name": self.spec["name"], "description": self.spec.get("description", ""),
                    "parameters": self.spec.get("parameters") or {"type": "object",
                                                                 "properties": {}}}  # fmt: skip

        async def run(self, args: Args, cancellation_token: Any) -> str:
            return ran(parent.call_tool(self.name, args.model_dump()))

    class ParentExecutor(CodeExecutor):
        """The terminal: the script goes to the parent's sandbox."""

        async def execute_code_blocks(
            self, code_blocks: list[CodeBlock], cancellation_token: Any
        ) -> CodeResult:
            code = "\n\n".join(block.code for block in code_blocks)
            out = ran(parent.call_tool(task["terminal"], {"code": code}))
            found = _EXIT.search(out)
            return CodeResult(int(found.group(1)) if found else 0, out)

        async def start(self) -> None: ...

        async def stop(self) -> None: ...

        async def restart(self) -> None: ...

    tools = {spec["name"]: spec for spec in task["tools"]}
    team = []
    for name in task["workers"]:
        team.append(AssistantAgent(
            name, model_client=model(name), system_message=task["prompts"][name],
            description=task["descriptions"][name],
            tools=[ParentTool(tools[t]) for t in task["worker_tools"].get(name, [])],
            reflect_on_tool_use=False, tool_call_summary_format=SUMMARY,
        ))  # fmt: skip
    team.append(CodeExecutorAgent(
        task["terminal"], code_executor=ParentExecutor(),
        description=task["descriptions"][task["terminal"]],
    ))  # fmt: skip
    chat = MagenticOneGroupChat(
        team, model_client=model(task["orchestrator"]), max_turns=task["max_turns"],
        max_stalls=task["max_turns"], termination_condition=stop,
    )  # fmt: skip
    await chat.run(task=task["text"])


if __name__ == "__main__":
    main()
