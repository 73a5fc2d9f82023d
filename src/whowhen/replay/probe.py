"""Counterfactual replay of one failed run: which single corrected action flips it?

For each agent step t, from the earliest on, the reference policy (the system's scripted
policy with slips off) proposes its action for exactly the visible history before t. Where
that differs from what the agent did, the run is warm-started from the recorded prefix
with only action t replaced, and the *same agent* (same policy, same slip model and seed)
plays on to the end; the evaluator decides. The first t whose correction flips the
outcome is the decisive step.

Unlike pasting a hint into the initial prompt and rerunning the whole task, every probe
isolates step t: the prefix is re-executed from the record (checked observation by
observation), and the continuation is the agent's own behaviour, so a harmless early
slip is not blamed for a later decisive one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from whowhen.errors import is_infra
from whowhen.runtime import Action, AgentSystem, Environment, Step, WarmStartResult, warm_start


@dataclass(frozen=True)
class Probe:
    step: int
    agent: str
    outcome: str  # flipped | still_failed | fidelity_error | infra_error | error
    recorded: Action
    corrected: Action
    n_steps: int
    replayed_steps: int
    tokens_in: int
    tokens_out: int
    cost_usd: float
    end_reason: str


@dataclass(frozen=True)
class Replay:
    status: str  # decisive | no_single_decisive_step | fidelity_error | infra_error
    reason: str | None
    probes: tuple[Probe, ...]

    @property
    def decisive(self) -> Probe | None:
        return self.probes[-1] if self.status == "decisive" else None


def replay_run(
    recorded: Sequence[Step],
    make_env: Callable[[], Environment],
    reference: AgentSystem,
    make_agent: Callable[[], AgentSystem],
    max_probes: int,
    max_steps: int,
) -> Replay:
    """Probe the failed run `recorded` step by step (at most `max_probes` warm starts)."""
    probes: list[Probe] = []
    for t, step in enumerate(recorded):
        if not step.is_agent_step:
            continue
        if len(probes) >= max_probes:
            return Replay(
                "no_single_decisive_step", f"probe cap reached ({max_probes})", tuple(probes)
            )
        try:
            corrected = reference.next_action(recorded[:t])
        except Exception as exc:  # the reference cannot act on this history: no correction
            probes.append(_failed_probe(t, step, f"reference raised {type(exc).__name__}: {exc}"))
            continue
        if corrected == step.as_action():
            continue  # the agent did what the reference would: nothing to correct here
        if corrected.actor != step.actor:
            probes.append(_failed_probe(t, step, f"reference acts as {corrected.actor!r}"))
            continue
        result = warm_start(make_env(), make_agent(), recorded, t, corrected, max_steps)
        probes.append(_probe(t, step, corrected, result))
        ended = settled(probes, "the environment")
        if ended is not None:
            return ended
    return unsettled(probes)


def settled(probes: list[Probe], replayer: str) -> Replay | None:
    """The search's end when its last probe decides it: a flip, an outage (which says
    nothing about the step) or a prefix `replayer` no longer replays; else None."""
    probe = probes[-1]
    if probe.outcome == "infra_error":
        return Replay("infra_error", probe.end_reason, tuple(probes))
    if probe.outcome == "fidelity_error":
        why = f"{replayer} no longer replays the recorded prefix ({probe.end_reason})"
        return Replay("fidelity_error", why, tuple(probes))
    if probe.outcome == "flipped":
        return Replay("decisive", None, tuple(probes))
    return None


def unsettled(probes: list[Probe]) -> Replay:
    """The search's end when every step was tried and none flipped the run."""
    reason = "no single correction flips the outcome" if probes else "no step to correct"
    return Replay("no_single_decisive_step", reason, tuple(probes))


def _probe(t: int, step: Step, corrected: Action, result: WarmStartResult) -> Probe:
    """The probe of one warm start: its outcome, and the cost of the steps from t on."""
    episode = result.episode
    after = episode.history[t:]
    outcome = (
        "infra_error"
        if is_infra(episode.end_reason)
        else "fidelity_error"
        if not result.fidelity.exact
        else "flipped"
        if episode.verdict is not None and episode.verdict.success
        else "still_failed"
    )
    return Probe(
        t,
        step.actor,
        outcome,
        step.as_action(),
        corrected,
        len(episode.history),
        t,
        sum(s.cost.tokens_in for s in after if s.cost),
        sum(s.cost.tokens_out for s in after if s.cost),
        round(sum(s.cost.cost_usd for s in after if s.cost), 8),
        episode.end_reason,
    )


def _failed_probe(t: int, step: Step, why: str) -> Probe:
    action = step.as_action()
    return Probe(t, step.actor, "error", action, action, 0, 0, 0, 0, 0.0, why)


def probe_rows(run_id: str, replay: Replay) -> list[dict[str, Any]]:
    return [
        {
            "run_id": run_id,
            "step": p.step,
            "agent": p.agent,
            "outcome": p.outcome,
            "recorded_action": p.recorded.to_json(),
            "corrected_action": p.corrected.to_json(),
            "n_steps": p.n_steps,
            "replayed_steps": p.replayed_steps,
            "tokens_in": p.tokens_in,
            "tokens_out": p.tokens_out,
            "cost_usd": p.cost_usd,
            "end_reason": p.end_reason,
        }
        for p in replay.probes
    ]
