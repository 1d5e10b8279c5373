-- flow_facts_from_events: the facts about each flow of a packet-trace run that its events
-- alone decide (no label): what `flow_facts` stores per run at ingest, and what it computes
-- for a run ingested without them. One row per flow, wired and wireless alike.
-- Wired flows (see flows for the rules): the (fid, src address, dst address) of the data
-- packets' `+` and `d` events (is_data_packet before fulltcp is known: ptype <> 'ack');
-- ptype: theirs (alphabetically first if several); fulltcp: one of the flow's `tcp` packets
-- shows a TCP header length, or is <= 40 bytes with seq > 0, or the seqs are byte offsets
-- (max seq - min seq > 2 x its `tcp` events); syn_seen: a 40-byte `tcp` packet at seq 0;
-- seq0_seen: a `tcp` packet at seq 0. A FullTcp flow without a packet larger than 40 bytes
-- (handshake only) has no data and no row.
-- Wireless flows: the (fid, src address, dst address) of the data packets' `s` AGT lines
-- (ptype not `ack`); fulltcp, syn_seen, seq0_seen NULL.
-- uses: events, wireless_events, is_data_packet
CREATE OR REPLACE VIEW flow_facts_from_events AS
WITH keyed AS (
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port,
           min(ptype) AS ptype,
           coalesce(bool_or(ptype = 'tcp' AND tcp_hlen > 0), false) AS hlen_seen,
           bool_or(ptype = 'tcp' AND size <= 40 AND seq > 0) AS small_after_syn,
           bool_or(ptype = 'tcp' AND seq = 0 AND size = 40) AS syn_seen,
           bool_or(ptype = 'tcp' AND seq = 0) AS seq0_seen,
           bool_or(size > 40) AS any_big,
           max(seq) FILTER (WHERE ptype = 'tcp') - min(seq) FILTER (WHERE ptype = 'tcp')
               AS seq_span,
           count(*) FILTER (WHERE ptype = 'tcp') AS n_tcp
    FROM events
    WHERE is_data_packet(ptype, size, false) AND event IN ('+', 'd')
    GROUP BY run_id, fid, src_node, src_port, dst_node, dst_port
),
classified AS (
    SELECT *,
           n_tcp > 0 AND (hlen_seen OR small_after_syn OR seq_span > 2 * n_tcp) AS fulltcp
    FROM keyed
)
SELECT 'wired' AS trace_kind, run_id, fid, src_node, src_port, dst_node, dst_port, ptype,
       fulltcp, syn_seen, seq0_seen
FROM classified
WHERE NOT fulltcp OR any_big
UNION ALL
SELECT 'wireless', run_id, fid, src_node, src_port, dst_node, dst_port, min(ptype),
       CAST(NULL AS BOOLEAN), CAST(NULL AS BOOLEAN), CAST(NULL AS BOOLEAN)
FROM wireless_events
WHERE layer = 'AGT' AND event = 's' AND is_data_packet(ptype, size, NULL)
GROUP BY run_id, fid, src_node, src_port, dst_node, dst_port
