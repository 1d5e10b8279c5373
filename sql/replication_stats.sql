-- replication_stats: per configuration (run_configs: same scenario and labels apart from the
-- seed) and flow (fid, addresses, name), for each metric (throughput_kbps, goodput_kbps,
-- mean_delay_ms, pdr, drop_rate from flow_stats; jain_index from fairness, on a row with NULL
-- flow columns; likewise, for wireless runs, run_pdr, run_throughput_kbps, run_mean_delay_ms,
-- routing_pkts and nrl from wireless_run_stats): n_runs with a value, mean, sample stddev,
-- and the 95% CI half-width
-- t_975(n_runs - 1) * stddev / sqrt(n_runs) (NULL for a single run).
CREATE OR REPLACE VIEW replication_stats AS
WITH per_run AS (
    SELECT c.scenario, c.config, c.seed, s.fid, s.name, s.src_node, s.src_port,
           s.dst_node, s.dst_port, m.metric, m.value
    FROM flow_stats s
    JOIN run_configs c USING (run_id)
    CROSS JOIN LATERAL (VALUES
        ('throughput_kbps', s.throughput_kbps),
        ('goodput_kbps', s.goodput_kbps),
        ('mean_delay_ms', s.mean_delay_ms),
        ('pdr', s.pdr),
        ('drop_rate', s.drop_rate)
    ) AS m(metric, value)
    UNION ALL
    SELECT c.scenario, c.config, c.seed, NULL, NULL, NULL, NULL, NULL, NULL,
           'jain_index', f.jain_index
    FROM fairness f
    JOIN run_configs c USING (run_id)
    UNION ALL
    SELECT c.scenario, c.config, c.seed, NULL, NULL, NULL, NULL, NULL, NULL, m.metric, m.value
    FROM wireless_run_stats w
    JOIN run_configs c USING (run_id)
    CROSS JOIN LATERAL (VALUES
        ('run_pdr', w.pdr),
        ('run_throughput_kbps', w.throughput_kbps),
        ('run_mean_delay_ms', w.mean_delay_ms),
        ('routing_pkts', CAST(w.routing_pkts AS DOUBLE)),
        ('nrl', w.nrl)
    ) AS m(metric, value)
),
agg AS (
    SELECT scenario, config, fid, name, src_node, src_port, dst_node, dst_port, metric,
           count(value) AS n_runs,
           avg(value) AS mean,
           stddev_samp(value) AS stddev,
           list_sort(list(seed) FILTER (WHERE value IS NOT NULL)) AS seeds
    FROM per_run
    GROUP BY ALL
)
SELECT scenario, config, fid, name, src_node, src_port, dst_node, dst_port, metric,
       n_runs, mean, stddev,
       t_975(n_runs - 1) * stddev / sqrt(n_runs) AS ci95_half_width,
       seeds
FROM agg
