-- Cross-modality accuracy: agent, step and mode accuracy per attributor and modality, with
-- 'all' roll-ups over modalities and over splits. Wilson 95% intervals over trajectories.
-- mode_acc counts only items whose gold mode is known (mode_n of them), and is NULL for an
-- attributor that never predicts a mode.
-- Tables: items (one row per labelled trajectory and attributor, whowhen.analysis.items
-- .scored_items).
WITH s AS (
    SELECT *, attributor IN (SELECT attributor FROM items WHERE p_mode IS NOT NULL) AS predicts
    FROM (SELECT * FROM items UNION ALL SELECT * REPLACE ('all' AS split) FROM items)
)
SELECT attributor, any_value(protocol) AS protocol, any_value(family) AS family,
       coalesce(modality, 'all') AS modality, split,
       count(*) AS n,
       avg(agent_ok::INT) AS agent_acc,
       wilson_lo(sum(agent_ok::INT), count(*)) AS agent_acc_lo,
       wilson_hi(sum(agent_ok::INT), count(*)) AS agent_acc_hi,
       avg(step_ok::INT) AS step_acc,
       wilson_lo(sum(step_ok::INT), count(*)) AS step_acc_lo,
       wilson_hi(sum(step_ok::INT), count(*)) AS step_acc_hi,
       count(*) FILTER (WHERE mode_known) AS mode_n,
       avg(mode_ok::INT) FILTER (WHERE mode_known AND predicts) AS mode_acc,
       wilson_lo(sum(mode_ok::INT) FILTER (WHERE mode_known AND predicts),
                 count(*) FILTER (WHERE mode_known AND predicts)) AS mode_acc_lo,
       wilson_hi(sum(mode_ok::INT) FILTER (WHERE mode_known AND predicts),
                 count(*) FILTER (WHERE mode_known AND predicts)) AS mode_acc_hi,
       count(*) FILTER (WHERE p_mode IS NOT NULL) AS mode_predicted
FROM s
GROUP BY GROUPING SETS ((attributor, modality, split), (attributor, split))
ORDER BY attributor, modality = 'all', modality, split
