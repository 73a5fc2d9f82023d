"""Feedback sources: what each one says about a batch of failed attempts.

Every source sees what an attributor sees, the attempt without its feedback messages,
except `oracle`, which is the gold (replay), and `self_critique`, which is the system
itself re-reading its attempt:

- scripted systems re-derive each of their steps from the visible history as a new
  sample (a new seed, the attempt's draws recurring with the persistence probability) and
  flag the first step they would now do differently, else their last step. An agent that
  repeats its errors cannot see them, which is the failure of self-refine AgenTracer
  reports, and here it is a consequence, not a rule;
- LLM-played systems ask their own model (the all-at-once protocol).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from whowhen.attribution.kinds import Attributor
from whowhen.errors import WhowhenError
from whowhen.feedback.attempts import Attempt, Setting, attempt_frames
from whowhen.feedback.gold import Gold
from whowhen.registry import played_by
from whowhen.schema import FEEDBACK_SOURCES_FIXED


@dataclass(frozen=True)
class Feedback:
    agent: str | None
    step: int | None
    mode: str | None = None
    reason: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0

    @property
    def ok(self) -> bool:
        return self.agent is not None and self.step is not None


def give_feedback(
    source: str,
    attempts: list[Attempt],
    setting: Setting,
    gold: Callable[[Attempt], Gold],
    attributors: dict[str, Attributor],
    critic_seed: int,
) -> dict[str, Feedback]:
    """run_id -> the source's feedback on each failed attempt (`none` gives none)."""
    if source == "none":
        return {}
    if source == "oracle":
        out = {}
        for a in attempts:
            g = gold(a)
            out[a.run_id] = Feedback(g.agent, g.step, g.mode, g.reason or g.status)
        return out
    if source == "self_critique" and played_by(setting.system) != "model":
        return {a.run_id: self_critique(setting, a, critic_seed) for a in attempts}
    name = source  # an attributor; an LLM system's self-critique is its own model's
    if name not in attributors:
        known = ", ".join([*FEEDBACK_SOURCES_FIXED, *attributors])
        raise WhowhenError(
            f"unknown feedback source {source!r}; known: {known}", field="feedback.sources"
        )
    runs, steps = attempt_frames(attempts, stripped=True)
    preds = attributors[name](runs, steps)
    return {
        r["run_id"]: Feedback(
            r["agent"] if r["parse_ok"] else None,
            r["step"] if r["parse_ok"] else None,
            r["mode"],
            r["reason"],
            r["tokens_in"] or 0,
            r["tokens_out"] or 0,
            r["cost_usd"] or 0.0,
        )
        for r in preds.iter_rows(named=True)
    }


def self_critique(setting: Setting, attempt: Attempt, critic_seed: int) -> Feedback:
    """The scripted system re-reads its attempt: it re-derives every agent step as a new
    sample and flags the first it would now do differently (else its last step)."""
    critic: Any = setting.agent((*attempt.seeds, critic_seed))
    last = None
    for t, step in enumerate(attempt.history):
        if not step.is_agent_step:
            continue
        last = t
        try:
            again = critic.next_action(attempt.history[:t])
        except Exception:
            continue
        if again != step.as_action():
            return Feedback(
                step.actor,
                attempt.stripped_step(t),
                reason=f"on re-reading, {step.actor} would now do: {_short(again.content)}",
            )
    if last is None:
        return Feedback(None, None, reason="no agent step to doubt")
    return Feedback(
        attempt.history[last].actor,
        attempt.stripped_step(last),
        reason="re-reading finds no step to change; the final step is doubted",
    )


def _short(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."
