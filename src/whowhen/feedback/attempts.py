"""One attempt at a task: how a retry is played, recorded and replayed.

An attempt is fully determined by (task, system, seed chain, feedback messages): the seed
chain is the seeds of the task's attempts so far, oldest (the rollout's) first, so a
retry's slips can recur (`Slipper`), and the messages are every feedback the task got.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

from whowhen.assembly import make_system
from whowhen.operators import slip_model
from whowhen.runtime import Action, Episode, Step, continue_episode
from whowhen.runtime.feedback import is_feedback, strip_feedback
from whowhen.runtime.records import run_row, step_rows
from whowhen.schema import FEEDBACK_ACTOR, RUNS, STEPS, stable_id, to_arrow


@dataclass(frozen=True)
class Setting:
    """What every attempt of one (benchmark, system) shares."""

    benchmark: str
    system: str
    bench: Any  # the Benchmark object (makes environments)
    bench_cfg: dict[str, Any]
    slip_rate: float
    persistence: float
    max_steps: int
    client: Any = None  # the model playing an LLM system
    slips: str = "operators"  # the slip model (operators.SLIP_MODELS)

    def agent(self, seeds: tuple[int, ...]) -> Any:
        """The system as it plays an attempt with this seed chain (slips and all)."""
        return make_system(
            self.system,
            self.benchmark,
            slip_rate=self.slip_rate,
            seed=seeds[-1],
            slip=slip_model(self.slips),
            client=self.client,
            bench_cfg=self.bench_cfg,
            earlier_seeds=seeds[:-1],
            persistence=self.persistence,
        )


@dataclass
class Attempt:
    task: Any
    run_id: str
    seeds: tuple[int, ...]
    messages: tuple[str, ...]
    history: list[Step]
    row: dict[str, Any]  # its RUNS row
    slips: int = 0
    rechecks: int = 0
    stripped: list[Step] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.stripped = strip_feedback(self.history)

    def stripped_step(self, step: int) -> int:
        """A step of the full history (with feedback messages) as the attributors number it."""
        return step - sum(1 for s in self.history[:step] if is_feedback(s))


def play(
    setting: Setting,
    task: Any,
    seeds: tuple[int, ...],
    messages: tuple[str, ...],
    *,
    source: str,
    round_: int,
    parent: Attempt,
) -> Attempt:
    """Run the task afresh: the task, the feedback messages, then the system acts."""
    agent = setting.agent(seeds)
    env = setting.bench.make_env(task)
    episode = Episode()
    episode.start(env)
    for text in messages:
        episode.apply(env, Action(FEEDBACK_ACTOR, text))
    continue_episode(env, agent, episode, setting.max_steps + len(messages))
    run_id = stable_id(
        "feedback", setting.benchmark, task.task_id, setting.system, agent.policy,
        source, round_, seeds, setting.persistence, parent.run_id,
    )  # fmt: skip
    row = run_row(
        episode,
        env,
        agent,
        run_id=run_id,
        seed=seeds[-1],
        origin="feedback",
        parent_run_id=parent.run_id,
        gold_answer=str(task.answer),
        question=task.question,
    )
    return Attempt(
        task,
        run_id,
        seeds,
        messages,
        episode.history,
        row,
        slips=len(getattr(agent, "slips", ())),
        rechecks=len(getattr(agent, "rechecks", ())),
    )


def attempt_frames(attempts: list[Attempt], *, stripped: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(runs, steps) of the attempts: stripped of feedback messages (what attributors see)
    or whole (what the agents saw, as stored)."""
    steps = [
        row
        for a in attempts
        for row in step_rows(Episode(a.stripped if stripped else a.history), a.run_id)
    ]
    runs = [a.row | {"n_steps": len(a.stripped)} if stripped else a.row for a in attempts]
    return pl.from_arrow(to_arrow(runs, RUNS)), pl.from_arrow(to_arrow(steps, STEPS))
