"""One attributor factory: a configured attributor's name -> a function (runs, steps) ->
predictions, shared by the attribution stage (on a dataset) and the feedback stage (on
failed reruns): offline attributors, LLM protocols with their model client, tracer-lite
with its fitted model, and the counterfactual oracle.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import polars as pl

from whowhen.attribution.llm import LLMAttributor
from whowhen.attribution.llm_protocols import attribute_llm
from whowhen.attribution.offline import attribute
from whowhen.attribution.oracle import NAME as ORACLE
from whowhen.attribution.oracle import oracle_attribute
from whowhen.attribution.tracer import NAME as TRACER
from whowhen.attribution.tracer import TracerModel
from whowhen.attribution.tracer import predict as tracer_predict
from whowhen.defaults import filled
from whowhen.errors import WhowhenError
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


Attributor = Callable[[pl.DataFrame, pl.DataFrame], pl.DataFrame]
"""(runs, steps) -> PREDICTIONS: one configured attributor, ready to run."""


def llm_runner(spec: LLMAttributor, params: dict) -> Attributor:
    """An LLM attributor with its model client (cache, usage, cost) and the taxonomy's modes."""
    client = make_runner(spec.model, params["llm"], params["models"])
    modes = [m.id for m in load_taxonomy(params["taxonomy"]).modes]

    def run(runs: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
        predictions = attribute_llm(runs, steps, spec, client, modes)
        log.info("%s: model calls %s", spec.name, client.stats.as_dict())
        return predictions

    return run


def make_attributor(
    name: str,
    params: dict,
    tracer_model: str | None = None,
    labels: pl.DataFrame | None = None,
) -> Attributor:
    """The configured attributor `name`, as the attribution stage runs it on a dataset and
    the feedback stage on failed reruns. `params` holds the config sections attribution,
    llm, models, taxonomy (file), benchmarks, seed and replay."""
    llm = llm_attributors(params["attribution"])
    if name in llm:
        return llm_runner(llm[name], params)
    if name == ORACLE:
        return lambda runs, steps: oracle_attribute(
            runs,
            steps,
            params["benchmarks"],
            params["seed"],
            params["replay"]["max_probes"],
            params["replay"]["max_steps"],
        )
    if name == TRACER:
        if tracer_model is None:
            raise WhowhenError("tracer_lite needs its fitted model", field="tracer_model")
        model = TracerModel.load(tracer_model)
        return lambda runs, steps: tracer_predict(model, runs, steps)
    seed = params["attribution"]["seed"]
    return lambda runs, steps: attribute(runs, steps, name, seed, labels)
