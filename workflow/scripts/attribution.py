"""Snakemake script for the attribution stage: all logic lives in the whowhen package."""

from whowhen.attribution.stage import stage
from whowhen.workflow import run_stage

run_stage(snakemake, stage)
