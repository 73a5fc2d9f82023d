"""The gold decisive step of a failed attempt: counterfactual replay with the same agent.

As in the replay stage: from the earliest agent step on, the slip-free reference policy
proposes its action for the visible history; where the attempt did otherwise, the attempt
is warm-started with only that action corrected and the *same* agent (seed chain, slips,
feedback messages and all) plays on. The first correction that flips the outcome is the
decisive step. It is the oracle source's feedback and the yardstick of every other's.
"""

from __future__ import annotations

from dataclasses import dataclass

from whowhen.assembly import make_system
from whowhen.feedback.attempts import Attempt, Setting
from whowhen.registry import played_by
from whowhen.replay.classify import classify
from whowhen.replay.probe import replay_run


@dataclass(frozen=True)
class Gold:
    status: str  # decisive | no_single_decisive_step | fidelity_error | skipped
    agent: str | None = None
    step: int | None = None  # numbered without feedback messages
    mode: str | None = None
    reason: str | None = None


def gold_of(setting: Setting, attempt: Attempt, max_probes: int, max_steps: int) -> Gold:
    """Replay `attempt` (a failed one) to find its decisive step."""
    if played_by(setting.system) == "model":
        return Gold("skipped", reason="an LLM-played system has no scripted reference policy")
    reference = make_system(setting.system, setting.benchmark, bench_cfg=setting.bench_cfg)
    result = replay_run(
        attempt.history,
        lambda: setting.bench.make_env(attempt.task),
        reference,
        lambda: setting.agent(attempt.seeds),
        max_probes,
        max_steps + len(attempt.messages),
    )
    hit = result.decisive
    if hit is None:
        return Gold(result.status, reason=result.reason)
    mode = classify(hit.recorded, hit.corrected, attempt.history[: hit.step])
    step = attempt.stripped_step(hit.step)
    return Gold(
        "decisive",
        hit.agent,
        step,
        mode,
        f"correcting step {step} makes the run succeed",
    )
