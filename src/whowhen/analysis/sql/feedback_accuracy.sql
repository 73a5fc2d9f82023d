-- Attribution feedback, accuracy against improvement: per (benchmark, system, source), and
-- pooled over the pairs (benchmark = system = 'all'), how often the feedback was right and
-- how many of the originally failed tasks the reruns solved by the last round.
-- n_tasks: tasks with a round-1 attempt; n_feedback: attempts whose parent has a known gold
-- decisive step (step_correct not NULL); agent_acc, step_acc: over those attempts (NULL for
-- "none", which gives no feedback); final_rate: solved / n_tasks; gain_over_retry:
-- final_rate minus the same pair's (or the pooled) "none" final_rate, NULL without a "none"
-- source; fb_cost_usd: what producing the feedback cost (the reruns' own cost is not in it).
-- r1_*: the same after one round only, where every source faces the same failed tasks
-- (later rounds rerun only the tasks a source left unsolved): the clean comparison.
-- Wilson 95% intervals (sql/_macros.sql).
-- Tables: attempts (whowhen.schema.FEEDBACK, one row per rerun attempt).
WITH a AS (SELECT * FROM attempts WHERE round >= 1),
tasks AS (
    SELECT benchmark, system, source, task_id, bool_or(success) AS solved,
           bool_or(success AND round = 1) AS solved_r1
    FROM a
    GROUP BY benchmark, system, source, task_id
    HAVING bool_or(round = 1)
),
outcome AS (
    SELECT coalesce(benchmark, 'all') AS benchmark, coalesce(system, 'all') AS system,
           source,
           count(*) AS n_tasks,
           count(*) FILTER (WHERE solved) AS solved,
           count(*) FILTER (WHERE solved_r1) AS solved_r1
    FROM tasks
    GROUP BY GROUPING SETS ((benchmark, system, source), (source))
),
given AS (
    SELECT coalesce(benchmark, 'all') AS benchmark, coalesce(system, 'all') AS system,
           source,
           count(*) AS attempts,
           count(step_correct) AS n_feedback,
           sum(step_correct::INT) AS step_right,
           avg(agent_correct::INT) FILTER (WHERE step_correct IS NOT NULL) AS agent_acc,
           count(step_correct) FILTER (WHERE round = 1) AS r1_n_feedback,
           sum(step_correct::INT) FILTER (WHERE round = 1) AS r1_step_right,
           coalesce(sum(fb_cost_usd), 0.0) AS fb_cost_usd
    FROM a
    GROUP BY GROUPING SETS ((benchmark, system, source), (source))
),
joined AS (
    SELECT o.benchmark, o.system, o.source, o.n_tasks, o.solved,
           coalesce(g.attempts, 0) AS attempts,
           coalesce(g.n_feedback, 0) AS n_feedback,
           g.agent_acc,
           g.step_right / nullif(g.n_feedback, 0) AS step_acc,
           wilson_lo(g.step_right, g.n_feedback) AS step_acc_lo,
           wilson_hi(g.step_right, g.n_feedback) AS step_acc_hi,
           o.solved / o.n_tasks AS final_rate,
           wilson_lo(o.solved, o.n_tasks) AS final_rate_lo,
           wilson_hi(o.solved, o.n_tasks) AS final_rate_hi,
           g.r1_step_right / nullif(g.r1_n_feedback, 0) AS r1_step_acc,
           wilson_lo(g.r1_step_right, g.r1_n_feedback) AS r1_step_acc_lo,
           wilson_hi(g.r1_step_right, g.r1_n_feedback) AS r1_step_acc_hi,
           o.solved_r1 / o.n_tasks AS r1_rate,
           wilson_lo(o.solved_r1, o.n_tasks) AS r1_rate_lo,
           wilson_hi(o.solved_r1, o.n_tasks) AS r1_rate_hi,
           coalesce(g.fb_cost_usd, 0.0) AS fb_cost_usd
    FROM outcome o
    LEFT JOIN given g USING (benchmark, system, source)
)
SELECT j.benchmark, j.system, j.source, j.n_tasks, j.solved, j.attempts, j.n_feedback,
       j.agent_acc, j.step_acc, j.step_acc_lo, j.step_acc_hi,
       j.final_rate, j.final_rate_lo, j.final_rate_hi,
       j.final_rate - r.final_rate AS gain_over_retry,
       j.r1_step_acc, j.r1_step_acc_lo, j.r1_step_acc_hi, j.r1_rate, j.r1_rate_lo, j.r1_rate_hi,
       j.fb_cost_usd,
       j.fb_cost_usd / j.n_tasks AS fb_cost_per_task
FROM joined j
LEFT JOIN (SELECT benchmark, system, final_rate FROM joined WHERE source = 'none') r
    USING (benchmark, system)
ORDER BY j.benchmark = 'all', j.benchmark, j.system, j.source
