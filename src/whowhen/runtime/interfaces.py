"""What an environment and an agent system must provide to be run, recorded and warm-started."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from whowhen.runtime.types import Action, Step


@dataclass(frozen=True)
class Verdict:
    """The official evaluator's answer for a finished episode."""

    success: bool
    score: float
    final_answer: str | None


class Environment(Protocol):
    """Deterministic given (task, seed, sequence of actions): warm start relies on this."""

    benchmark: str
    task_id: str
    modality: str
    category: str

    def reset(self) -> str:
        """Start the episode; return the task text shown to the agents (step 0)."""

    def step(self, action: Action) -> tuple[str, str] | tuple[str, str, tuple[str, ...]] | None:
        """Apply an agent output; return (tool name, observation text[, media refs]) or None
        for messages. An environment with a task image sets `task_media` in `reset()`."""

    @property
    def done(self) -> bool: ...

    def evaluate(self) -> Verdict: ...


class AgentSystem(Protocol):
    """Decides the next agent output from the visible history only."""

    name: str
    topology: str
    agents: tuple[str, ...]
    policy: str

    def next_action(self, history: Sequence[Step]) -> Action: ...
