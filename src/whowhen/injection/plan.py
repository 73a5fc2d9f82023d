"""Plan injections: for each successful rollout, a seeded choice of step and mode, and the
erroneous replacement action produced by that mode's operator."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import polars as pl

from whowhen.operators import OPERATORS
from whowhen.runtime import Action
from whowhen.runtime.records import by_run, steps_from_rows
from whowhen.schema import INJECTIONS, NON_AGENT_ACTORS, stable_id, to_arrow
from whowhen.taxonomy import Mode, Taxonomy


def _action(row: dict[str, Any]) -> Action:
    args = json.loads(row["tool_args"]) if row["tool_args"] else None
    return Action(row["actor"], row["content"], row["tool"], args)


Generator = Callable[[Action, Mode, list[dict[str, Any]], random.Random], Action | None]
"""(original action, mode, the steps before it, rng) -> a replacement, or None if it cannot."""

_StepOptions = dict[int, list[tuple[dict[str, Any], Mode]]]
"""{step: [(candidate step row, mode), ...]}: the (step, mode) pairs one run may get."""


def programmatic(
    original: Action, mode: Mode, context: list[dict[str, Any]], rng: random.Random
) -> Action | None:
    """The mode's programmatic operator (no model call), given the visible history."""
    return OPERATORS[mode.id](original, rng, steps_from_rows(context))


def candidate_steps(steps: pl.DataFrame, taxonomy: Taxonomy) -> pl.DataFrame:
    """Agent steps (tool calls, and messages as action type `message`) that at least one
    mode with an operator applies to."""
    types = sorted({t for m in taxonomy.modes if m.id in OPERATORS for t in m.action_types})
    return (
        steps.filter(pl.col("kind").is_in(["action", "message"]))
        .with_columns(pl.col("tool").fill_null("message").alias("action_type"))
        .filter(~pl.col("actor").is_in(NON_AGENT_ACTORS) & pl.col("action_type").is_in(types))
        .sort("run_id", "step")
    )


def plan_injections(
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    taxonomy: Taxonomy,
    seed: int,
    per_run: int,
    modes: list[str] | None = None,
    generator: Generator = programmatic,
    weights: dict[tuple[str, str], dict[str, float]] | None = None,
    step_selection: str | dict[str, str] = "uniform",
    terminal_share: float = 1.0,
    min_per_mode: int = 0,
) -> pl.DataFrame:
    """Up to `per_run` distinct (step, mode) injections per successful run.

    Step: uniform over the run's candidate agent actions; `stratified`: early, middle
    and late thirds of the run's agent steps take turns, so long runs are not injected
    mostly in their middle; or `spread`: the tenths of the run take turns from a seeded
    start, so over many runs the injected steps cover every part of a run evenly (a dict
    gives the selection per benchmark). Mode: among the
    modes that
    apply to that action type (and are enabled), drawn in proportion to
    `weights[(benchmark, system)][mode]` (default 1: uniform), so injections follow the
    natural failures' mode mix where one is known. A replacement that ends the run
    (an answer, a checkout) makes the gold step the run's last one: each run takes at most
    one, and only with probability `terminal_share` (else the next mode at that step is
    tried), so position does not give the gold away. A mode planned fewer than
    `min_per_mode` times (one that applies only at rare steps, such as a verifier's
    send-back) is topped up at its other applicable steps, so every mode reaches the
    dataset. Depends only on the inputs and `seed`, so reruns plan the same injections.
    """
    enabled = [m for m in taxonomy.modes if m.id in OPERATORS and (not modes or m.id in modes)]
    cands = candidate_steps(steps, taxonomy)
    steps_of = by_run(steps.sort("step"))
    cands_of = by_run(cands)
    rows: list[dict[str, Any]] = []
    options: dict[str, tuple[dict[str, Any], _StepOptions, list[int]]] = {}
    for run in runs.filter(pl.col("success")).sort("run_id").iter_rows(named=True):
        rng = random.Random(f"{seed}:{run['run_id']}")
        run_cands = cands_of.get(run["run_id"], cands.clear())
        by_step = _options_by_step(run_cands, enabled, rng)
        step_order = sorted(by_step)
        rng.shuffle(step_order)
        run_steps = steps_of.get(run["run_id"], steps.clear())
        agent_steps = _agent_steps(run_steps)
        selection = _selection(step_selection, run["benchmark"])
        if selection == "stratified":
            step_order = stratified_order(step_order, agent_steps, rng)
        elif selection == "spread":
            step_order = spread_order(step_order, agent_steps, rng)
        pair = (weights or {}).get((run["benchmark"], run["system"]), {})
        _order_modes(by_step, step_order, pair, rng)
        rows += _choose_injections(
            run,
            run_steps,
            by_step,
            step_order,
            agent_steps,
            (per_run, terminal_share),
            generator,
            rng,
        )
        options[run["run_id"]] = (run, by_step, agent_steps)
    if min_per_mode:
        top_up_rng = random.Random(f"{seed}:top-up")
        rows += _top_up(rows, options, steps_of, min_per_mode, generator, top_up_rng)
    return pl.from_arrow(to_arrow(rows, INJECTIONS))


