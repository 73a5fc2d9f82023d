-- Cost against performance per attributor: mean cost (USD) and tokens per trajectory beside
-- step and agent accuracy (Wilson 95%), with the attributor's protocol, model family and
-- whether its weights are open (NULL for the baselines, which call no model). `pareto`:
-- no other attributor of the same split is at most as costly and at least as accurate
-- (and strictly better in one), so it lies on the cost-performance frontier. The replay
-- oracle (protocol 'oracle') re-runs the environment: an upper bound, not an attributor of
-- logs, so it is never on the frontier nor allowed to dominate.
-- Tables: items (scored_items), attributors (attributor, protocol, family, open_weight).
WITH s AS (
    SELECT * FROM items
    UNION ALL SELECT * REPLACE ('all' AS split) FROM items
), per AS (
    SELECT attributor, split, count(*) AS n,
           avg(step_ok::INT) AS step_acc,
           wilson_lo(sum(step_ok::INT), count(*)) AS step_acc_lo,
           wilson_hi(sum(step_ok::INT), count(*)) AS step_acc_hi,
           avg(agent_ok::INT) AS agent_acc,
           coalesce(avg(cost) FILTER (WHERE has_row), 0.0) AS cost_per_traj,
           coalesce(avg(tokens) FILTER (WHERE has_row), 0.0) AS tokens_per_traj,
           coalesce(avg(calls) FILTER (WHERE has_row), 0.0) AS calls_per_traj
    FROM s
    GROUP BY ALL
)
SELECT p.attributor, a.protocol, a.family, a.open_weight, p.split, p.n,
       p.step_acc, p.step_acc_lo, p.step_acc_hi, p.agent_acc,
       p.cost_per_traj, p.tokens_per_traj, p.calls_per_traj,
       coalesce(a.protocol, '') <> 'oracle' AND NOT EXISTS (
           SELECT 1 FROM per AS q LEFT JOIN attributors AS qa USING (attributor)
           WHERE q.split = p.split AND q.attributor <> p.attributor
             AND coalesce(qa.protocol, '') <> 'oracle'
             AND q.cost_per_traj <= p.cost_per_traj AND q.step_acc >= p.step_acc
             AND (q.cost_per_traj < p.cost_per_traj OR q.step_acc > p.step_acc)
       ) AS pareto
FROM per AS p
LEFT JOIN attributors AS a USING (attributor)
ORDER BY p.split, p.cost_per_traj, p.step_acc DESC, p.attributor
