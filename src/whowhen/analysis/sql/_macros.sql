-- Shared macros, executed by whowhen.analysis.scores.run_sql before every query file.
-- Wilson score interval (95%, z = 1.96) for k successes out of n trials. NULL when n is 0
-- or NULL; exactly 0 (lo, k = 0) and 1 (hi, k = n) at the ends, and clamped to [0, 1], so
-- floating-point rounding never puts a bound outside the unit interval.
CREATE OR REPLACE TEMP MACRO wilson_lo(k, n) AS
    CASE WHEN n > 0 THEN
        CASE WHEN k <= 0 THEN 0.0 ELSE greatest(0.0,
            (k / n + 1.9208 / n - 1.96 * sqrt(greatest(0.0, (k / n) * (1 - k / n)) / n
                                             + 0.9604 / (n * n)))
            / (1 + 3.8416 / n)) END
    END;
CREATE OR REPLACE TEMP MACRO wilson_hi(k, n) AS
    CASE WHEN n > 0 THEN
        CASE WHEN k >= n THEN 1.0 ELSE least(1.0,
            (k / n + 1.9208 / n + 1.96 * sqrt(greatest(0.0, (k / n) * (1 - k / n)) / n
                                             + 0.9604 / (n * n)))
            / (1 + 3.8416 / n)) END
    END;
