-- Recovery by mode over every benchmark and system: how often the system corrected an
-- injected error of that mode (a verifier, tester or reviewer caught it) instead of failing.
SELECT mode,
       count(*) FILTER (WHERE status <> 'invalid')               AS valid,
       count(*) FILTER (WHERE status = 'flipped')                AS flipped,
       count(*) FILTER (WHERE status = 'recovered')              AS recovered,
       count(*) FILTER (WHERE status = 'recovered')
         / nullif(count(*) FILTER (WHERE status <> 'invalid'), 0) AS recovery_rate,
       -- Wilson 95% interval of recovery_rate over the valid injections (sql/_macros.sql)
       wilson_lo(count(*) FILTER (WHERE status = 'recovered'),
                 count(*) FILTER (WHERE status <> 'invalid'))    AS recovery_lo,
       wilson_hi(count(*) FILTER (WHERE status = 'recovered'),
                 count(*) FILTER (WHERE status <> 'invalid'))    AS recovery_hi
FROM continuations
GROUP BY mode
ORDER BY mode
