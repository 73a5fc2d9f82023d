-- Injection funnel per benchmark, system and mode: how many injections flipped the run,
-- were recovered by the system, or were invalid; and how faithful the replayed prefix was.
SELECT benchmark, system, mode,
       count(*)                                          AS injections,
       count(*) FILTER (WHERE status = 'flipped')        AS flipped,
       count(*) FILTER (WHERE status = 'recovered')      AS recovered,
       count(*) FILTER (WHERE status = 'invalid')        AS invalid,
       avg(prefix_exact::INT)                            AS prefix_exact_rate
FROM continuations
GROUP BY ALL
ORDER BY benchmark, system, mode
