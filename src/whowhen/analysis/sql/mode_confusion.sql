-- Mode confusion: gold mode against predicted mode per attributor ('(none)': no mode, or an
-- unparsed or missing answer),
-- for attributors that predict a mode at all and items whose gold mode is known. `share`
-- is the row share (of the gold mode's items).
-- Tables: items (scored_items).
WITH s AS (
    SELECT * FROM items
    UNION ALL SELECT * REPLACE ('all' AS split) FROM items
), predicting AS (
    SELECT DISTINCT attributor FROM items WHERE p_mode IS NOT NULL
)
SELECT attributor, split, gold_mode, coalesce(CASE WHEN usable THEN p_mode END, '(none)') AS predicted_mode,
       count(*) AS n,
       count(*) / sum(count(*)) OVER (PARTITION BY attributor, split, gold_mode) AS share
FROM s
WHERE gold_mode IS NOT NULL AND attributor IN (SELECT attributor FROM predicting)
GROUP BY attributor, split, gold_mode, predicted_mode
ORDER BY attributor, split, gold_mode, predicted_mode
