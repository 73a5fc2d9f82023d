-- Protocol comparison: accuracy and cost per (protocol, model family), pooled over the
-- attributors that share them (one per pair in the default config). n counts predictions,
-- n_items trajectories; with several attributors per group the Wilson interval treats
-- their answers as independent (attribution_metrics.csv has the clustered bootstrap).
-- Baselines form the protocol 'baseline'.
-- Tables: items (scored_items).
WITH s AS (
    SELECT * FROM items
    UNION ALL SELECT * REPLACE ('all' AS split) FROM items
)
SELECT protocol, family, split,
       count(DISTINCT attributor) AS attributors,
       count(*) AS n, count(DISTINCT run_id) AS n_items,
       avg(agent_ok::INT) AS agent_acc,
       wilson_lo(sum(agent_ok::INT), count(*)) AS agent_acc_lo,
       wilson_hi(sum(agent_ok::INT), count(*)) AS agent_acc_hi,
       avg(step_ok::INT) AS step_acc,
       wilson_lo(sum(step_ok::INT), count(*)) AS step_acc_lo,
       wilson_hi(sum(step_ok::INT), count(*)) AS step_acc_hi,
       avg(joint_ok::INT) AS joint_acc,
       avg(within_1::INT) AS step_acc_pm1,
       avg((NOT usable)::INT) AS parse_fail_rate,
       coalesce(avg(cost) FILTER (WHERE has_row), 0.0) AS cost_per_traj,
       coalesce(avg(tokens) FILTER (WHERE has_row), 0.0) AS tokens_per_traj,
       coalesce(avg(calls) FILTER (WHERE has_row), 0.0) AS calls_per_traj
FROM s
GROUP BY protocol, family, split
ORDER BY protocol = 'baseline', protocol, family, split
