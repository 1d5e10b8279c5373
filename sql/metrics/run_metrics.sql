-- run_metrics: one row per run, flow and metric (long form) for every metric of the catalogue
-- (sql/catalogue.toml, as the table metric_catalogue): flow-level metrics from their source
-- view (flow_stats through its definition flow_stats_in('run'); onperiod_flow_stats, rtt and
-- bottleneck_queue_delay through run_metric_facts, which `tracekit compact` stores) with the
-- flow's key (fid, name from all_flows, src/dst node and port), run-level metrics (fairness;
-- wireless_run_stats through run_metric_facts) with NULL flow columns; with the run's scenario, config and seed from
-- run_configs (runs without a seed are left out). A NULL value (e.g. no delay where nothing
-- arrived) is a row with value NULL; a flow missing from a source view (e.g. a run without a
-- CBR on-period) has no row for its metrics. replication_stats aggregates it.
-- uses: flow_stats_in, run_metric_facts, fairness, all_flows, run_configs, metric_catalogue
CREATE OR REPLACE VIEW run_metrics AS
WITH flow_long AS (
    SELECT * FROM (SELECT run_id, fid, src_node, src_port, dst_node, dst_port, 'flow_stats' AS source_view,
                          COLUMNS(lambda c: c NOT IN ('run_id', 'fid', 'name', 'ptype', 'src_node', 'src_port',
                                                      'dst_node', 'dst_port', 'window_kind'))::DOUBLE
                   FROM flow_stats_in('run', NULL, NULL, NULL))
    UNPIVOT INCLUDE NULLS (value FOR source_column IN (
        COLUMNS(* EXCLUDE (run_id, fid, src_node, src_port, dst_node, dst_port, source_view))))
    UNION ALL
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, source_view, source_column, value
    FROM run_metric_facts
    WHERE source_view <> 'wireless_run_stats'
),
run_long AS (
    SELECT * FROM (SELECT run_id, 'fairness' AS source_view, COLUMNS(* EXCLUDE (run_id))::DOUBLE FROM fairness)
    UNPIVOT INCLUDE NULLS (value FOR source_column IN (COLUMNS(* EXCLUDE (run_id, source_view))))
    UNION ALL
    SELECT run_id, source_view, source_column, value
    FROM run_metric_facts
    WHERE source_view = 'wireless_run_stats'
),
long AS (
    SELECT l.run_id, l.fid, f.name, l.src_node, l.src_port, l.dst_node, l.dst_port,
           l.source_view, l.source_column, l.value
    FROM flow_long l
    LEFT JOIN all_flows f
      ON f.run_id = l.run_id AND f.fid IS NOT DISTINCT FROM l.fid AND f.src_node = l.src_node
     AND f.src_port = l.src_port AND f.dst_node = l.dst_node AND f.dst_port = l.dst_port
    UNION ALL
    SELECT run_id, NULL, NULL, NULL, NULL, NULL, NULL, source_view, source_column, value
    FROM run_long
)
SELECT l.run_id, c.scenario, c.config, c.seed, l.fid, l.name, l.src_node, l.src_port,
       l.dst_node, l.dst_port, m.metric, m.level, l.value
FROM long l
JOIN metric_catalogue m USING (source_view, source_column)
JOIN run_configs c USING (run_id)
