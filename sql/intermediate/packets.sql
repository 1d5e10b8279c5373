-- packets: one row per data packet of every packet-trace run, wired and wireless alike: the
-- facts flow_stats, flow_stats_window and throughput_series count. The label-free facts come
-- from packet_facts (stored per run at ingest, else computed from the events: see
-- packet_facts_from_events for the definitions); the columns that depend on the flow's
-- name (a label) are added here.
-- Columns: those of packet_facts, and seq_key = seq, NULL when the packet has none (NULL or
-- negative: ns-2 writes -1, e.g. ping; goodput counts such a packet once by its id);
-- hdr_bytes (header bytes not counted as goodput: wired the flow's flows.hdr_bytes, wireless
-- 40 for `tcp`, else 0: packet_hdr_bytes) and payload_bytes = size - hdr_bytes, never negative.
-- Runs with hierarchical addresses (trace_kind 'hier', wired and wired-cum-wireless traces,
-- whose packets may cross from wired to wireless lines) have no facts: their rows are
-- hier_packets'.
-- uses: packet_facts, flows, hier_packets, packet_hdr_bytes
CREATE OR REPLACE VIEW packets AS
WITH hdr AS (
    SELECT p.*, packet_hdr_bytes(p.trace_kind, p.ptype, f.hdr_bytes) AS hdr_bytes
    FROM packet_facts p
    LEFT JOIN (SELECT run_id, fid, src_node, src_port, dst_node, dst_port, hdr_bytes FROM flows) f
      ON p.run_id = f.run_id AND p.fid = f.fid
     AND p.src_node = f.src_node AND p.src_port = f.src_port
     AND p.dst_node = f.dst_node AND p.dst_port = f.dst_port
)
SELECT trace_kind, run_id, fid, src_node, src_port, dst_node, dst_port,
       pkt_id, ptype, seq, CASE WHEN seq >= 0 THEN seq END AS seq_key, size,
       hdr_bytes, greatest(size - hdr_bytes, 0) AS payload_bytes,
       t_sent, t_recv, recv_line, rx_bytes, drops, overheard, first_of_seq
FROM hdr
UNION ALL
SELECT * FROM hier_packets
