"""The two records the runtime passes around: what an agent does and what a history holds."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from whowhen.schema import NON_AGENT_ACTORS, canonical_json


@dataclass(frozen=True)
class StepCost:
    """Tokens, USD and seconds one agent step took (zero for scripted policies)."""

    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0


@dataclass(frozen=True)
class Action:
    """One agent output. `tool=None` is a plain message to the other agents."""

    actor: str
    content: str
    tool: str | None = None
    tool_args: dict[str, Any] | None = None
    # what producing this action cost (model-played agents); not part of its identity
    cost: StepCost | None = field(default=None, compare=False)

    def to_json(self) -> str:
        """Canonical JSON: the form stored in injection and label tables."""
        return (
            canonical_json(
                {
                    "actor": self.actor,
                    "content": self.content,
                    "tool": self.tool,
                    "tool_args": self.tool_args,
                }
            )
            or ""
        )

    @classmethod
    def from_json(cls, text: str) -> Action:
        d = json.loads(text)
        return cls(d["actor"], d["content"], d.get("tool"), d.get("tool_args"))


@dataclass(frozen=True)
class Step:
    """One entry of the history. Every message counts, as in Who&When: step 0 is the task."""

    step: int
    actor: str
    kind: str  # action | observation | message
    content: str
    tool: str | None = None
    tool_args: dict[str, Any] | None = None
    media: tuple[str, ...] = field(default_factory=tuple)
    cost: StepCost | None = field(default=None, compare=False)

    @property
    def is_agent_step(self) -> bool:
        return self.kind in ("action", "message") and self.actor not in NON_AGENT_ACTORS

    def as_action(self) -> Action:
        return Action(self.actor, self.content, self.tool, self.tool_args, self.cost)
