"""Snakemake script for the taxonomy stage: all logic lives in the whowhen package."""

from whowhen.taxonomy_stage import stage
from whowhen.workflow import run_stage

run_stage(snakemake, stage)
