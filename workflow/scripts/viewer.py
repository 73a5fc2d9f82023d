"""Snakemake script for the trajectory viewer: all logic lives in the whowhen package."""

from whowhen.workflow import run_stage

run_stage(snakemake, "viewer")
