-- Trajectory length per labelled item, as quantiles per group: `steps` (every recorded step)
-- and `agent_steps` (the steps an attributor may name: `candidates`). Groups (long format):
-- 'collection' ('built: <modality>' for the built dataset, 'imported: <dataset>' for each
-- import: what the figure draws), modality, topology, system, dataset, and 'all'. Quantiles are continuous
-- (interpolated), so a median of an even count is the mean of the two middle lengths.
-- Tables: labels, runs, steps (run_id), candidates (run_id).
WITH step_counts AS (
    SELECT run_id, count(*) AS n FROM steps GROUP BY run_id
), agent_counts AS (
    SELECT run_id, count(*) AS n FROM candidates GROUP BY run_id
), items AS (
    SELECT coalesce(s.n, 0) AS steps, coalesce(a.n, 0) AS agent_steps,
           CASE WHEN r.subset IS NULL THEN r.benchmark ELSE r.benchmark || '/' || r.subset END
               AS dataset,
           r.modality, r.topology, r.system, r.origin
    FROM labels AS l
    JOIN runs AS r USING (run_id)
    LEFT JOIN step_counts AS s USING (run_id)
    LEFT JOIN agent_counts AS a USING (run_id)
), grouped AS (
    SELECT steps, agent_steps, modality, topology, system, dataset,
           CASE WHEN origin = 'imported' THEN 'imported: ' || dataset
                ELSE 'built: ' || modality END AS collection,
           'all' AS "all"
    FROM items
), long AS (
    UNPIVOT (UNPIVOT grouped ON collection, modality, topology, system, dataset, "all"
             INTO NAME dimension VALUE value)
    ON steps, agent_steps INTO NAME measure VALUE length
)
SELECT dimension, value, measure,
       count(*)                         AS runs,
       min(length)                      AS min,
       quantile_cont(length, 0.10)      AS p10,
       quantile_cont(length, 0.25)      AS p25,
       quantile_cont(length, 0.50)      AS median,
       quantile_cont(length, 0.75)      AS p75,
       quantile_cont(length, 0.90)      AS p90,
       max(length)                      AS max,
       avg(length)                      AS mean
FROM long
GROUP BY dimension, value, measure
ORDER BY list_position(['collection', 'modality', 'topology', 'system', 'dataset', 'all'],
                       dimension),
         value, measure
