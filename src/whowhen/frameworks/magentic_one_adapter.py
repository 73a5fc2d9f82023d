"""`magentic_one`: autogen-agentchat's `MagenticOneGroupChat` playing the ledger
orchestrator, the system behind Who&When's Hand-Crafted runs.

autogen-agentchat pins a protobuf below the core stack's, so the team runs in its own
environment as a child process (`children/magentic_one.py`, `frameworks.envs`,
`frameworks.child`); its models answer through the gateway like every framework's.

Its answers read as the scripted ledger's steps, so the ledger's operators and the
stand-in apply:
- a progress ledger (Magentic-One's JSON) is the Orchestrator's ledger step
  (`Updated Ledger:` and the JSON), followed, unless the request is satisfied, by the
  instruction Magentic-One broadcasts from it (`To <next speaker>: <instruction>`);
- the facts, the plan and the final answer are the Orchestrator's messages;
- a worker's answer is its native tool calls or its message (a report, a script).
An injected ledger or instruction is written back into the progress ledger's JSON (the
instruction Magentic-One broadcasts is the ledger's), so the framework passes it on.
"""

from __future__ import annotations

import json
from typing import Any

from whowhen.agents.ledger import LEDGER_HEAD, ORCHESTRATOR, TEAM, TERMINAL
from whowhen.agents.scripted import ADDRESSED, tell
from whowhen.frameworks import envs
from whowhen.frameworks.base import FrameworkTask
from whowhen.frameworks.child import run_child
from whowhen.frameworks.record import native_message, tool_call_actions
from whowhen.gateway.server import MODEL
from whowhen.registry import get_benchmark
from whowhen.runtime import Action

ENV = "magentic_one"
RUN_TIMEOUT_S = 900.0
"""A run's wall-clock limit (a hung framework is stopped and the run ends as an outage)."""
DESCRIPTIONS = dict(TEAM)


class MagenticOneTeam:
    """The ledger team of a benchmark in `MagenticOneGroupChat`."""

    system = "magentic_one"
    plays = "ledger"
    volatile: tuple[str, ...] = ()

    def __init__(self, benchmark: str = "web_shop") -> None:
        rule = get_benchmark(benchmark).policies[self.plays]
        self.agents = tuple(rule.agents)
        self.workers = tuple(a for a in self.agents if a != ORCHESTRATOR)

    def run(self, task: FrameworkTask) -> None:
        names = [spec["name"] for spec in task.tools if spec["name"] != TERMINAL]
        payload = {
            "text": task.text,
            "model": MODEL,
            "orchestrator": ORCHESTRATOR,
            "workers": list(self.workers),
            "terminal": TERMINAL,
            "tools": list(task.tools),
            "worker_tools": {self.workers[0]: names},  # the surfer browses; the coder writes
            "prompts": {w: task.prompts[w] for w in self.workers},
            "descriptions": {
                **{w: task.prompts[w] for w in self.workers},
                TERMINAL: DESCRIPTIONS[TERMINAL],
            },
            "base_urls": {a: task.base_url(a) for a in self.agents},
            "max_turns": task.max_turns,
        }
        run_child(envs.python(ENV), "magentic_one.py", payload, task.call_tool, task.done,
                  RUN_TIMEOUT_S)  # fmt: skip

    def read(self, agent: str, message: dict[str, Any]) -> list[Action]:
        if agent != ORCHESTRATOR:
            return tool_call_actions(agent, message)
        content = str(message.get("content") or "")
        body = progress_ledger(content)
        if body is None:
            return [Action(ORCHESTRATOR, content)]
        ledger = Action(ORCHESTRATOR, LEDGER_HEAD + json.dumps(body, indent=2))
        if _answer(body, "is_request_satisfied") is True:
            return [ledger]
        said = str(_answer(body, "instruction_or_question") or "")
        return [ledger, tell(ORCHESTRATOR, str(_answer(body, "next_speaker")), said)]

    def write(self, actions: list[Action], message: dict[str, Any]) -> dict[str, Any]:
        injected = actions[-1]
        if injected.actor != ORCHESTRATOR:
            return native_message(actions, message)
        if injected.content.startswith(LEDGER_HEAD):
            return {"role": "assistant", "content": injected.content.removeprefix(LEDGER_HEAD)}
        body = progress_ledger(str(message.get("content") or ""))
        to = ADDRESSED.match(injected.content)
        if body is None or to is None:  # a message of its own (the facts, the plan)
            return {"role": "assistant", "content": injected.content}
        said = injected.content[to.end() :].strip()
        body = {**body, "next_speaker": {**body["next_speaker"], "answer": to.group(1)},
                "instruction_or_question": {**body["instruction_or_question"],
                                            "answer": said}}  # fmt: skip
        return {"role": "assistant", "content": json.dumps(body, indent=2)}


def progress_ledger(text: str) -> dict[str, Any] | None:
    """Magentic-One's progress ledger in an Orchestrator's answer (the JSON object with
    the five questions), else None."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        return None
    try:
        body = json.loads(text[start : end + 1])
    except ValueError:
        return None
    keys = ("is_request_satisfied", "next_speaker", "instruction_or_question")
    if not isinstance(body, dict) or not all(isinstance(body.get(k), dict) for k in keys):
        return None
    return body


def _answer(body: dict[str, Any], key: str) -> Any:
    return (body.get(key) or {}).get("answer")
