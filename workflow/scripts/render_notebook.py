"""Snakemake script for one report notebook (not named notebook.py: nbconvert imports a
module `notebook`, and a script of that name would shadow it)."""

from whowhen.analysis.render_stage import notebook_stage
from whowhen.workflow import run_stage

run_stage(snakemake, notebook_stage)
