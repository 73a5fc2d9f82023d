-- Attribution accuracy per attributor and split (plus 'all'), with exact agent/step match,
-- step within ±1 and ±$tolerance, and Wilson 95% intervals. A missing prediction is wrong.
-- Tables: labels, predictions (registered by whowhen.analysis.scores).
WITH scored AS (
    SELECT
        p.attributor,
        l.split,
        coalesce(p.agent = l.decisive_agent, false)                   AS agent_ok,
        coalesce(p.step = l.decisive_step, false)                     AS step_ok,
        coalesce(abs(p.step - l.decisive_step) <= 1, false)           AS step_ok_1,
        coalesce(abs(p.step - l.decisive_step) <= $tolerance, false)  AS step_ok_k,
        p.cost_usd
    FROM labels AS l
    JOIN predictions AS p USING (run_id)
),
grouped AS (
    SELECT attributor, coalesce(split, 'all') AS split, count(*) AS n,
           avg(agent_ok::INT) AS agent_acc, avg(step_ok::INT) AS step_acc,
           avg(step_ok_1::INT) AS step_acc_pm1, avg(step_ok_k::INT) AS step_acc_pmk,
           sum(cost_usd) AS cost_usd
    FROM scored
    GROUP BY GROUPING SETS ((attributor, split), (attributor))
)
SELECT attributor, split, n, $tolerance AS tolerance, agent_acc, step_acc, step_acc_pm1,
       step_acc_pmk, cost_usd,
       -- Wilson score interval (z = 1.96) for the step accuracy
       (step_acc + 1.9208 / n - 1.96 * sqrt(step_acc * (1 - step_acc) / n + 0.9604 / (n * n)))
           / (1 + 3.8416 / n) AS step_acc_lo,
       (step_acc + 1.9208 / n + 1.96 * sqrt(step_acc * (1 - step_acc) / n + 0.9604 / (n * n)))
           / (1 + 3.8416 / n) AS step_acc_hi,
       (agent_acc + 1.9208 / n - 1.96 * sqrt(agent_acc * (1 - agent_acc) / n + 0.9604 / (n * n)))
           / (1 + 3.8416 / n) AS agent_acc_lo,
       (agent_acc + 1.9208 / n + 1.96 * sqrt(agent_acc * (1 - agent_acc) / n + 0.9604 / (n * n)))
           / (1 + 3.8416 / n) AS agent_acc_hi
FROM grouped
ORDER BY attributor, split
