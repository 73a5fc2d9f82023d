"""Warm start: replay a recorded prefix exactly, swap in one action, let the policy go on.

Prefix actions come from the record and are never regenerated, so the prefix cannot
drift whatever the policy's temperature. What *can* drift is the environment; every
re-executed observation is compared with the recorded one and the result is kept
(`PrefixFidelity`), so a non-deterministic environment is caught, not trusted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from whowhen.errors import InfraError, WhowhenError, infra_reason
from whowhen.runtime.episode import Episode, continue_episode
from whowhen.runtime.interfaces import AgentSystem, Environment
from whowhen.runtime.types import Action, Step


@dataclass(frozen=True)
class PrefixFidelity:
    """How faithfully the recorded prefix was reproduced."""

    prefix_len: int
    checked: int
    matched: int
    first_mismatch_step: int | None

    @property
    def exact(self) -> bool:
        return self.first_mismatch_step is None and self.checked == self.matched


@dataclass
class WarmStartResult:
    episode: Episode
    fidelity: PrefixFidelity


def warm_start(
    env: Environment,
    system: AgentSystem,
    recorded: Sequence[Step],
    t: int,
    replacement: Action,
    max_steps: int,
) -> WarmStartResult:
    """Reset `env`, re-execute `recorded[:t]`, apply `replacement` as step t, continue.

    Stops at the first observation that differs from the record: continuing on a
    drifted prefix would give a label for a trajectory that never happened.
    """
    _check_injection_point(recorded, t, replacement)
    episode = Episode()
    episode.start(env)
    try:
        checked, matched, mismatch, i = _replay_prefix(env, episode, recorded, t)
    except InfraError as exc:  # a tool that did not start is no drift of the prefix
        episode.end_reason = infra_reason(str(exc))
        return WarmStartResult(episode, PrefixFidelity(t, 0, 0, None))
    fidelity = PrefixFidelity(t, checked, matched, mismatch)
    if mismatch is not None or i != t:
        episode.end_reason = (
            f"prefix drift at step {mismatch}"
            if mismatch is not None
            else f"prefix misaligned: step {t} falls inside an observation"
        )
        return WarmStartResult(
            episode, PrefixFidelity(t, checked, matched, mismatch if mismatch is not None else t)
        )
    # the injected step carries what the step it replaces cost (a model-played run's
    # steps all have a cost: a free one would mark the injection point)
    try:
        episode.apply(env, replace(replacement, cost=replacement.cost or recorded[t].cost))
    except InfraError as exc:
        episode.end_reason = infra_reason(str(exc))
        return WarmStartResult(episode, fidelity)
    return WarmStartResult(continue_episode(env, system, episode, max_steps), fidelity)


def _check_injection_point(recorded: Sequence[Step], t: int, replacement: Action) -> None:
    """Raise unless step t is an agent step of the record and `replacement` keeps its actor."""
    if not 0 < t < len(recorded) or not recorded[t].is_agent_step:
        raise WhowhenError(f"step {t} is not an agent step of the recorded run", field="step")
    if replacement.actor != recorded[t].actor:
        raise WhowhenError(
            f"replacement actor {replacement.actor!r} differs from the "
            f"recorded actor {recorded[t].actor!r}",
            field="replacement_action",
        )


def _replay_prefix(
    env: Environment, episode: Episode, recorded: Sequence[Step], t: int
) -> tuple[int, int, int | None, int]:
    """Re-execute the recorded actions before step t on the started `episode`, comparing
    each observation with the record; stops at the first mismatch.
    Returns (checked, matched, first mismatch or None, index reached)."""
    checked = matched = 0
    mismatch: int | None = None

    def compare(got: Step, i: int) -> None:
        nonlocal checked, matched, mismatch
        checked += 1
        want = recorded[i] if i < len(recorded) else None
        if want is not None and (got.actor, got.kind, got.content) == (
            want.actor,
            want.kind,
            want.content,
        ):
            matched += 1
        elif mismatch is None:
            mismatch = i

    compare(episode.history[0], 0)
    i = 1
    while i < t and mismatch is None:
        step = recorded[i]
        if step.kind == "observation":  # produced by the environment, never replayed
            raise WhowhenError(
                f"recorded step {i} is an observation without a preceding action", field="kind"
            )
        obs = episode.apply(env, step.as_action())
        i += 1
        if obs is not None:
            compare(obs, i)
            i += 1
    return checked, matched, mismatch, i
