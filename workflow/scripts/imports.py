"""Snakemake script for the imports stage: all logic lives in the whowhen package."""

from whowhen.imports.stage import stage
from whowhen.workflow import run_stage

run_stage(snakemake, stage)
