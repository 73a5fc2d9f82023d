"""Snakemake script for the feedback stage: all logic lives in the whowhen package."""

from whowhen.feedback.stage import stage
from whowhen.workflow import run_stage

run_stage(snakemake, stage)
