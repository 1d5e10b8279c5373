-- flows: one row per flow of a wired run: the (fid, src address, dst address) of its data
-- packets, so flows sharing a fid (ns-2's default 0) are told apart by address (node.port).
-- Data packets: ptype <> 'ack', and in a FullTcp flow only those larger than 40 bytes
-- (`ack`-typed packets are never data, so FullTcp/Sack's 50-byte SACK ACKs are not either).
-- fulltcp: one of the flow's `tcp` packets shows a TCP header length (16-field line), or is
-- <= 40 bytes with seq > 0 (the handshake's `tcp`-typed pure ACK, the FIN), or the seqs are
-- byte offsets: max seq - min seq > 2 x its `tcp` `+`/`d` events (one-way TCP numbers
-- segments consecutively and enqueues each at least once: more such events than the span).
-- hdr_bytes (not counted as goodput): 0 for non-TCP; 40 for TCP, except a one-way TCP flow
-- that sent no 40-byte SYN at seq 0 while its seq 0 was seen, or whose name contains 'vegas'
-- (ns-2's Vegas sends neither header bytes nor a SYN); a seen SYN always means 40.
-- ptype: its packets' ptype (alphabetically first if several). name: from flow_labels.
-- The data-packet rule is is_data_packet's, applied before the flow's fulltcp is known (so only
-- ptype <> 'ack' here; the FullTcp size rule is applied by data_events).
-- Read from `+` and `d` events only: ns-2 writes a packet's `+` on a traced link before any
-- `-`/`r` there, and a loss model at a link head writes a bare `d`. Those facts are
-- flow_facts' (stored at ingest, see flow_facts_from_events); the name and hdr_bytes, which
-- depend on a label, are added here. Runs with hierarchical addresses (trace_kind 'hier') have
-- no facts: their flows with wired lines are hier_flows' (the same rules, over their events).
-- uses: flow_facts, flow_labels, hier_flows
CREATE OR REPLACE VIEW flows AS
WITH names AS (
    SELECT run_id, fid, min(name) AS name FROM flow_labels GROUP BY run_id, fid
)
SELECT k.run_id, k.fid, k.src_node, k.src_port, k.dst_node, k.dst_port, k.ptype, n.name,
       k.fulltcp,
       CASE
           WHEN k.ptype <> 'tcp' THEN 0
           WHEN k.fulltcp OR k.syn_seen THEN 40
           WHEN k.seq0_seen OR lower(n.name) LIKE '%vegas%' THEN 0
           ELSE 40
       END AS hdr_bytes
FROM flow_facts k
LEFT JOIN names n USING (run_id, fid)
WHERE k.trace_kind = 'wired'
UNION ALL
SELECT run_id, fid, src_node, src_port, dst_node, dst_port, ptype, name, fulltcp, hdr_bytes
FROM hier_flows
WHERE fulltcp IS NOT NULL  -- a flow with wired lines (NULL: agent lines only)
