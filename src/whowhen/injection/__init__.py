"""Injection: the generic machinery that plants one taxonomy-grounded error in a
successful run: `plan` (which step, which mode, which replacement), `llm_generator` (a
model writes the replacement) and `stage` (the Snakemake edge). The pieces it builds on
sit in lower layers, so the layers import one way: `whowhen.slips` (generic slip helpers
the benchmarks' operators use) and `whowhen.natural_slips` below the benchmarks,
`whowhen.operators` (the operator registry and the slip models) beside the registry."""
