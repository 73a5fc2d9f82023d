-- Warm start against re-rollout (the prefix regenerated, as prior work did), per benchmark
-- and system and overall: warm start's prefix fidelity beside the re-rollout's prefix drift
-- and how often its label differs (another status, or a flipped run whose drifted prefix
-- fails even without the injection, so the injected step is not decisive).
SELECT coalesce(benchmark, 'all') AS benchmark, coalesce(system, 'all') AS system,
       count(*)                                                  AS injections,
       avg(prefix_exact::INT)                                    AS warm_prefix_exact,
       count(rerollout_status)                                   AS rerollouts,
       avg((NOT rerollout_prefix_exact)::INT)                    AS rerollout_drift,
       avg(((rerollout_status <> status) OR rerollout_label_wrong)::INT)
                                                                 AS rerollout_label_differs,
       -- Wilson 95% intervals (sql/_macros.sql); each rate's n is its non-null rows
       wilson_lo(sum(prefix_exact::INT), count(prefix_exact))   AS warm_prefix_exact_lo,
       wilson_hi(sum(prefix_exact::INT), count(prefix_exact))   AS warm_prefix_exact_hi,
       wilson_lo(sum((NOT rerollout_prefix_exact)::INT), count(rerollout_prefix_exact))
                                                                 AS rerollout_drift_lo,
       wilson_hi(sum((NOT rerollout_prefix_exact)::INT), count(rerollout_prefix_exact))
                                                                 AS rerollout_drift_hi,
       wilson_lo(sum(((rerollout_status <> status) OR rerollout_label_wrong)::INT),
                 count((rerollout_status <> status) OR rerollout_label_wrong))
                                                                 AS rerollout_label_differs_lo,
       wilson_hi(sum(((rerollout_status <> status) OR rerollout_label_wrong)::INT),
                 count((rerollout_status <> status) OR rerollout_label_wrong))
                                                                 AS rerollout_label_differs_hi
FROM continuations
GROUP BY GROUPING SETS ((benchmark, system), ())
ORDER BY benchmark = 'all', benchmark, system
