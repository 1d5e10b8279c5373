-- flow_facts: flow_facts_from_events for every packet-trace run: read from the run's stored
-- `flow_facts` part where ingest wrote one (tracekit.ingest.facts, with the current
-- definition), computed from its events otherwise: flow_facts_computed, defined by
-- tracekit.db.query from the store's files, is flow_facts_from_events over those runs.
-- Columns: see flow_facts_from_events.
-- uses: raw_flow_facts, flow_facts_computed
CREATE OR REPLACE VIEW flow_facts AS
SELECT CAST(trace_kind AS VARCHAR) AS trace_kind, run_id, fid, src_node, src_port, dst_node,
       dst_port, CAST(ptype AS VARCHAR) AS ptype, fulltcp, syn_seen, seq0_seen
FROM raw_flow_facts
UNION ALL
SELECT trace_kind, run_id, fid, src_node, src_port, dst_node, dst_port, ptype, fulltcp,
       syn_seen, seq0_seen
FROM flow_facts_computed
