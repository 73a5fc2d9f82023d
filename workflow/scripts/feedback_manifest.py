"""Snakemake script for the feedback manifest: all logic lives in the whowhen package."""

from whowhen.feedback.stage import manifest_stage
from whowhen.workflow import run_stage

run_stage(snakemake, manifest_stage)
