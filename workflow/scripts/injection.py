"""Snakemake script for the injection stage: all logic lives in the whowhen package."""

from whowhen.injection.stage import stage
from whowhen.workflow import run_stage

run_stage(snakemake, stage)
