-- Table 1: the labelled items per modality, task category, topology, system, benchmark,
-- dataset (benchmark or benchmark/subset, as in accuracy.sql: the built benchmarks and each
-- import) and label source, with an 'all' total row. Long format: one row per (dimension,
-- value). share: of all labelled items, so each dimension sums to 1. Lengths are per item:
-- steps (every recorded step) and agent steps (those an attributor may name: `candidates`,
-- whowhen.attribution.baselines.agent_steps); n_agents: distinct actors among agent steps.
-- Tables: labels, runs, steps (run_id), candidates (run_id, actor).
WITH step_counts AS (
    SELECT run_id, count(*) AS n_steps FROM steps GROUP BY run_id
), agent_counts AS (
    SELECT run_id, count(*) AS n_agent_steps, count(DISTINCT actor) AS n_agents
    FROM candidates GROUP BY run_id
), items AS (
    SELECT l.split,
           coalesce(s.n_steps, 0) AS n_steps,
           coalesce(a.n_agent_steps, 0) AS n_agent_steps,
           coalesce(a.n_agents, 0) AS n_agents,
           r.modality,
           coalesce(r.category, '(none)') AS category,
           r.topology,
           r.system,
           r.benchmark,
           CASE WHEN r.subset IS NULL THEN r.benchmark ELSE r.benchmark || '/' || r.subset END
               AS dataset,
           l.source
    FROM labels AS l
    JOIN runs AS r USING (run_id)
    LEFT JOIN step_counts AS s USING (run_id)
    LEFT JOIN agent_counts AS a USING (run_id)
), long AS (
    UNPIVOT items
    ON modality, category, topology, system, benchmark, dataset, source
    INTO NAME dimension VALUE value
    UNION ALL
    SELECT split, n_steps, n_agent_steps, n_agents, 'all' AS dimension, 'all' AS value
    FROM items
)
SELECT dimension, value,
       count(*)                                  AS items,
       count(*) FILTER (WHERE split = 'train')   AS train,
       count(*) FILTER (WHERE split = 'dev')     AS dev,
       count(*) FILTER (WHERE split = 'test')    AS test,
       count(*) / (SELECT count(*) FROM items)   AS share,
       avg(n_steps)                              AS steps_mean,
       avg(n_agent_steps)                        AS agent_steps_mean,
       median(n_agent_steps)::DOUBLE             AS agent_steps_median,
       max(n_agent_steps)                        AS agent_steps_max,
       avg(n_agents)                             AS n_agents_mean
FROM long
GROUP BY dimension, value
ORDER BY list_position(['modality', 'category', 'topology', 'system', 'benchmark', 'dataset',
                        'source', 'all'], dimension),
         items DESC, value
