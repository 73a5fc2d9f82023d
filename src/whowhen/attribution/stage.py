"""Attribution stage: one prediction per (trajectory, attributor) over one dataset, and
the tracer-lite fit every dataset's predictions share."""

from __future__ import annotations

import logging
import time

from whowhen.attribution import tracer
from whowhen.attribution.factory import make_attributor
from whowhen.schema import LABELS, PREDICTIONS, RUNS, STEPS, read_table, write_table

log = logging.getLogger(__name__)


def stage(params: dict, inputs: dict, outputs: dict, wildcards: dict) -> None:
    """Snakemake edge: one attributor over one dataset (built or imported)."""
    runs = read_table(inputs["runs"], RUNS)
    steps = read_table(inputs["steps"], STEPS)
    labels = read_table(inputs["labels"], LABELS)
    name = wildcards["attributor"]
    run = make_attributor(name, params, inputs.get("tracer_model") or None, labels)
    write_table(run(runs, steps), PREDICTIONS, outputs["predictions"])


def tracer_fit(params: dict, inputs: dict, outputs: dict, wildcards: dict) -> None:
    """Snakemake edge: fit tracer-lite on the built dataset's train split and save it, so
    every dataset (imports too) is predicted by the same model."""
    started = time.perf_counter()
    model = tracer.fit(
        read_table(inputs["runs"], RUNS),
        read_table(inputs["steps"], STEPS),
        read_table(inputs["labels"], LABELS),
        tracer.TracerConfig(**(params.get("tracer") or {})),
    )
    model.save(outputs["model"])
    log.info("%s: fitted in %.1f s", tracer.NAME, time.perf_counter() - started)
