-- Step-tolerance curves: the share of trajectories whose predicted step lies within ±k of
-- the gold step, k = 0..$max_k (k = 0 is exact step accuracy), per attributor, with Wilson
-- 95% intervals. An unparsed or missing prediction is never within any tolerance.
-- Tables: items (scored_items).
WITH s AS (
    SELECT * FROM items
    UNION ALL SELECT * REPLACE ('all' AS split) FROM items
)
SELECT attributor, split, k::INTEGER AS k, count(*) AS n,
       avg(coalesce(abs_err <= k, false)::INT) AS step_acc,
       wilson_lo(sum(coalesce(abs_err <= k, false)::INT), count(*)) AS step_acc_lo,
       wilson_hi(sum(coalesce(abs_err <= k, false)::INT), count(*)) AS step_acc_hi
FROM s, range(0, $max_k + 1) AS t(k)
GROUP BY ALL
ORDER BY attributor, split, k
