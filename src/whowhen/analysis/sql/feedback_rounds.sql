-- Attribution feedback, success per round: for each (benchmark, system, source) the share
-- of the originally failed tasks solved by round r, cumulative, r = 0 (the original
-- failure: nothing solved) to R (the largest round in the data). A solved task is not
-- rerun, so "solved by r" is "some attempt in rounds 1..r succeeded". n counts the tasks
-- with a round-1 attempt; the pooled rows (benchmark = system = 'all') sum n and solved
-- over the pairs. Wilson 95% intervals (sql/_macros.sql).
-- attempts: reruns made in that round (0 at round 0: the original rollouts are not in the
-- table); fb_step_acc: share of that round's feedback naming the gold decisive step, over
-- the attempts whose parent has a known gold step (NULL when none has, and for "none").
-- Tables: attempts (whowhen.schema.FEEDBACK, one row per rerun attempt).
WITH a AS (SELECT * FROM attempts WHERE round >= 1),
rounds AS (
    SELECT range AS round FROM range(0, (SELECT coalesce(max(round), 0) FROM a) + 1)
),
tasks AS (
    SELECT benchmark, system, source, task_id,
           min(round) FILTER (WHERE success) AS solved_round
    FROM a
    GROUP BY benchmark, system, source, task_id
    HAVING bool_or(round = 1)
),
progress AS (
    SELECT coalesce(benchmark, 'all') AS benchmark, coalesce(system, 'all') AS system,
           source, round,
           count(*) AS n,
           count(*) FILTER (WHERE solved_round <= round) AS solved
    FROM tasks CROSS JOIN rounds
    GROUP BY GROUPING SETS ((benchmark, system, source, round), (source, round))
),
per_round AS (
    SELECT coalesce(benchmark, 'all') AS benchmark, coalesce(system, 'all') AS system,
           source, round,
           count(*) AS attempts,
           avg(step_correct::INT) AS fb_step_acc
    FROM a
    GROUP BY GROUPING SETS ((benchmark, system, source, round), (source, round))
)
SELECT p.benchmark, p.system, p.source, p.round::BIGINT AS round, p.n, p.solved,
       p.solved / p.n AS rate,
       wilson_lo(p.solved, p.n) AS rate_lo,
       wilson_hi(p.solved, p.n) AS rate_hi,
       coalesce(r.attempts, 0) AS attempts,
       r.fb_step_acc
FROM progress p
LEFT JOIN per_round r USING (benchmark, system, source, round)
ORDER BY p.benchmark = 'all', p.benchmark, p.system, p.source, p.round
