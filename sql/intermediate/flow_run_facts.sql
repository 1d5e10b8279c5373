-- flow_run_facts: flow_run_facts_from_events for every packet-trace run: read from the run's
-- stored `flow_run_facts` part where ingest wrote one (tracekit.ingest.facts, with the current
-- definition), computed otherwise: flow_run_facts_computed, defined by tracekit.db.query from
-- the store's files, is flow_run_facts_from_events over those runs.
-- Columns: see flow_run_facts_from_events.
-- uses: raw_flow_run_facts, flow_run_facts_computed
CREATE OR REPLACE VIEW flow_run_facts AS
SELECT CAST(trace_kind AS VARCHAR) AS trace_kind, run_id, fid, src_node, src_port, dst_node,
       dst_port, jitter_s, sent_pkts, recv_pkts, dropped_pkts, overheard_pkts, lost_pkts,
       tx_bytes, rx_bytes, delay_mean_s, delay_p50_s, delay_p95_s, delay_p99_s, t_first_send,
       t_last_recv, goodput_bytes_hdr0, goodput_bytes_hdr40
FROM raw_flow_run_facts
UNION ALL
SELECT trace_kind, run_id, fid, src_node, src_port, dst_node, dst_port, jitter_s, sent_pkts,
       recv_pkts, dropped_pkts, overheard_pkts, lost_pkts, tx_bytes, rx_bytes, delay_mean_s,
       delay_p50_s, delay_p95_s, delay_p99_s, t_first_send, t_last_recv, goodput_bytes_hdr0,
       goodput_bytes_hdr40
FROM flow_run_facts_computed
