"""One attributor factory: a configured attributor's name -> a function (runs, steps) ->
predictions, shared by the attribution stage (on a dataset) and the feedback stage (on
failed reruns): the LLM attributors the config lists (a protocol with its model client),
every other name through the attributor registry (`kinds.ATTRIBUTORS`).
"""

from __future__ import annotations

import logging
from typing import Any

import polars as pl

from whowhen.attribution.kinds import ATTRIBUTORS, Attributor, AttributorContext
from whowhen.attribution.llm import LLMAttributor
from whowhen.attribution.llm_protocols import attribute_llm
from whowhen.defaults import filled
from whowhen.models import make_runner
from whowhen.taxonomy import load_taxonomy

log = logging.getLogger(__name__)


def llm_attributors(attribution_cfg: dict) -> dict[str, LLMAttributor]:
    """The configured LLM attributors by name (each entry filled from the config schema's
    defaults)."""
    out = {}
    for item in filled("attribution", attribution_cfg)["llm"]:
        out[item["name"]] = LLMAttributor(
            item["name"],
            item["model"],
            item["protocol"],
            item["with_gold_answer"],
            item["max_step_chars"],
            item["with_media"],
        )
    return out


def llm_runner(spec: LLMAttributor, params: dict) -> Attributor:
    """An LLM attributor with its model client (cache, usage, cost) and the taxonomy's modes."""
    client = make_runner(spec.model, params["llm"], params["models"])
    modes = [m.id for m in load_taxonomy(params["taxonomy"]).modes]

    def run(runs: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
        predictions = attribute_llm(runs, steps, spec, client, modes)
        log.info("%s: model calls %s", spec.name, client.stats.as_dict())
        return predictions

    return run


class Attributors:
    """The attributors one config names, each built on demand: the LLM attributors it lists
    (read once) by name, every other name through the registry. `params` holds the config
    sections attribution, llm, models, taxonomy (file), benchmarks, seed and replay."""

    def __init__(
        self,
        params: dict[str, Any],
        tracer_model: str | None = None,
        labels: pl.DataFrame | None = None,
    ) -> None:
        self.params = params
        self.context = AttributorContext(params, tracer_model, labels)
        self.llm = llm_attributors(params["attribution"])

    def names(self) -> list[str]:
        """Every attributor the config names: `attribution.attributors`, then the LLM ones."""
        return [*self.params["attribution"]["attributors"], *self.llm]

    def make(self, name: str) -> Attributor:
        """Attributor `name`, ready to run; an unknown name is one line naming the known."""
        if name in self.llm:
            return llm_runner(self.llm[name], self.params)
        return ATTRIBUTORS.get(name).make(self.context)


def make_attributor(
    name: str,
    params: dict[str, Any],
    tracer_model: str | None = None,
    labels: pl.DataFrame | None = None,
) -> Attributor:
    """The configured attributor `name`, as the attribution stage runs it on a dataset and
    the feedback stage on failed reruns (see `Attributors`)."""
    return Attributors(params, tracer_model, labels).make(name)
