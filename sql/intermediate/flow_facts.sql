-- flow_facts: flow_facts_from_events for every packet-trace run: read from the run's stored
-- `flow_facts` part where ingest wrote one (tracekit.materialise, with the current
-- definition), computed from its events otherwise (flow_facts_pending, defined by
-- tracekit.query from the store's files, names those runs). Columns: see
-- flow_facts_from_events.
-- uses: raw_flow_facts, flow_facts_from_events, flow_facts_pending
CREATE OR REPLACE VIEW flow_facts AS
SELECT CAST(trace_kind AS VARCHAR) AS trace_kind, run_id, fid, src_node, src_port, dst_node,
       dst_port, CAST(ptype AS VARCHAR) AS ptype, fulltcp, syn_seen, seq0_seen
FROM raw_flow_facts
UNION ALL
SELECT * FROM flow_facts_from_events WHERE flow_facts_pending(run_id)
