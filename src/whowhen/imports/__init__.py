"""Trajectories from outside the pipeline: Who&When (`who_and_when`), a user's own JSONL
or Parquet logs (`generic`), OpenTelemetry traces (`otel`) and Inspect AI logs
(`inspect_log`), each a format registered in `formats.FORMATS`, read into the pipeline's
tables with every bad record named (`common`); `stage` is the Snakemake edge."""
