-- run_metric_facts: run_metric_facts_from_events for every packet-trace run: read from the
-- compacted generation where `tracekit compact` stored them (tracekit.db.compaction, with the
-- current definition, for a run not changed since), computed otherwise:
-- run_metric_facts_computed, defined by tracekit.db.query from the store's files, is
-- run_metric_facts_from_events over those runs.
-- Columns: see run_metric_facts_from_events.
-- uses: raw_run_metric_facts, run_metric_facts_computed
CREATE OR REPLACE VIEW run_metric_facts AS
SELECT run_id, fid, src_node, src_port, dst_node, dst_port, source_view, source_column, value
FROM raw_run_metric_facts
UNION ALL
SELECT run_id, fid, src_node, src_port, dst_node, dst_port, source_view, source_column, value
FROM run_metric_facts_computed
