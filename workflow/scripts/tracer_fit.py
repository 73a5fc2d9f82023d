"""Snakemake script: fit tracer-lite on the built train split (logic in the package)."""

from whowhen.attribution.tracer import fit_stage
from whowhen.workflow import run_stage

run_stage(snakemake, fit_stage)
