"""Snakemake script for the imports manifest: all logic lives in the whowhen package."""

from whowhen.imports.stage import manifest_stage
from whowhen.workflow import run_stage

run_stage(snakemake, manifest_stage)
