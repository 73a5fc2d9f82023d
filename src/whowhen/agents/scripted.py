"""What every scripted reference policy shares: the seeded slip model, the single-agent
ReAct shell, the solver + verifier turn-taking, the orchestrator's routing and the expert
group chat's (the ledger orchestrator's is `agents.ledger`).

A benchmark's policies only say what the solver does next, how the verifier checks the
attempt, and what the lone ReAct agent does; who speaks when, and when a slip happens,
is decided here once.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from whowhen.runtime import Action, Step
from whowhen.runtime.feedback import split_feedback

Slip = Callable[[Action, random.Random, Sequence[Step]], tuple[str, Action] | None]
"""Turns a correct action into an erroneous one, with the taxonomy mode of the error (or
None if no mode applies), for natural failures."""

PROPOSED = re.compile(r"Proposed answer: (\S+?)\.?$")


@dataclass(frozen=True)
class SlipRecord:
    """One natural slip, logged out of band (never in the trajectory): which step, which
    taxonomy mode, what the reference policy would have done."""

    step: int
    mode: str
    original: Action
    slipped: Action


@dataclass
class Slipper:
    """Seeded slip model: with probability `rate` an action is replaced by an erroneous one.

    The draw depends only on (seed, task text, step index): reproducible per rollout, and
    independent across tasks. Every slip is appended to `log`.

    A retry (whowhen.feedback) is a new sample that partly repeats the last one: with
    `earlier` set (the seeds of the task's previous attempts, oldest first), each step's
    draw is, with probability `persistence`, the previous attempt's draw at that step (so
    an error tends to recur, as a model's does on the same task), and otherwise a fresh one
    from `seed`. A step the visible feedback flags for this agent is re-checked: the slip
    drawn there does not happen (logged in `rechecks`)."""

    rate: float = 0.0
    seed: int = 0
    slip: Slip | None = None
    log: list[SlipRecord] = field(default_factory=list)
    earlier: tuple[int, ...] = ()
    persistence: float = 0.0
    rechecks: list[int] = field(default_factory=list)

    def stream(self, step: int, task: str) -> random.Random:
        """The random stream that decides a slip at `step`: this attempt's or, by the
        persistence draw, the one the previous attempt used there (recursively)."""
        seeds = (*self.earlier, self.seed)
        for i in range(len(seeds) - 1, 0, -1):
            if random.Random(f"recur:{seeds[i]}:{step}:{task}").random() >= self.persistence:
                return random.Random(f"{seeds[i]}:{step}:{task}")
        return random.Random(f"{seeds[0]}:{step}:{task}")

    def __call__(
        self,
        action: Action,
        history: Sequence[Step],
        flagged: frozenset[tuple[str, int]] = frozenset(),
    ) -> Action:
        if self.slip is None or self.rate <= 0:
            return action
        rng = self.stream(len(history), history[0].content)
        if rng.random() >= self.rate:
            return action
        if (action.actor, len(history)) in flagged:  # told this step was wrong: re-checked
            self.rechecks.append(len(history))
            return action
        slipped = self.slip(action, rng, history)
        if slipped is None:
            return action
        self.log.append(SlipRecord(len(history), slipped[0], action, slipped[1]))
        return slipped[1]


class ScriptedSystem:
    """What every scripted system shares: its slip model, the slip log, and how feedback
    reaches it. Subclasses implement `decide(history)`, the reference policy's next action;
    it sees the history without feedback messages, and the only use of feedback is the
    re-check of a flagged step (`Slipper`), read from the visible messages."""

    name: str
    topology: str
    agents: tuple[str, ...]
    policy = "scripted"

    def __init__(
        self,
        slip_rate: float = 0.0,
        seed: int = 0,
        slip: Slip | None = None,
        earlier_seeds: tuple[int, ...] = (),
        persistence: float = 0.0,
    ) -> None:
        self._slipper = Slipper(
            slip_rate, seed, slip, earlier=earlier_seeds, persistence=persistence
        )

    @property
    def slips(self) -> list[SlipRecord]:
        return self._slipper.log

    @property
    def rechecks(self) -> list[int]:
        """Steps where a re-check prompted by feedback prevented a slip."""
        return self._slipper.rechecks

    def decide(self, history: Sequence[Step]) -> Action:
        raise NotImplementedError

    def next_action(self, history: Sequence[Step]) -> Action:
        visible, flagged = split_feedback(history)
        return self._slipper(self.decide(visible), visible, flagged)


def proposed_answer(history: Sequence[Step]) -> str:
    """The answer the solver's last message proposed ('' if none)."""
    match = PROPOSED.search(history[-1].content)
    return match.group(1) if match else ""


class ScriptedReact(ScriptedSystem):
    """Single-agent ReAct: subclasses implement `act(history)`."""

    name, topology = "react", "single"
    agents = ("assistant",)

    def act(self, history: Sequence[Step]) -> Action:
        raise NotImplementedError

    def decide(self, history: Sequence[Step]) -> Action:
        return self.act(history)


class ScriptedSolverVerifier(ScriptedSystem):
    """The solver works and proposes (a message); the verifier then either answers or sends
    the solver back, and the solver starts over from the verifier's message.

    Subclasses implement `solver_turn(history, since)` (the solver's next action, `since`
    being the index of the verifier's last message, 0 before it spoke) and
    `verify(history, since)`."""

    name, topology = "solver_verifier", "multi"
    agents = ("solver", "verifier")

    def solver_turn(self, history: Sequence[Step], since: int) -> Action:
        raise NotImplementedError

    def verify(self, history: Sequence[Step], since: int) -> Action:
        raise NotImplementedError

    def decide(self, history: Sequence[Step]) -> Action:
        agent_steps = [s for s in history if s.is_agent_step]
        since = max((s.step for s in agent_steps if s.actor == "verifier"), default=0)
        last = agent_steps[-1] if agent_steps else None
        if last is not None and last.actor == "solver" and last.tool is None:
            return self.verify(history, since)
        return self.solver_turn(history, since)


ADDRESSED = re.compile(r"^To (\w+):")


def addressee(step: Step) -> str | None:
    """Whom a message is for: messages between agents start with `To <agent>:`."""
    match = ADDRESSED.match(step.content) if step.kind == "message" else None
    return match.group(1) if match else None


def tell(sender: str, to: str, text: str) -> Action:
    """A message from one agent to another, in the form `addressee` reads."""
    return Action(sender, f"To {to}: {text}")


class ScriptedOrchestrator(ScriptedSystem):
    """Orchestrator + specialist workers + verifier.

    The orchestrator plans and hands one sub-task at a time to a worker (`To <worker>: ...`);
    the worker acts with tools until it reports back (`To orchestrator: ...`); when the
    orchestrator has what it needs it hands the result to the verifier, who either calls
    `final_answer` (or the benchmark's finishing tool) or sends it back
    (`To orchestrator: ...`). Who speaks is decided here from the last agent step; what they
    say is the subclass's: `orchestrate(history)`, `work(worker, history)`,
    `verify(history)`. Subclasses set `agents = ("orchestrator", <workers...>, "verifier")`.
    """

    name, topology = "orchestrator", "multi"
    agents: tuple[str, ...] = ("orchestrator", "worker", "verifier")

    def orchestrate(self, history: Sequence[Step]) -> Action:
        raise NotImplementedError

    def work(self, worker: str, history: Sequence[Step]) -> Action:
        raise NotImplementedError

    def verify(self, history: Sequence[Step]) -> Action:
        raise NotImplementedError

    def speaker(self, history: Sequence[Step]) -> str:
        agent_steps = [s for s in history if s.is_agent_step]
        if not agent_steps:
            return "orchestrator"
        last = agent_steps[-1]
        if last.kind == "action":  # a tool call: the same agent goes on after the result
            return last.actor
        to = addressee(last)
        return to if to in self.agents else "orchestrator"

    def decide(self, history: Sequence[Step]) -> Action:
        who = self.speaker(history)
        if who == "orchestrator":
            return self.orchestrate(history)
        if who == "verifier":
            return self.verify(history)
        return self.work(who, history)


class ScriptedExpertChat(ScriptedSystem):
    """An AG2-style expert group chat: domain experts take turns, code they write runs on
    the `Computer_terminal` (its output is an observation), and a verification expert
    closes with the answer. The chat manager is the speaker rule: `speaker(history)`
    picks who talks next, `speak(who, history)` is what they say; both are the
    subclass's. `end` is the closing word of the last message (AG2's TERMINATE)."""

    name, topology = "expert_chat", "multi"
    agents: tuple[str, ...] = ("Domain_Expert", "Verification_Expert")
    end = ""

    def speaker(self, history: Sequence[Step]) -> str:
        raise NotImplementedError

    def speak(self, who: str, history: Sequence[Step]) -> Action:
        raise NotImplementedError

    def decide(self, history: Sequence[Step]) -> Action:
        return self.speak(self.speaker(history), history)
