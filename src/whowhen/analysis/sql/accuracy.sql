-- Attribution accuracy per attributor, dataset group (benchmark or benchmark/subset) and
-- split, with 'all' roll-ups. Exact scoring: agent names equal, step indices equal (a
-- missing prediction is wrong); step within ±1 and ±$tolerance; Wilson 95% intervals.
-- The *_substring columns reproduce the official Who&When scorer for comparison with
-- published numbers: it takes the first word of the predicted agent and counts a hit when
-- the gold agent is a substring of it, and when the gold step is a substring of the
-- predicted step ("1" matches "10").
-- Tables: labels, predictions, runs (registered by whowhen.analysis.scores).
WITH scored AS (
    SELECT
        p.attributor,
        CASE WHEN r.subset IS NULL THEN r.benchmark ELSE r.benchmark || '/' || r.subset END
            AS dataset,
        l.split,
        coalesce(p.agent = l.decisive_agent, false)                   AS agent_ok,
        coalesce(p.step = l.decisive_step, false)                     AS step_ok,
        coalesce(abs(p.step - l.decisive_step) <= 1, false)           AS step_ok_1,
        coalesce(abs(p.step - l.decisive_step) <= $tolerance, false)  AS step_ok_k,
        coalesce(contains(regexp_extract(p.agent, '\w+'), l.decisive_agent), false)
            AS agent_ok_substring,
        coalesce(contains(CAST(p.step AS VARCHAR), CAST(l.decisive_step AS VARCHAR)), false)
            AS step_ok_substring,
        p.cost_usd
    FROM labels AS l
    JOIN predictions AS p USING (run_id)
    JOIN runs AS r USING (run_id)
),
grouped AS (
    SELECT attributor, coalesce(dataset, 'all') AS dataset, coalesce(split, 'all') AS split,
           count(*) AS n,
           avg(agent_ok::INT) AS agent_acc, avg(step_ok::INT) AS step_acc,
           avg(step_ok_1::INT) AS step_acc_pm1, avg(step_ok_k::INT) AS step_acc_pmk,
           avg(agent_ok_substring::INT) AS agent_acc_substring,
           avg(step_ok_substring::INT) AS step_acc_substring,
           sum(cost_usd) AS cost_usd
    FROM scored
    GROUP BY GROUPING SETS ((attributor, dataset, split), (attributor, dataset),
                            (attributor, split), (attributor))
)
SELECT attributor, dataset, split, n, $tolerance AS tolerance, agent_acc, step_acc,
       step_acc_pm1, step_acc_pmk, agent_acc_substring, step_acc_substring, cost_usd,
       -- Wilson 95% intervals (sql/_macros.sql)
       wilson_lo(step_acc * n, n) AS step_acc_lo, wilson_hi(step_acc * n, n) AS step_acc_hi,
       wilson_lo(agent_acc * n, n) AS agent_acc_lo, wilson_hi(agent_acc * n, n) AS agent_acc_hi
FROM grouped
ORDER BY attributor, dataset, split
