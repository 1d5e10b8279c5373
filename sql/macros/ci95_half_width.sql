-- ci95_half_width(n, sd): the half-width of the 95% confidence interval of a mean of n values
-- with sample stddev sd, t_975(n - 1) * sd / sqrt(n) (NULL for n < 2). The one SQL
-- definition, for replication_stats, tracekit compare and the dashboard's pooled
-- replication; tracekit/analysis/stats.py computes the same in Python.
-- uses: t_975
CREATE OR REPLACE MACRO ci95_half_width(n, sd) AS t_975(n - 1) * sd / sqrt(n);
