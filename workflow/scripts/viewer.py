"""Snakemake script for the trajectory viewer: all logic lives in the whowhen package."""

from whowhen.analysis.render_stage import viewer_stage
from whowhen.workflow import run_stage

run_stage(snakemake, viewer_stage)
