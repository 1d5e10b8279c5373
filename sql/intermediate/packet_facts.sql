-- packet_facts: packet_facts_from_events for every packet-trace run: read from the run's
-- stored `packet_facts` part where ingest wrote one (tracekit.ingest.facts, with the current
-- definition), computed from its events otherwise (a run ingested before parts were written,
-- or whose part was written by another definition): packet_facts_computed, defined by
-- tracekit.db.query from the store's files, is packet_facts_from_events over those runs.
-- Columns: see packet_facts_from_events.
-- uses: raw_packet_facts, packet_facts_computed
CREATE OR REPLACE VIEW packet_facts AS
SELECT CAST(trace_kind AS VARCHAR) AS trace_kind, run_id, fid, src_node, src_port, dst_node,
       dst_port, pkt_id, CAST(ptype AS VARCHAR) AS ptype, seq, size, t_sent, t_recv, recv_line,
       rx_bytes, drops, overheard, first_of_seq
FROM raw_packet_facts
UNION ALL
SELECT trace_kind, run_id, fid, src_node, src_port, dst_node, dst_port, pkt_id, ptype, seq,
       size, t_sent, t_recv, recv_line, rx_bytes, drops, overheard, first_of_seq
FROM packet_facts_computed
