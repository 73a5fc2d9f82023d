"""The rounds: rerun every failed task with one source's feedback until solved or R rounds.

All sources use the same seed in a round (a paired comparison: the only difference
between two sources' reruns of a task is the feedback), and every rerun is told all the
feedback its task has had so far, one message per failed attempt.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from whowhen.attribution.factory import Attributor
from whowhen.errors import is_infra
from whowhen.feedback.attempts import Attempt, Setting, attempt_frames, play
from whowhen.feedback.gold import Gold, gold_of
from whowhen.feedback.sources import Feedback, give_feedback
from whowhen.runtime.feedback import feedback_message
from whowhen.runtime.records import steps_from_frame
from whowhen.schema import FEEDBACK, RUNS, STEPS, empty, to_arrow

log = logging.getLogger(__name__)


@dataclass
class Context:
    """One shard's loop: its setting, the rounds, and the sources to compare."""

    setting: Setting
    rounds: int
    seed: int
    sources: list[str]
    attributors: dict[str, Attributor] = field(default_factory=dict)
    max_probes: int = 20
    replay_max_steps: int = 80
    infra: list[str] = field(default_factory=list)
    """The end reasons of reruns an infrastructure failure stopped: their attempt rows say
    so (`end_reason`), their runs and steps are not kept, and no later round retries them."""
    _gold: dict[str, Gold] = field(default_factory=dict)

    def round_seed(self, round_: int) -> int:
        """The seed of every source's reruns in this round (a paired comparison)."""
        return self.seed * 1000 + round_

    def critic_seed(self, round_: int) -> int:
        """The seed of a scripted self-critique before this round: a new sample too."""
        return self.seed * 1000 + 500 + round_

    def gold(self, attempt: Attempt) -> Gold:
        """Replayed once per attempt, whichever sources ask."""
        if attempt.run_id not in self._gold:
            self._gold[attempt.run_id] = gold_of(
                self.setting, attempt, self.max_probes, self.replay_max_steps
            )
        return self._gold[attempt.run_id]


def originals(runs: pl.DataFrame, steps: pl.DataFrame, tasks: dict[str, Any]) -> list[Attempt]:
    """The failed rollouts, as attempt 0 of each task (sorted by task)."""
    by_run = {key[0]: frame for key, frame in steps.group_by("run_id")}
    out = []
    for row in runs.filter(~pl.col("success")).sort("task_id").iter_rows(named=True):
        if row["task_id"] not in tasks:
            continue
        history = steps_from_frame(by_run[row["run_id"]]) if row["run_id"] in by_run else []
        out.append(Attempt(tasks[row["task_id"]], row["run_id"], (row["seed"],), (), history, row))
    return out


def run_feedback(
    ctx: Context, failed: list[Attempt], progress: Callable[[str], None] = log.info
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(attempts, runs, steps) of every rerun, for every source, over the rounds."""
    s = ctx.setting
    rows: list[dict[str, Any]] = []
    made: list[Attempt] = []
    for source in ctx.sources:
        pending = list(failed)
        for round_ in range(1, ctx.rounds + 1):
            if not pending:
                break
            said = give_feedback(
                source, pending, s, ctx.gold, ctx.attributors, ctx.critic_seed(round_)
            )
            still = []
            for parent in pending:
                fb = said.get(parent.run_id)
                messages = parent.messages
                if source != "none":
                    fb = fb or Feedback(None, None)
                    text = feedback_message(round_ - 1, fb.agent, fb.step, fb.reason)
                    messages = (*messages, text)
                seeds = (*parent.seeds, ctx.round_seed(round_))
                child = play(
                    s, parent.task, seeds, messages, source=source, round_=round_, parent=parent
                )
                rows.append(_row(ctx, source, round_, parent, child, fb))
                if is_infra(child.row["end_reason"]):  # an outage: neither solved nor not,
                    ctx.infra.append(child.row["end_reason"])  # its attempt row says so
                    continue
                made.append(child)
                if not child.row["success"]:
                    still.append(child)
            progress(
                f"feedback {s.benchmark}/{s.system} {source} round {round_}: "
                f"{len(pending) - len(still)} of {len(pending)} solved"
            )
            pending = still
    if not rows:
        return empty(FEEDBACK), empty(RUNS), empty(STEPS)
    runs, steps = attempt_frames(made, stripped=False) if made else (empty(RUNS), empty(STEPS))
    return pl.from_arrow(to_arrow(rows, FEEDBACK)), runs, steps


def _row(
    ctx: Context,
    source: str,
    round_: int,
    parent: Attempt,
    child: Attempt,
    fb: Feedback | None,
) -> dict[str, Any]:
    gold = ctx.gold(parent)
    decisive = gold.status == "decisive"
    given = fb is not None
    return {
        "run_id": child.run_id,
        "benchmark": ctx.setting.benchmark,
        "system": ctx.setting.system,
        "modality": child.row["modality"],
        "task_id": child.row["task_id"],
        "source": source,
        "round": round_,
        "parent_run_id": parent.run_id,
        "seed": child.seeds[-1],
        "success": child.row["success"],
        "score": child.row["score"],
        "n_steps": len(child.stripped),
        "end_reason": child.row["end_reason"],
        "slips": child.slips,
        "rechecks": child.rechecks,
        "fb_agent": fb.agent if fb else None,
        "fb_step": fb.step if fb else None,
        "fb_mode": fb.mode if fb else None,
        "fb_reason": fb.reason if fb else None,
        "fb_ok": bool(fb and fb.ok),
        "message": child.messages[-1] if given else None,
        "gold_status": gold.status,
        "gold_agent": gold.agent,
        "gold_step": gold.step,
        "agent_correct": (fb.agent == gold.agent) if given and decisive else None,
        "step_correct": (fb.step == gold.step) if given and decisive else None,
        "fb_tokens_in": fb.tokens_in if fb else 0,
        "fb_tokens_out": fb.tokens_out if fb else 0,
        "fb_cost_usd": fb.cost_usd if fb else 0.0,
        "tokens_in": child.row["tokens_in"],
        "tokens_out": child.row["tokens_out"],
        "cost_usd": child.row["cost_usd"],
    }
