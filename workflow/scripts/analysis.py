"""Snakemake script for the analysis stage: all logic lives in the whowhen package."""

from whowhen.analysis.stage import stage
from whowhen.workflow import run_stage

run_stage(snakemake, stage)