def _top_up(
    rows: list[dict[str, Any]],
    options: dict[str, tuple[dict[str, Any], _StepOptions, list[int]]],
    steps_of: dict[str, pl.DataFrame],
    quota: int,
    generator: Generator,
    rng: random.Random,
) -> list[dict[str, Any]]:
    """Extra injections for the modes planned fewer than `quota` times: runs in a seeded
    order, at a step of the run not injected yet, a run-ending replacement only in a run
    that has none. Why: the natural mix weights a mode by its natural failures, and a mode
    that applies only at rare steps (a verifier's send-back) would otherwise never reach
    the dataset."""
    counts: dict[str, int] = {}
    taken: set[tuple[str, int]] = set()
    ended: set[str] = set()
    for r in rows:
        counts[r["mode"]] = counts.get(r["mode"], 0) + 1
        taken.add((r["parent_run_id"], r["step"]))
        if json.loads(r["replacement_action"]).get("tool") in TERMINAL:
            ended.add(r["parent_run_id"])
    run_ids = sorted(options)
    rng.shuffle(run_ids)
    extra: list[dict[str, Any]] = []
    for run_id in run_ids:
        run, by_step, agent_steps = options[run_id]
        for step in sorted(by_step):
            if (run_id, step) in taken:
                continue
            for s, mode in by_step[step]:
                if counts.get(mode.id, 0) >= quota:
                    continue
                tried = _replace(s, mode, steps_of[run_id], generator, rng)
                if tried is None:
                    continue
                original, replacement = tried
                if replacement.tool in TERMINAL:
                    if run_id in ended:
                        continue
                    ended.add(run_id)
                extra.append(_injection_row(run, step, mode, original, replacement, agent_steps))
                counts[mode.id] = counts.get(mode.id, 0) + 1
                taken.add((run_id, step))
                break
    return extra


def _replace(
    s: dict[str, Any],
    mode: Mode,
    run_steps: pl.DataFrame,
    generator: Generator,
    rng: random.Random,
) -> tuple[Action, Action] | None:
    """(original, replacement) of candidate step `s` under `mode`, given the run's steps
    before it (`run_steps` is sorted); None if the operator cannot change it."""
    original = _action(s)
    context = run_steps.filter(pl.col("step") < s["step"]).to_dicts()
    replacement = generator(original, mode, context, rng)
    if replacement is None or replacement == original:
        return None
    return original, replacement


def _options_by_step(
    run_cands: pl.DataFrame, enabled: list[Mode], rng: random.Random
) -> _StepOptions:
    """Every (candidate step, applicable mode) pair of one run, shuffled, grouped by step."""
    options = [
        (s, m)
        for s in run_cands.iter_rows(named=True)
        for m in enabled
        if s["action_type"] in m.action_types
    ]
    rng.shuffle(options)
    # choose step first, then mode, so steps with many modes are not over-sampled
    by_step: _StepOptions = {}
    for s, m in options:
        by_step.setdefault(s["step"], []).append((s, m))
    return by_step


def _agent_steps(run_steps: pl.DataFrame) -> list[int]:
    """The run's agent steps (actions and messages), sorted: what `position` divides."""
    return sorted(
        run_steps.filter(
            pl.col("kind").is_in(["action", "message"]) & ~pl.col("actor").is_in(NON_AGENT_ACTORS)
        )["step"]
    )


