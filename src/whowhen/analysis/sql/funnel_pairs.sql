-- The injection funnel per benchmark and system (the funnel figure's bars): funnel.sql's
-- rows summed over modes, with the flip rate among valid injections (flipped / (flipped +
-- recovered)) and its Wilson 95% interval (sql/_macros.sql).
-- Tables: funnel (the output of funnel.sql).
SELECT benchmark, system,
       sum(injections)::BIGINT AS injections,
       sum(flipped)::BIGINT    AS flipped,
       sum(recovered)::BIGINT  AS recovered,
       sum(invalid)::BIGINT    AS invalid,
       sum(flipped) / nullif(sum(flipped) + sum(recovered), 0) AS flip_rate,
       wilson_lo(sum(flipped), sum(flipped) + sum(recovered))   AS flip_lo,
       wilson_hi(sum(flipped), sum(flipped) + sum(recovered))   AS flip_hi
FROM funnel
GROUP BY benchmark, system
ORDER BY benchmark, system
