-- percentile(x, q): the q-quantile of x (an aggregate), interpolated linearly between the
-- two nearest ranks (rank q x (n - 1), numpy's default). q may be a list of quantiles, which
-- returns a list. Every p50/p95/p99 column is computed with it.
-- uses:
CREATE OR REPLACE MACRO percentile(x, q) AS quantile_cont(x, q);
