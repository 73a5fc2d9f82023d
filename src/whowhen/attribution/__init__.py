"""Attributors: given a failed run, which agent made the decisive error and at which step.

`offline` (baselines, shortcut predictors, heuristics, by name), `llm` and
`llm_protocols` (a model asked all at once, step by step, by binary search or hybrid),
`tracer` (a small trained model), `oracle` (counterfactual replay), `factory` (a
configured name -> a ready attributor) and `stage` (the Snakemake edges)."""
