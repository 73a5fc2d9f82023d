"""Snakemake script for the replay stage: all logic lives in the whowhen package."""

from whowhen.replay.stage import stage
from whowhen.workflow import run_stage

run_stage(snakemake, stage)
