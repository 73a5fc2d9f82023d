"""Models play a built-in system's agents: one model per role, or a scripted role mixed in.

The team keeps the built-in system's turn-taking (`speaker`: a tool call keeps the turn,
`To <agent>:` hands it over, a solver's message goes to its verifier), which matches
every scripted trajectory of the built-in systems step for step. Each role gets the
benchmark's role prompt, the system's tools and the run so far as that agent sees it
(`protocol.to_messages`), trimmed to the model's context. A role mapped to `scripted`
is played by the system's reference policy.

A run that goes nowhere ends early with a named reason (`runtime.EndRun`): the same
turn repeated, or a lone agent making no tool call for several turns in a row.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from whowhen.agents import protocol
from whowhen.agents.scripted import addressee
from whowhen.defaults import section_defaults
from whowhen.errors import InfraError
from whowhen.models import ChatRequest, Message, Settings
from whowhen.runtime import Action, Step
from whowhen.runtime.episode import EndRun
from whowhen.runtime.feedback import split_feedback
from whowhen.runtime.types import StepCost

SCRIPTED = "scripted"
"""A role mapped to this plays the system's reference policy."""


def speaker(system: str, agents: Sequence[str], history: Sequence[Step]) -> str:
    """Who acts next in a built-in system: after a tool call the same agent; after
    `To <agent>:` that agent; a solver's message goes to the verifier and back; else
    the system's first agent."""
    steps = [s for s in split_feedback(history)[0] if s.is_agent_step]
    if not steps:
        return agents[0]
    last = steps[-1]
    if last.kind == "action":
        return last.actor
    to = addressee(last)
    if to in agents:
        return to
    if system == "solver_verifier" and len(agents) == 2:
        return agents[1] if last.actor == agents[0] else agents[0]
    return agents[0]


def _agents_default(key: str) -> Any:
    return section_defaults("agents")[key]


@dataclasses.dataclass
class TeamLimits:
    """When a model-played run stops early, and how much of the run a model is shown."""

    # each default is the config schema's (`agents:` section), its one source
    context_chars: int = dataclasses.field(default_factory=lambda: _agents_default("context_chars"))
    stall_turns: int = dataclasses.field(default_factory=lambda: _agents_default("stall_turns"))
    repeat_turns: int = dataclasses.field(default_factory=lambda: _agents_default("repeat_turns"))
    max_tokens: int = dataclasses.field(default_factory=lambda: _agents_default("max_tokens"))
    json_turns: bool = False  # each turn one JSON object, constrained by a schema


class ModelTeam:
    """A built-in system played by models (`clients`: agent -> model client, or
    `SCRIPTED` for the reference policy `reference`)."""

    def __init__(
        self,
        name: str,
        system: str,
        agents: Sequence[str],
        clients: Mapping[str, Any],
        tools: Sequence[dict[str, Any]],
        prompts: Mapping[str, str | None],
        seed: int = 0,
        reference: Any = None,
        limits: TeamLimits | None = None,
        temperature: float = 0.0,
        example: Sequence[Step] = (),
    ) -> None:
        self.name, self.system, self.agents = name, system, tuple(agents)
        self.topology = "single" if len(self.agents) == 1 else "multi"
        self.clients, self.tools, self.prompts = dict(clients), tuple(tools), dict(prompts)
        self.reference, self.limits = reference, limits or TeamLimits()
        self.example = tuple(example)
        models = sorted({c if c == SCRIPTED else c.spec.model_id for c in self.clients.values()})
        self.policy = "+".join(models)
        self.settings = Settings(temperature=temperature, max_tokens=self.limits.max_tokens,
                                 seed=seed)  # fmt: skip
        self.parse_failures = 0
        self.trimmed = 0

    @property
    def stats(self) -> dict[str, int]:
        """What the run's `meta` records: unreadable turns and trimmed observations."""
        return {"parse_failures": self.parse_failures, "trimmed": self.trimmed}

    def next_action(self, history: Sequence[Step]) -> Action:
        agent = speaker(self.system, self.agents, history)
        self._check_progress(history, agent)
        client = self.clients[agent]
        if client == SCRIPTED:
            action = self.reference.next_action(history)
            return dataclasses.replace(action, actor=agent)
        return self._model_turn(client, agent, history)

    def _model_turn(self, client: Any, agent: str, history: Sequence[Step]) -> Action:
        team = len(self.agents) > 1
        shown, trimmed = protocol.fit(history, self.limits.context_chars)
        self.trimmed += trimmed
        json_turns = self.limits.json_turns
        rules = protocol.system_prompt(
            self.tools, self.prompts.get(agent), agent, self.agents, json_turns, self.example
        )
        request = ChatRequest(
            (Message.text("system", rules), *protocol.to_messages(shown, agent, team, json_turns)),
            schema=protocol.turn_schema(self.tools, self.agents) if json_turns else None,
            settings=self.settings,
            tools=self.tools if client.spec.native_tools and not json_turns else (),
        )
        result = client.complete([request])[0]
        if not result.ok:
            raise InfraError(f"model call failed after retries: {result.error}")
        cost = StepCost(result.usage.input_tokens, result.usage.output_tokens,
                        result.cost_usd, round(result.latency_s, 6))  # fmt: skip
        read = protocol.parse_json_turn if json_turns else protocol.parse_turn
        turn = self._native(agent, result) or read(agent, result.text or "", self.tools, team)
        if turn.problem is not None:
            self.parse_failures += 1
        return dataclasses.replace(turn.action, cost=cost)

    def _native(self, agent: str, result: Any) -> protocol.Turn | None:
        """A native tool call, where the server returned one for a known tool."""
        if not result.tool_calls:
            return None
        name, raw = result.tool_calls[0]
        try:
            args = json.loads(raw)
        except json.JSONDecodeError:
            return None
        if name not in {t["name"] for t in self.tools} or not isinstance(args, dict):
            return None
        return protocol.Turn(Action(agent, (result.text or "").strip(), name, args))

    def _check_progress(self, history: Sequence[Step], agent: str) -> None:
        """End the run when the agent about to act has been going nowhere."""
        if self.clients[agent] == SCRIPTED:
            return
        mine = [s for s in history if s.actor == agent and s.is_agent_step]
        n = self.limits.repeat_turns
        if len(mine) >= n and len({(s.content, s.tool, repr(s.tool_args)) for s in mine[-n:]}) == 1:
            raise EndRun(f"stalled: {agent} repeated the same turn {n} times")
        n = self.limits.stall_turns
        if len(self.agents) == 1 and len(mine) >= n and all(s.tool is None for s in mine[-n:]):
            raise EndRun(f"stalled: {agent} made no tool call in {n} turns")
