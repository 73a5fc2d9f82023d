-- Wall-clock model latency per attributor: the only numbers of the analysis that differ
-- between two runs of one config (the timing columns, schema.TIMING_COLUMNS), so they stay
-- in this table of their own and out of every other artifact. Predictions served from the
-- response cache keep the latency of the call that made them.
-- Tables: predictions.
SELECT attributor,
       count(*) AS predictions,
       sum(calls) AS calls,
       avg(latency_s) AS latency_s_mean,
       quantile_cont(latency_s, 0.5) AS latency_s_p50,
       quantile_cont(latency_s, 0.95) AS latency_s_p95,
       sum(latency_s) AS latency_s_total
FROM predictions
GROUP BY attributor
ORDER BY attributor
