"""What a warm start is checked against, beside the continuation itself: control
continuations for model-played systems (would the run have succeeded from this prefix
without the error?) and the re-rollout comparison (the prefix regenerated, as prior
work built injected runs)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from whowhen.assembly import make_system
from whowhen.operators import slip_model
from whowhen.registry import get_benchmark
from whowhen.runtime import Action, warm_start
from whowhen.runtime.records import steps_from_frame
from whowhen.runtime.rerollout import rerollout
from whowhen.schema import stable_id


@dataclass(frozen=True)
class Shard:
    """What every injection of one (benchmark, system) shard is continued with."""

    tasks: dict[tuple[str, str], Any]  # (benchmark, task id) -> task
    bench_cfg: dict[str, Any]
    seed: int
    max_steps: int
    client: Any  # the models of a model-played system (None for scripted ones)


def control_seed(seed: int, injection_id: str, j: int) -> int:
    """The seed of an injection's j-th control continuation."""
    return int(stable_id("control", seed, injection_id, j)[:8], 16)


def controls_pass(
    record: dict[str, Any],
    inj: dict[str, Any],
    parent: dict[str, Any],
    steps: pl.DataFrame,
    shard: Shard,
    controls: tuple[int, float],
) -> bool:
    """Whether a flipped injection of a model-played system may be labelled: a model is
    not deterministic, so the run could have failed from this prefix without the error
    (a loop, a slip of its own). k control continuations (fresh seeds) replay the same
    prefix, take the *original* action at the injected step and go on; the label holds
    when at least `share` of them succeed. The outcome is stored on the record."""
    k, share = controls
    bench = get_benchmark(parent["benchmark"], shard.bench_cfg)
    recorded = steps_from_frame(steps)
    original = Action.from_json(inj["original_action"])
    ok = 0
    for j in range(k):
        fresh = control_seed(shard.seed, inj["injection_id"], j)
        agent = make_system(
            parent["system"], parent["benchmark"], client=shard.client,
            bench_cfg=shard.bench_cfg, seed=fresh,
        )  # fmt: skip
        env = bench.make_env(shard.tasks[(parent["benchmark"], parent["task_id"])])
        run = warm_start(env, agent, recorded, inj["step"], original, shard.max_steps)
        ok += bool(run.fidelity.exact and run.episode.verdict and run.episode.verdict.success)
    passed = ok >= share * k
    record.update(controls_run=k, controls_ok=ok, controls_passed=passed)
    if not passed:
        record["reason"] = (
            f"{record['reason']}; not labelled: {ok} of {k} control continuations "
            "succeeded without the injection"
        )
    return passed


def sampled(inj: dict[str, Any], seed: int, share: float) -> bool:
    """Whether this injection is in the re-rollout comparison's seeded sample."""
    return (
        share >= 1 or int(stable_id("compare", seed, inj["injection_id"])[:8], 16) < share * 16**8
    )


def compare_rerollout(
    make_env: Any,
    parent: dict[str, Any],
    recorded: list[Any],
    inj: dict[str, Any],
    seed: int,
    slipping: tuple[float, str],
    max_steps: int,
    bench_cfg: dict[str, Any],
) -> dict[str, Any]:
    """The re-rollout's prefix match and status for one injection (see runtime.rerollout)."""
    system, bench = parent["system"], parent["benchmark"]
    fresh = int(stable_id("rerollout", seed, inj["injection_id"])[:8], 16)
    result = rerollout(
        make_env,
        make_system(
            system, bench, slipping[0], fresh, slip_model(slipping[1]), bench_cfg=bench_cfg
        ),
        make_system(system, bench, seed=seed, bench_cfg=bench_cfg),
        recorded,
        inj["step"],
        Action.from_json(inj["replacement_action"]),
        max_steps,
    )
    ok = result.episode.verdict is not None and result.episode.verdict.success
    status = "recovered" if ok else "flipped"
    return {
        "rerollout_prefix_exact": result.prefix_exact,
        "rerollout_status": status if result.aligned else "invalid",
        # a flipped re-rollout whose drifted prefix fails on its own: a wrong label
        "rerollout_label_wrong": bool(not ok and result.fails_without_injection),
    }
