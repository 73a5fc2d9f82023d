"""Snakemake script for the continuation stage: all logic lives in the whowhen package."""

from whowhen.continuation import stage
from whowhen.workflow import run_stage

run_stage(snakemake, stage)
