"""Trajectories from outside the pipeline: Who&When (`who_and_when`) and a user's own
JSONL or Parquet logs (`generic`), read into the pipeline's tables with every bad record
named (`common`); `stage` is the Snakemake edge."""
