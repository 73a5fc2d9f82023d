"""Snakemake script for the rollouts stage: all logic lives in the whowhen package."""

from whowhen.workflow import run_stage

run_stage(snakemake, "rollouts")
