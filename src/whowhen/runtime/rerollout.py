"""Re-rollout: the way prior work built injected runs, kept for comparison with warm start.

The prefix is *regenerated* by letting the agent system act again from the task, instead of
re-executing the recorded actions; the error is injected at step t of whatever prefix that
produced, and the run continues. With any randomness in the agents (sampling, a slip
model), the regenerated prefix can differ from the successful run it is meant to copy,
and the label (the injected step is decisive) then describes a different trajectory.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from whowhen.runtime.episode import Episode, continue_episode
from whowhen.runtime.interfaces import AgentSystem, Environment
from whowhen.runtime.types import Action, Step


@dataclass(frozen=True)
class RerolloutResult:
    prefix_exact: bool  # the regenerated prefix equals the recorded one, step by step
    aligned: bool  # step t exists and is the injected agent's turn
    episode: Episode
    # with a drifted prefix: does the run also fail *without* the injection? Then the
    # label "step t is decisive" is wrong for this trajectory (None: not checked)
    fails_without_injection: bool | None = None


def _same(a: Step, b: Step) -> bool:
    return (a.actor, a.kind, a.content, a.tool, a.tool_args) == (
        b.actor,
        b.kind,
        b.content,
        b.tool,
        b.tool_args,
    )


def rerollout(
    make_env: Callable[[], Environment],
    prefix_agent: AgentSystem,
    agent: AgentSystem,
    recorded: Sequence[Step],
    t: int,
    replacement: Action,
    max_steps: int,
) -> RerolloutResult:
    """Regenerate steps [0, t) with `prefix_agent`, apply `replacement` at t if it is that
    agent's turn, then let `agent` continue (as warm start does). If the prefix drifted,
    also run the control: the same prefix, `agent`'s own action at t, then `agent`."""
    env = make_env()
    episode = Episode()
    episode.start(env)
    while len(episode.history) < t and not env.done:
        episode.apply(env, prefix_agent.next_action(episode.history))
    exact = len(episode.history) >= t and all(
        _same(a, b) for a, b in zip(episode.history[:t], recorded[:t], strict=False)
    )
    aligned = len(episode.history) == t and not env.done
    if aligned:
        aligned = prefix_agent.next_action(episode.history).actor == replacement.actor
    if not aligned:
        episode.end_reason = "misaligned: step t is not the injected agent's turn"
        episode.verdict = env.evaluate()
        return RerolloutResult(exact, False, episode)
    prefix = list(episode.history)
    episode.apply(env, replacement)
    episode = continue_episode(env, agent, episode, max_steps)
    control = None
    if not exact:
        env2, replay = make_env(), Episode()
        replay.start(env2)
        for step in prefix[1:]:
            if step.kind != "observation":
                replay.apply(env2, step.as_action())
        replay = continue_episode(env2, agent, replay, max_steps)
        control = not (replay.verdict is not None and replay.verdict.success)
    return RerolloutResult(exact, True, episode, control)
