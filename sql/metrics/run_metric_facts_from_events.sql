-- run_metric_facts_from_events: the values of run_metrics whose source views read every packet
-- or event of a run, in run_metrics' long form: per run and flow, each column (source_column,
-- as DOUBLE: value) of onperiod_flow_stats (through its definition, flow_stats_in), rtt and
-- bottleneck_queue_delay (source_view), with the flow key; per run, each column of
-- wireless_run_stats, with NULL flow columns. What `tracekit compact` stores per run of its
-- generation (run_metric_facts: they depend on a run's labels, so they are not written at
-- ingest), and what the views compute for a run without them. A NULL value is kept (a row
-- with value NULL).
-- uses: flow_stats_in, rtt, bottleneck_queue_delay, wireless_run_stats
CREATE OR REPLACE VIEW run_metric_facts_from_events AS
SELECT * FROM (SELECT run_id, fid, src_node, src_port, dst_node, dst_port, 'onperiod_flow_stats' AS source_view,
                      COLUMNS(lambda c: c NOT IN ('run_id', 'fid', 'name', 'ptype', 'src_node', 'src_port',
                                                  'dst_node', 'dst_port', 'window_kind'))::DOUBLE
               FROM flow_stats_in('onperiod', NULL, NULL, NULL))
UNPIVOT INCLUDE NULLS (value FOR source_column IN (
    COLUMNS(* EXCLUDE (run_id, fid, src_node, src_port, dst_node, dst_port, source_view))))
UNION ALL
SELECT * FROM (SELECT run_id, fid, src_node, src_port, dst_node, dst_port, 'rtt' AS source_view,
                      COLUMNS(lambda c: c NOT IN ('run_id', 'fid', 'src_node', 'src_port',
                                             'dst_node', 'dst_port'))::DOUBLE
               FROM rtt)
UNPIVOT INCLUDE NULLS (value FOR source_column IN (
    COLUMNS(* EXCLUDE (run_id, fid, src_node, src_port, dst_node, dst_port, source_view))))
UNION ALL
SELECT * FROM (SELECT run_id, fid, src_node, src_port, dst_node, dst_port, 'bottleneck_queue_delay' AS source_view,
                      COLUMNS(lambda c: c NOT IN ('run_id', 'fid', 'src_node', 'src_port',
                                             'dst_node', 'dst_port'))::DOUBLE
               FROM bottleneck_queue_delay)
UNPIVOT INCLUDE NULLS (value FOR source_column IN (
    COLUMNS(* EXCLUDE (run_id, fid, src_node, src_port, dst_node, dst_port, source_view))))
UNION ALL
SELECT run_id, CAST(NULL AS INTEGER), CAST(NULL AS INTEGER), CAST(NULL AS INTEGER), CAST(NULL AS INTEGER),
       CAST(NULL AS INTEGER), source_view, source_column, value
FROM (SELECT * FROM (SELECT run_id, 'wireless_run_stats' AS source_view, COLUMNS(* EXCLUDE (run_id))::DOUBLE
                     FROM wireless_run_stats)
      UNPIVOT INCLUDE NULLS (value FOR source_column IN (COLUMNS(* EXCLUDE (run_id, source_view)))))
