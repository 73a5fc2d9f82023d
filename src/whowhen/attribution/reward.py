"""A graded reward for failure attribution, after AgenTracer's multi-granular reward
(Zhang et al., 2025, "AgenTracer: Who Is Inducing Failure in the LLM Agentic Systems?"):
an agent-level term plus a step-level term with a Gaussian kernel on the step distance.

Exact-match accuracy gives an RL policy no signal for "one step off"; the kernel does, while
the agent term keeps "right agent, wrong step" worth something. The same formula scores a
model's raw completion (`reward_fn`, `attribution_reward` for TRL's GRPOTrainer) and a
predictions table (`reward_frame`), so a trained model is judged by what it was trained on.

The weights and sigma here are this project's defaults (0.5 and 1.0 steps), not values
taken from the paper; both are parameters.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from whowhen.attribution.llm import ParseError, parse_answer

DEFAULT_SIGMA = 1.0
DEFAULT_AGENT_WEIGHT = 0.5
FORMULA = (
    "R = 0 if the answer is unparseable; else "
    "w * [agent == gold_agent] + (1 - w) * exp(-(step - gold_step)^2 / (2 * sigma^2))"
)


def check_params(sigma: float, agent_weight: float) -> None:
    """ValueError unless sigma > 0 (finite) and 0 <= agent_weight <= 1."""
    if not (isinstance(sigma, int | float) and math.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be a positive finite number, got {sigma!r}")
    if not (isinstance(agent_weight, int | float) and 0.0 <= agent_weight <= 1.0):
        raise ValueError(f"agent_weight must lie in [0, 1], got {agent_weight!r}")


def step_kernel(delta: float, sigma: float = DEFAULT_SIGMA) -> float:
    """exp(-delta^2 / (2 sigma^2)): 1 at delta = 0, exp(-1/2) at delta = sigma."""
    check_params(sigma, 0.0)
    return math.exp(-(delta**2) / (2.0 * sigma**2))


def reward(
    pred_agent: str | None,
    pred_step: int | None,
    gold_agent: str,
    gold_step: int,
    sigma: float = DEFAULT_SIGMA,
    agent_weight: float = DEFAULT_AGENT_WEIGHT,
    parse_ok: bool = True,
) -> float:
    """The multi-granular attribution reward, in [0, 1].

        R = 0                                                 if not parse_ok, or a
                                                              predicted field is None
        R = w * 1[pred_agent == gold_agent]
            + (1 - w) * exp(-(pred_step - gold_step)^2 / (2 * sigma^2))   otherwise

    with w = `agent_weight` (default 0.5) and sigma in steps (default 1.0). The two terms
    are independent: the step term is earned even when the agent is wrong (in a
    single-agent run every step has the same agent). Agents compare exactly (the parser
    has already normalised case and decorations). Examples with the defaults: exact hit
    1.0; right agent, one step off 0.5 + 0.5 * exp(-0.5) = 0.8033; wrong agent, right
    step 0.5; unparseable 0.0.
    """
    check_params(sigma, agent_weight)
    if not parse_ok or pred_agent is None or pred_step is None:
        return 0.0
    agent_term = 1.0 if pred_agent == gold_agent else 0.0
    step_term = math.exp(-((pred_step - gold_step) ** 2) / (2.0 * sigma**2))
    return agent_weight * agent_term + (1.0 - agent_weight) * step_term


def completion_text(completion: str | Sequence[Mapping[str, Any]] | Mapping[str, Any]) -> str:
    """The answer text of a completion: a plain string, a chat message, or a list of chat
    messages (TRL's conversational format), whose last message is the answer."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return str(completion.get("content") or "")
    if not completion:
        return ""
    return str(completion[-1].get("content") or "")


def reward_fn(
    completion: str | Sequence[Mapping[str, Any]] | Mapping[str, Any],
    record: Mapping[str, Any],
) -> float:
    """Score a model's raw completion against one RL record (see whowhen.dataset.training).

    The completion is parsed leniently by the attributor's own parser (JSON in a code fence
    or prose, "Step 5", agent-name case and decorations), so an answer earns exactly what the
    evaluation would accept. An answer that is not JSON, names an agent outside
    `record["agents"]` or a step outside `record["steps"]` (the run's agent steps) is
    unparseable and scores 0. `sigma` and `agent_weight` come from the record.
    """
    try:
        agent, step, _, _ = parse_answer(
            completion_text(completion), list(record["agents"]), list(record["steps"])
        )
    except ParseError:
        return 0.0
    return reward(
        agent,
        step,
        record["gold_agent"],
        int(record["gold_step"]),
        float(record.get("sigma", DEFAULT_SIGMA)),
        float(record.get("agent_weight", DEFAULT_AGENT_WEIGHT)),
    )


RECORD_FIELDS = ("gold_agent", "gold_step", "agents", "steps", "sigma", "agent_weight")


def attribution_reward(
    prompts: Sequence[Any] | None = None,
    completions: Sequence[Any] | None = None,
    **columns: Any,
) -> list[float]:
    """A reward function in TRL's GRPOTrainer shape: the trainer passes the batch's
    completions and every other dataset column as a list (one value per completion), plus
    its own keywords (trainer_state, completion_ids), which are ignored here."""
    completions = list(completions or [])
    missing = [k for k in RECORD_FIELDS[:4] if k not in columns]
    if missing:
        raise KeyError(f"attribution_reward needs dataset column(s) {', '.join(missing)}")
    fields = [k for k in RECORD_FIELDS if k in columns]
    return [reward_fn(c, {k: columns[k][i] for k in fields}) for i, c in enumerate(completions)]


def reward_frame(
    predictions: pl.DataFrame,
    labels: pl.DataFrame,
    sigma: float = DEFAULT_SIGMA,
    agent_weight: float = DEFAULT_AGENT_WEIGHT,
) -> pl.DataFrame:
    """Per (run_id, attributor): the reward of a stored prediction against its gold label
    (labelled runs only), as a graded companion to exact accuracy. Columns: run_id,
    attributor, split, reward."""
    check_params(sigma, agent_weight)
    joined = predictions.join(
        labels.select("run_id", "decisive_agent", "decisive_step", "split"),
        on="run_id",
        how="inner",
    )
    delta = (pl.col("step") - pl.col("decisive_step")).cast(pl.Float64)
    usable = pl.col("parse_ok") & pl.col("agent").is_not_null() & pl.col("step").is_not_null()
    value = (
        agent_weight * (pl.col("agent") == pl.col("decisive_agent")).cast(pl.Float64)
        + (1.0 - agent_weight) * (-(delta**2) / (2.0 * sigma**2)).exp()
    )
    return joined.select(
        "run_id",
        "attributor",
        "split",
        pl.when(usable).then(value).otherwise(0.0).alias("reward"),
    ).sort("attributor", "run_id")