def _selection(step_selection: str | dict[str, str], benchmark: str) -> str:
    """The step selection for this benchmark (a dict gives it per benchmark)."""
    return (
        step_selection.get(benchmark, "uniform")
        if isinstance(step_selection, dict)
        else step_selection
    )


def _order_modes(
    by_step: _StepOptions, step_order: list[int], pair: dict[str, float], rng: random.Random
) -> None:
    """Sort each step's modes in place, weighted by `pair`; one draw per mode, steps taken in
    `step_order` (the order of the draws is part of the plan)."""
    for step in step_order:  # weighted order without replacement (Efraimidis-Spirakis)
        keys = {m.id: rng.random() ** (1.0 / pair.get(m.id, 1.0)) for _, m in by_step[step]}
        by_step[step].sort(key=lambda sm, keys=keys: -keys[sm[1].id])


def _choose_injections(
    run: dict[str, Any],
    run_steps: pl.DataFrame,
    by_step: _StepOptions,
    step_order: list[int],
    agent_steps: list[int],
    limits: tuple[int, float],
    generator: Generator,
    rng: random.Random,
) -> list[dict[str, Any]]:
    """Up to `per_run` injections of one run: at each step in order, the first mode whose
    operator yields a replacement that differs from the original (at most one that ends
    the run, drawn with probability `terminal_share`)."""
    per_run, terminal_share = limits
    rows: list[dict[str, Any]] = []
    chosen, terminal = 0, 0
    for step in step_order:
        if chosen >= per_run:
            break
        for s, mode in by_step[step]:
            tried = _replace(s, mode, run_steps, generator, rng)
            if tried is None:
                continue
            original, replacement = tried
            if replacement.tool in TERMINAL and terminal_share < 1:
                if terminal or rng.random() >= terminal_share:
                    continue
                terminal += 1
            rows.append(_injection_row(run, step, mode, original, replacement, agent_steps))
            chosen += 1
            break
    return rows


def _injection_row(
    run: dict[str, Any],
    step: int,
    mode: Mode,
    original: Action,
    replacement: Action,
    agent_steps: list[int],
) -> dict[str, Any]:
    """One INJECTIONS row; its id is a hash of what it changes."""
    return {
        "injection_id": stable_id(run["run_id"], step, mode.id, replacement.to_json()),
        "parent_run_id": run["run_id"],
        "benchmark": run["benchmark"],
        "system": run["system"],
        "step": step,
        "agent": original.actor,
        "action_type": original.tool or "message",
        "position": position(step, agent_steps),
        "mode": mode.id,
        "category": mode.category,
        "original_action": original.to_json(),
        "replacement_action": replacement.to_json(),
    }


TERMINAL = ("final_answer", "checkout")
"""Tools that end a run: an injection there is always the run's last agent step."""
POSITIONS = ("early", "middle", "late")


def position(step: int, agent_steps: list[int]) -> str:
    """Which third of the run's agent steps `step` falls in."""
    index = agent_steps.index(step) if step in agent_steps else 0
    return POSITIONS[min(2, 3 * index // max(1, len(agent_steps)))]


def stratified_order(order: list[int], agent_steps: list[int], rng: random.Random) -> list[int]:
    """`order` (already shuffled) re-ordered so the thirds take turns, from a random one."""
    strata = {p: [s for s in order if position(s, agent_steps) == p] for p in POSITIONS}
    start = rng.randrange(3)
    turns = [POSITIONS[(start + i) % 3] for i in range(3)]
    out: list[int] = []
    while any(strata.values()):
        for p in turns:
            if strata[p]:
                out.append(strata[p].pop(0))
    return out


def spread_order(order: list[int], agent_steps: list[int], rng: random.Random) -> list[int]:
    """`order` (already shuffled) re-ordered so that the tenths of the run (index among the
    agent steps / their count) take turns, from a random tenth: the first injections of a
    run land in different parts of it, and the start differs from run to run."""
    n = max(1, len(agent_steps))
    index = {s: i for i, s in enumerate(agent_steps)}
    strata: dict[int, list[int]] = {}
    for s in order:
        strata.setdefault(10 * index.get(s, 0) // n, []).append(s)
    start = rng.randrange(10)
    turns = [t for t in ((start + i) % 10 for i in range(10)) if t in strata]
    out: list[int] = []
    while any(strata.values()):
        for t in turns:
            if strata[t]:
                out.append(strata[t].pop(0))
    return out
