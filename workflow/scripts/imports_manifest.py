"""Snakemake script for the imports manifest: all logic lives in the whowhen package."""

from whowhen.workflow import run_stage

run_stage(snakemake, "imports_manifest")
