-- replication_stats: per configuration (run_configs: same scenario and labels apart from the
-- seed), flow (fid, addresses, name; NULL for run-level metrics) and metric of run_metrics
-- (every metric of the catalogue, sql/catalogue.toml): n_runs with a value, mean, sample
-- stddev, the 95% CI half-width (ci95_half_width: t_975(n_runs - 1) * stddev / sqrt(n_runs), NULL
-- for a single run), and the sorted seeds of those runs.
-- uses: run_metrics, ci95_half_width
CREATE OR REPLACE VIEW replication_stats AS
WITH agg AS (
    SELECT scenario, config, fid, name, src_node, src_port, dst_node, dst_port, metric,
           count(value) AS n_runs,
           avg(value) AS mean,
           stddev_samp(value) AS stddev,
           list_sort(list(seed) FILTER (WHERE value IS NOT NULL)) AS seeds
    FROM run_metrics
    GROUP BY ALL
)
SELECT scenario, config, fid, name, src_node, src_port, dst_node, dst_port, metric,
       n_runs, mean, stddev,
       ci95_half_width(n_runs, stddev) AS ci95_half_width,
       seeds
FROM agg
