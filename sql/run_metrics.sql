-- run_metrics: one row per run, flow and metric (long form) for every metric of the catalogue
-- (sql/catalogue.toml, as the table metric_catalogue): flow-level metrics from their source
-- view (flow_stats) with the flow's key (fid, name, src/dst node and port), run-level metrics
-- (fairness, wireless_run_stats) with NULL flow columns; with the run's scenario, config and
-- seed from run_configs. A NULL value (e.g. no delay where nothing arrived) is a row with
-- value NULL. replication_stats aggregates it.
CREATE OR REPLACE VIEW run_metrics AS
WITH flow_wide AS (
    SELECT run_id, fid, name, src_node, src_port, dst_node, dst_port,
           COLUMNS(lambda c: c NOT IN ('run_id', 'fid', 'name', 'ptype', 'src_node', 'src_port',
                                       'dst_node', 'dst_port'))::DOUBLE
    FROM flow_stats
),
flow_long AS (
    SELECT * FROM flow_wide UNPIVOT INCLUDE NULLS (value FOR source_column IN (
        COLUMNS(* EXCLUDE (run_id, fid, name, src_node, src_port, dst_node, dst_port))))
),
fairness_wide AS (SELECT run_id, COLUMNS(* EXCLUDE (run_id))::DOUBLE FROM fairness),
fairness_long AS (
    SELECT * FROM fairness_wide UNPIVOT INCLUDE NULLS (value FOR source_column IN (COLUMNS(* EXCLUDE (run_id))))
),
wireless_wide AS (SELECT run_id, COLUMNS(* EXCLUDE (run_id))::DOUBLE FROM wireless_run_stats),
wireless_long AS (
    SELECT * FROM wireless_wide UNPIVOT INCLUDE NULLS (value FOR source_column IN (COLUMNS(* EXCLUDE (run_id))))
),
long AS (
    SELECT run_id, fid, name, src_node, src_port, dst_node, dst_port,
           'flow_stats' AS source_view, source_column, value
    FROM flow_long
    UNION ALL
    SELECT run_id, NULL, NULL, NULL, NULL, NULL, NULL, 'fairness', source_column, value
    FROM fairness_long
    UNION ALL
    SELECT run_id, NULL, NULL, NULL, NULL, NULL, NULL, 'wireless_run_stats', source_column, value
    FROM wireless_long
)
SELECT l.run_id, c.scenario, c.config, c.seed, l.fid, l.name, l.src_node, l.src_port,
       l.dst_node, l.dst_port, m.metric, m.level, l.value
FROM long l
JOIN metric_catalogue m USING (source_view, source_column)
JOIN run_configs c USING (run_id)
