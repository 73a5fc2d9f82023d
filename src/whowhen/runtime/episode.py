"""The recorder and the agent loop: every action and observation becomes a numbered Step."""

from __future__ import annotations

from dataclasses import dataclass, field

from whowhen.errors import InfraError, infra_reason
from whowhen.runtime.interfaces import AgentSystem, Environment, Verdict
from whowhen.runtime.types import Action, Step
from whowhen.schema import FEEDBACK_ACTOR


class EndRun(Exception):
    """Raised by a policy to end the run early for a named reason (e.g. a model that
    repeats itself): the run ends with that reason, evaluated as it stands."""


@dataclass
class Episode:
    """A recorded history plus how it ended; the recorder is `apply`."""

    history: list[Step] = field(default_factory=list)
    end_reason: str = "running"
    verdict: Verdict | None = None

    def start(self, env: Environment) -> None:
        text = env.reset()  # reset first: it renders the task's media
        self.history = [
            Step(0, "user", "message", text, media=tuple(getattr(env, "task_media", ())))
        ]

    def apply(self, env: Environment, action: Action) -> Step | None:
        """Record the agent output, execute it, record the observation (if any); return it.

        A feedback message (`FEEDBACK_ACTOR`) is recorded but not executed: it comes from
        outside the agent system, so the environment never sees it."""
        kind = "message" if action.tool is None else "action"
        self.history.append(
            Step(
                len(self.history),
                action.actor,
                kind,
                action.content,
                action.tool,
                action.tool_args,
                cost=action.cost,
            )
        )
        if action.actor == FEEDBACK_ACTOR:
            return None
        result = env.step(action)
        if result is None:
            return None
        tool, text, *media = result  # (tool, text) or (tool, text, media refs)
        obs = Step(len(self.history), tool, "observation", text, media=tuple(*media))
        self.history.append(obs)
        return obs


def continue_episode(
    env: Environment, system: AgentSystem, episode: Episode, max_steps: int
) -> Episode:
    """Let the policy act until the environment is done or the step budget is spent.

    A policy that raises ends the episode with `end_reason='error: ...'` instead of
    taking the whole stage down: one bad run never loses the others. An `InfraError` (from
    the policy's model or from a tool) ends it `infra_error: ...`: the infrastructure
    failed, and no later stage may count the run as the agents' failure.
    """
    while not env.done:
        if len(episode.history) >= max_steps:
            episode.end_reason = "max_steps"
            break
        try:
            action = system.next_action(episode.history)
        except EndRun as exc:
            episode.end_reason = str(exc)
            break
        except InfraError as exc:
            episode.end_reason = infra_reason(str(exc))
            break
        except Exception as exc:  # a policy bug is a per-run failure, recorded
            episode.end_reason = f"error: policy raised {type(exc).__name__}: {exc}"
            break
        try:
            episode.apply(env, action)
        except InfraError as exc:
            episode.end_reason = infra_reason(str(exc))
            break
    else:
        episode.end_reason = "done"
    try:
        episode.verdict = env.evaluate()
    except InfraError as exc:  # the evaluator's own environment (a judge) did not run
        episode.end_reason, episode.verdict = infra_reason(str(exc)), None
    return episode


def run_episode(env: Environment, system: AgentSystem, max_steps: int) -> Episode:
    """A fresh rollout: reset, then let the policy act."""
    episode = Episode()
    episode.start(env)
    return continue_episode(env, system, episode, max_steps)
