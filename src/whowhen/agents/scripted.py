"""What every scripted reference policy shares: the seeded slip model, the single-agent
ReAct shell, and the solver + verifier turn-taking.

A benchmark's policies only say what the solver does next, how the verifier checks the
attempt, and what the lone ReAct agent does; who speaks when, and when a slip happens,
is decided here once.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from whowhen.runtime import Action, Step

Slip = Callable[[Action, random.Random], Action | None]
"""Turns a correct action into an erroneous one (or None if it cannot), for natural failures."""

PROPOSED = re.compile(r"Proposed answer: (\S+?)\.?$")


@dataclass
class Slipper:
    """Seeded slip model: with probability `rate` an action is replaced by an erroneous one.

    The draw depends only on (seed, task text, step index): reproducible per rollout, and
    independent across tasks."""

    rate: float = 0.0
    seed: int = 0
    slip: Slip | None = None

    def __call__(self, action: Action, history: Sequence[Step]) -> Action:
        if self.slip is None or self.rate <= 0:
            return action
        rng = random.Random(f"{self.seed}:{len(history)}:{history[0].content}")
        if rng.random() >= self.rate:
            return action
        return self.slip(action, rng) or action


def proposed_answer(history: Sequence[Step]) -> str:
    """The answer the solver's last message proposed ('' if none)."""
    match = PROPOSED.search(history[-1].content)
    return match.group(1) if match else ""


class ScriptedReact:
    """Single-agent ReAct: subclasses implement `act(history)`."""

    name, topology, policy = "react", "single", "scripted"
    agents = ("assistant",)

    def __init__(self, slip_rate: float = 0.0, seed: int = 0, slip: Slip | None = None) -> None:
        self._slipper = Slipper(slip_rate, seed, slip)

    def act(self, history: Sequence[Step]) -> Action:
        raise NotImplementedError

    def next_action(self, history: Sequence[Step]) -> Action:
        return self._slipper(self.act(history), history)


class ScriptedSolverVerifier:
    """The solver works and proposes (a message); the verifier then either answers or sends
    the solver back, and the solver starts over from the verifier's message.

    Subclasses implement `solver_turn(history, since)` (the solver's next action, `since`
    being the index of the verifier's last message, 0 before it spoke) and
    `verify(history, since)`."""

    name, topology, policy = "solver_verifier", "multi", "scripted"
    agents = ("solver", "verifier")

    def __init__(self, slip_rate: float = 0.0, seed: int = 0, slip: Slip | None = None) -> None:
        self._slipper = Slipper(slip_rate, seed, slip)

    def solver_turn(self, history: Sequence[Step], since: int) -> Action:
        raise NotImplementedError

    def verify(self, history: Sequence[Step], since: int) -> Action:
        raise NotImplementedError

    def next_action(self, history: Sequence[Step]) -> Action:
        agent_steps = [s for s in history if s.is_agent_step]
        since = max((s.step for s in agent_steps if s.actor == "verifier"), default=0)
        last = agent_steps[-1] if agent_steps else None
        if last is not None and last.actor == "solver" and last.tool is None:
            action = self.verify(history, since)
        else:
            action = self.solver_turn(history, since)
        return self._slipper(action, history)
