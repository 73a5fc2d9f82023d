"""What one continuation records: its `continuations` row (status, reason, prefix
fidelity), and for a valid one its run, steps and, when it flipped, its exact label.

Apart from the stage's scheduling (`continuation.py`) so that the rule "what makes a warm
start valid, and what it is labelled" reads in one place."""

from __future__ import annotations

from typing import Any

from whowhen.errors import is_infra
from whowhen.runtime import AgentSystem, Environment, Episode, WarmStartResult
from whowhen.runtime.records import run_row, step_rows


def continuation_record(
    inj: dict[str, Any], run_id: str, earlier: list[tuple[int, str]]
) -> dict[str, Any]:
    """One injection's continuations row, `invalid` until the warm start says otherwise."""
    record: dict[str, Any] = {
        "run_id": run_id,
        "injection_id": inj["injection_id"],
        "parent_run_id": inj["parent_run_id"],
        "benchmark": inj["benchmark"],
        "system": inj["system"],
        "mode": inj["mode"],
        "status": "invalid",
        "reason": None,
        "prefix_len": inj["step"],
        "prefix_checked": 0,
        "prefix_matched": 0,
        "prefix_exact": False,
        "first_mismatch_step": None,
        "earlier_error_step": None,
        "controls_run": None,
        "controls_ok": None,
        "controls_passed": None,
        "calls_replayed": None,
        "calls_live": None,
    }
    if earlier:
        record["earlier_error_step"] = earlier[0][0]
    return record


def record_outcome(record: dict[str, Any], result: WarmStartResult) -> bool:
    """Store the prefix fidelity and the status; False when the continuation is invalid
    (drifted prefix, no verdict, a crash), so no run is kept for it."""
    fid, episode = result.fidelity, result.episode
    record.update(
        prefix_checked=fid.checked,
        prefix_matched=fid.matched,
        prefix_exact=fid.exact,
        first_mismatch_step=fid.first_mismatch_step,
    )
    failed = is_infra(episode.end_reason) or episode.end_reason.startswith("error")
    if failed or not fid.exact or episode.verdict is None:
        record["reason"] = episode.end_reason
        return False
    success = episode.verdict.success
    record["status"] = "recovered" if success else "flipped"
    record["reason"] = episode.end_reason
    return True


def keep_run(
    out: dict[str, list[dict[str, Any]]],
    episode: Episode,
    env: Environment,
    agent: AgentSystem,
    run_id: str,
    seed: int,
    parent: dict[str, Any],
    inj: dict[str, Any],
    earlier: list[tuple[int, str]],
    labelled: bool = True,
) -> None:
    """Add a valid continuation's run and steps to `out`, and its label if it flipped
    (and its control continuations, if any, allow it)."""
    out["runs"].append(
        run_row(
            episode,
            env,
            agent,
            run_id=run_id,
            seed=seed,
            origin="injected",
            parent_run_id=parent["run_id"],
            gold_answer=parent["gold_answer"],
            question=parent["question"],
        )
    )
    out["steps"] += step_rows(episode, run_id)
    if labelled and not episode.verdict.success:
        out["labels"].append(label_row(inj, run_id, earlier))


def label_row(inj: dict[str, Any], run_id: str, earlier: list[tuple[int, str]]) -> dict[str, Any]:
    """The exact label of a flipped run: the injected step; the reason notes an earlier slip."""
    return {
        "run_id": run_id,
        "decisive_agent": inj["agent"],
        "decisive_step": inj["step"],
        "mode": inj["mode"],
        "category": inj["category"],
        "original_action": inj["original_action"],
        "replacement_action": inj["replacement_action"],
        "reason": (
            f"the run also holds a recovered error at step {earlier[0][0]} "
            f"({earlier[0][1]}); under the earliest-decisive-step reading that "
            "step may be decisive too"
            if earlier
            else None
        ),
        "source": "injection",
        "split": None,
    }
