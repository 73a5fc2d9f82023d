"""The benchmarks: one subpackage per benchmark (environment, tasks, scripted policies,
error operators, role prompts), found by `whowhen.registry`; `base` is what they share,
and `dataset_file` turns a local data file into a benchmark under any name."""
