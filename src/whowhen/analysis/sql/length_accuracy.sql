-- Accuracy against trajectory length: agent and step accuracy per attributor and agent-step
-- length bin (bins from scored_items: 1-4, 5-9, 10-19, 20+ by default), Wilson 95%.
-- bin_start orders the bins numerically.
-- Tables: items (scored_items).
WITH s AS (
    SELECT * FROM items
    UNION ALL SELECT * REPLACE ('all' AS split) FROM items
)
SELECT attributor, split, length_bin, min(n_agent) AS bin_start, count(*) AS n,
       count(DISTINCT run_id) AS n_items,
       avg(agent_ok::INT) AS agent_acc,
       wilson_lo(sum(agent_ok::INT), count(*)) AS agent_acc_lo,
       wilson_hi(sum(agent_ok::INT), count(*)) AS agent_acc_hi,
       avg(step_ok::INT) AS step_acc,
       wilson_lo(sum(step_ok::INT), count(*)) AS step_acc_lo,
       wilson_hi(sum(step_ok::INT), count(*)) AS step_acc_hi
FROM s
GROUP BY ALL
ORDER BY attributor, split, bin_start
