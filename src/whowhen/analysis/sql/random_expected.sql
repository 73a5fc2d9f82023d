-- Expected accuracy of the uniform random baseline, computed analytically (no sampling):
-- per item, P(agent right) = (gold agent's candidate steps) / (candidate steps) and
-- P(step right) = 1 / (candidate steps) when the gold step is a candidate, else 0.
-- Averaged per dataset group and split, with 'all' roll-ups.
-- Tables: labels, runs, candidates (the steps an attributor may name).
WITH per_run AS (
    SELECT run_id, count(*) AS n_steps FROM candidates GROUP BY run_id
),
per_item AS (
    SELECT
        CASE WHEN r.subset IS NULL THEN r.benchmark ELSE r.benchmark || '/' || r.subset END
            AS dataset,
        l.split,
        coalesce((SELECT count(*) FROM candidates c
                  WHERE c.run_id = l.run_id AND c.actor = l.decisive_agent), 0)
            / coalesce(pr.n_steps, 1) AS p_agent,
        CASE WHEN EXISTS (SELECT 1 FROM candidates c
                          WHERE c.run_id = l.run_id AND c.step = l.decisive_step)
             THEN 1.0 / pr.n_steps ELSE 0.0 END AS p_step
    FROM labels AS l
    JOIN runs AS r USING (run_id)
    LEFT JOIN per_run AS pr USING (run_id)
)
SELECT coalesce(dataset, 'all') AS dataset, coalesce(split, 'all') AS split, count(*) AS n,
       avg(p_agent) AS expected_agent_acc, avg(p_step) AS expected_step_acc
FROM per_item
GROUP BY GROUPING SETS ((dataset, split), (dataset), (split), ())
ORDER BY dataset, split
