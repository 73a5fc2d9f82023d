"""Snakemake script for the rollouts stage: all logic lives in the whowhen package."""

from whowhen.rollouts import stage
from whowhen.workflow import run_stage

run_stage(snakemake, stage)
