-- Attribution accuracy per attributor, dataset group (benchmark or benchmark/subset) and
-- split, with 'all' roll-ups. Every labelled run counts for every attributor: a run with
-- no prediction row of that attributor is scored wrong (`missing` counts them), so a
-- partial predictions file cannot look better than a complete one; $covered_only scores
-- only the runs it predicted (`missing` still says how many were left out). `unmatched`:
-- the attributor's prediction rows whose run has no label (attributor-wide, repeated on
-- each of its rows). Exact scoring: agent names equal, step indices equal (a missing or
-- unusable prediction is wrong); step within ±1 and ±$tolerance; Wilson 95% intervals.
-- The *_substring columns reproduce the official Who&When scorer for comparison with
-- published numbers: it takes the first word of the predicted agent and counts a hit when
-- the gold agent is a substring of it, and when the gold step is a substring of the
-- predicted step ("1" matches "10").
-- Tables: labels, predictions, runs (registered by whowhen.analysis.scores).
WITH labelled AS (
    SELECT
        l.run_id, l.split, l.decisive_agent, l.decisive_step,
        CASE WHEN r.subset IS NULL THEN r.benchmark ELSE r.benchmark || '/' || r.subset END
            AS dataset
    FROM labels AS l
    JOIN runs AS r USING (run_id)
),
paired AS (  -- every (attributor, labelled run), its prediction when there is one
    SELECT a.attributor, l.*, p.agent, p.step, p.cost_usd, p.run_id IS NULL AS missing
    FROM (SELECT DISTINCT attributor FROM predictions) AS a
    CROSS JOIN labelled AS l
    LEFT JOIN predictions AS p ON p.attributor = a.attributor AND p.run_id = l.run_id
),
unmatched AS (
    SELECT attributor,
           count(*) FILTER (WHERE run_id NOT IN (SELECT run_id FROM labelled)) AS unmatched
    FROM predictions
    GROUP BY attributor
),
scored AS (
    SELECT
        attributor, dataset, split, missing,
        NOT (missing AND $covered_only)                               AS counted,
        coalesce(agent = decisive_agent, false)                       AS agent_ok,
        coalesce(step = decisive_step, false)                         AS step_ok,
        coalesce(abs(step - decisive_step) <= 1, false)               AS step_ok_1,
        coalesce(abs(step - decisive_step) <= $tolerance, false)      AS step_ok_k,
        coalesce(contains(regexp_extract(agent, '\w+'), decisive_agent), false)
            AS agent_ok_substring,
        coalesce(contains(CAST(step AS VARCHAR), CAST(decisive_step AS VARCHAR)), false)
            AS step_ok_substring,
        cost_usd
    FROM paired
),
grouped AS (
    SELECT attributor, coalesce(dataset, 'all') AS dataset, coalesce(split, 'all') AS split,
           count(*) FILTER (WHERE counted) AS n,
           count(*) FILTER (WHERE missing) AS missing,
           avg(agent_ok::INT) FILTER (WHERE counted) AS agent_acc,
           avg(step_ok::INT) FILTER (WHERE counted) AS step_acc,
           avg(step_ok_1::INT) FILTER (WHERE counted) AS step_acc_pm1,
           avg(step_ok_k::INT) FILTER (WHERE counted) AS step_acc_pmk,
           avg(agent_ok_substring::INT) FILTER (WHERE counted) AS agent_acc_substring,
           avg(step_ok_substring::INT) FILTER (WHERE counted) AS step_acc_substring,
           sum(cost_usd) AS cost_usd
    FROM scored
    GROUP BY GROUPING SETS ((attributor, dataset, split), (attributor, dataset),
                            (attributor, split), (attributor))
)
SELECT attributor, dataset, split, n, $tolerance AS tolerance, agent_acc, step_acc,
       step_acc_pm1, step_acc_pmk, agent_acc_substring, step_acc_substring, cost_usd,
       -- Wilson 95% intervals (sql/_macros.sql)
       wilson_lo(step_acc * n, n) AS step_acc_lo, wilson_hi(step_acc * n, n) AS step_acc_hi,
       wilson_lo(agent_acc * n, n) AS agent_acc_lo, wilson_hi(agent_acc * n, n) AS agent_acc_hi,
       missing, coalesce(u.unmatched, 0) AS unmatched
FROM grouped
LEFT JOIN unmatched AS u USING (attributor)
ORDER BY attributor, dataset, split
