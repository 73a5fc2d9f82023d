-- Injection funnel per benchmark, system and mode: how many injections flipped the run,
-- were recovered by the system, or were invalid; and how faithful the replayed prefix was.
SELECT benchmark, system, mode,
       count(*)                                          AS injections,
       count(*) FILTER (WHERE status = 'flipped')        AS flipped,
       count(*) FILTER (WHERE status = 'recovered')      AS recovered,
       count(*) FILTER (WHERE status = 'invalid')        AS invalid,
       -- flipped, but the parent already held a recovered (natural) error before the
       -- injected step: the label names the injected step, the earliest error is earlier
       count(*) FILTER (WHERE status = 'flipped' AND earlier_error_step IS NOT NULL)
                                                         AS flipped_after_recovery,
       -- flipped, but not labelled: a model-played system failed from the same prefix
       -- without the injection in too many control continuations
       count(*) FILTER (WHERE status = 'flipped' AND NOT controls_passed)
                                                         AS flipped_not_controlled,
       avg(prefix_exact::INT)                            AS prefix_exact_rate
FROM continuations
GROUP BY ALL
ORDER BY benchmark, system, mode
