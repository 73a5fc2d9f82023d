-- Signed step error (predicted - gold) per attributor, clipped to ±$clip (the end bins hold
-- everything beyond), over parsed predictions that name a step. `share` is the fraction of
-- the attributor's scored trajectories (n_total, including unparsed and missing ones).
-- Tables: items (scored_items).
WITH s AS (
    SELECT * FROM items
    UNION ALL SELECT * REPLACE ('all' AS split) FROM items
), totals AS (
    SELECT attributor, split, count(*) AS n_total FROM s GROUP BY ALL
)
SELECT attributor, split,
       greatest(-$clip, least($clip, p_step - decisive_step))::INTEGER AS delta,
       count(*) AS n, any_value(t.n_total) AS n_total,
       count(*) / any_value(t.n_total) AS share
FROM s JOIN totals AS t USING (attributor, split)
WHERE usable AND p_step IS NOT NULL
GROUP BY ALL
ORDER BY attributor, split, delta
