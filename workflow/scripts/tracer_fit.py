"""Snakemake script: fit tracer-lite on the built train split (logic in the package)."""

from whowhen.attribution.stage import tracer_fit
from whowhen.workflow import run_stage

run_stage(snakemake, tracer_fit)
