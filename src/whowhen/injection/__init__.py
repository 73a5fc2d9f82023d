"""Injection: the generic machinery that plants one taxonomy-grounded error in a
successful run. `slips` (generic slip helpers the benchmarks' operators use), `operators`
(the operator registry over every benchmark's operators, and the slip model), `plan`
(which step, which mode, which replacement), `llm_generator` (a model writes the
replacement) and `stage` (the Snakemake edge)."""
