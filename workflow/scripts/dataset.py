"""Snakemake script for the dataset stage: all logic lives in the whowhen package."""

from whowhen.dataset.stage import stage
from whowhen.workflow import run_stage

run_stage(snakemake, stage)
