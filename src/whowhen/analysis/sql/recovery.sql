-- Recovery by mode over every benchmark and system: how often the system corrected an
-- injected error of that mode (a verifier, tester or reviewer caught it) instead of failing.
SELECT mode,
       count(*) FILTER (WHERE status <> 'invalid')               AS valid,
       count(*) FILTER (WHERE status = 'flipped')                AS flipped,
       count(*) FILTER (WHERE status = 'recovered')              AS recovered,
       count(*) FILTER (WHERE status = 'recovered')
         / nullif(count(*) FILTER (WHERE status <> 'invalid'), 0) AS recovery_rate
FROM continuations
GROUP BY mode
ORDER BY mode
