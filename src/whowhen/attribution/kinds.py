"""The attributor and LLM-protocol registries: adding an attributor is one module plus its
`@ATTRIBUTORS.register(...)`, adding a protocol one function plus `@PROTOCOLS.register(...)`.

Why one record per kind (`AttributorKind`): every user of an attributor's name reads what
it needs from the entry, not from a list of names of its own: the factory builds it
(`make(ctx)`), the report pools it by protocol and family and puts its rows in a table
(`section`), the config check and the command line see whether it is fitted on the
labelled train split, needs the fitted tracer model, or replays runs in their
environments. The built-ins register beside their code (`baselines`, `shortcuts`,
`heuristics`, `oracle`, `tracer`; the protocols in `llm_protocols`); code outside the
package registers through the entry-point groups `whowhen.attributors` and
`whowhen.protocols`.

The attributors a config lists under `attribution.llm` are no kinds: each is a protocol
run with a model, built by `factory`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from whowhen.errors import WhowhenError
from whowhen.plugins import Registry

if TYPE_CHECKING:
    from whowhen.attribution.llm import Conversation

Attributor = Callable[[pl.DataFrame, pl.DataFrame], pl.DataFrame]
"""(runs, steps) -> PREDICTIONS: one configured attributor, ready to run."""

SECTIONS = ("shortcuts", "learned")
"""The report tables an attributor's rows can go in: the built dataset's shortcut audit
(test split), and the trained attributor, heuristic and oracle table (test split, each
imported dataset apart)."""


@dataclass(frozen=True)
class AttributorContext:
    """What a kind's factory may read. `params`: the config sections the caller has (the
    pipeline's stages: attribution, llm, models, taxonomy, benchmarks, seed, replay; the
    command line: attribution only); `tracer_model`: the fitted tracer model's path;
    `labels`: the dataset's labels (None on feedback reruns)."""

    params: Mapping[str, Any]
    tracer_model: str | None = None
    labels: pl.DataFrame | None = None

    @property
    def seed(self) -> int:
        """The seed of stochastic attributors (`attribution.seed`)."""
        return int(self.params["attribution"]["seed"])


@dataclass(frozen=True)
class AttributorKind:
    """One registered attributor. `protocol` and `family` are what pooled breakdowns and
    the cost-performance figure group it by; `section` the report table its rows go in
    (one of `SECTIONS`, None: only the pooled tables); `fitted_on_train`: it is fitted on
    the labelled train split when it runs, so it cannot attribute feedback reruns and
    predicts nothing on a dataset without one; `needs_tracer_model`: it reads the fitted
    tracer model (`ctx.tracer_model`); `needs_environment`: it replays runs in their
    benchmarks' environments (config sections benchmarks, seed, replay), which only the
    pipeline has."""

    name: str
    make: Callable[[AttributorContext], Attributor]
    protocol: str
    family: str
    section: str | None = None
    fitted_on_train: bool = False
    needs_tracer_model: bool = False
    needs_environment: bool = False

    def __post_init__(self) -> None:
        if self.section is not None and self.section not in SECTIONS:
            raise WhowhenError(
                f"attributor {self.name!r}: report section {self.section!r} is not one of "
                f"{', '.join(SECTIONS)}",
                field="attribution.attributors",
            )


@dataclass(frozen=True)
class LLMProtocol:
    """One way of asking a model where a run failed: `converse(attributor, trajectory,
    modes)` is a generator per run that yields questions and returns the verdict (see
    `llm.drive`)."""

    name: str
    converse: Callable[..., Conversation]


ATTRIBUTORS: Registry[AttributorKind] = Registry(
    "attributor",
    "whowhen.attributors",
    "attribution.attributors",
    builtins=(
        "whowhen.attribution.baselines",
        "whowhen.attribution.shortcuts",
        "whowhen.attribution.heuristics",
        "whowhen.attribution.oracle",
        "whowhen.attribution.tracer",
    ),
    entry=AttributorKind,
)
PROTOCOLS: Registry[LLMProtocol] = Registry(
    "LLM protocol",
    "whowhen.protocols",
    "attribution.llm.protocol",
    builtins=("whowhen.attribution.llm_protocols",),
    entry=LLMProtocol,
)


def in_section(section: str) -> list[str]:
    """The attributors whose rows go in report table `section`, in registration order."""
    return [name for name, kind in ATTRIBUTORS.items() if kind.section == section]
