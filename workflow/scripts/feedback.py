"""Snakemake script for the feedback stage: all logic lives in the whowhen package."""

from whowhen.workflow import run_stage

run_stage(snakemake, "feedback")
