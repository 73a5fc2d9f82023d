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
                                                                 AS rerollout_label_differs
FROM continuations
GROUP BY GROUPING SETS ((benchmark, system), ())
ORDER BY benchmark = 'all', benchmark, system
