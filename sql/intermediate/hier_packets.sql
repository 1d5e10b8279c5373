-- hier_packets: the packets rows of the runs with hierarchical addresses (trace_kind 'hier',
-- wired and wired-cum-wireless traces): one row per data packet (pkt_id, ptype), whether its
-- lines are wired, wireless or both (a packet from a wired node to a mobile node crosses the
-- base station: wired lines, then wireless lines, one pkt_id). Columns as in packets.
-- Leaving the source = a wired `+`, `h` or `d` event whose from_node is the source node, or an
-- `s` AGT line at the source node; delivery = a wired `r` event whose to_node is the
-- destination node, or an `r` AGT line at the destination node (t_recv, recv_line: the first).
-- size and seq: of its first sending line. rx_bytes: the wire bytes of its wired deliveries (as
-- in wired runs), plus its sent size if delivered by a wireless line (as in wireless runs).
-- drops: its wired `d` events, plus 1 when it was never delivered and a wireless `d` line of it
-- exists. hdr_bytes: its flow's (hier_flows). Data packets: the packets of hier_flows' flows
-- for which is_data_packet(ptype, size, the flow's fulltcp) holds. overheard: 0. first_of_seq:
-- as in packet_facts_from_events.
-- uses: hier_flows, hier_events, hier_wireless_events, is_data_packet
CREATE OR REPLACE VIEW hier_packets AS
WITH trips AS (
    SELECT e.run_id, e.fid, e.src_node, e.src_port, e.dst_node, e.dst_port, e.pkt_id, e.ptype,
           e.seq, e.size, f.hdr_bytes, e.line_no, e.time, true AS wired,
           e.event <> 'r' AND e.from_node = e.src_node AS at_src,
           e.event = 'r' AND e.to_node = e.dst_node AS at_dst,
           e.event = 'd' AS dropped
    FROM hier_events e
    JOIN hier_flows f
      ON e.run_id = f.run_id AND e.fid = f.fid AND e.src_node = f.src_node AND e.src_port = f.src_port
     AND e.dst_node = f.dst_node AND e.dst_port = f.dst_port
    WHERE is_data_packet(e.ptype, e.size, f.fulltcp)
      AND (e.event = 'r' AND e.to_node = e.dst_node
           OR e.event = 'd'
           OR e.event IN ('+', 'h') AND e.from_node = e.src_node)
    UNION ALL
    SELECT w.run_id, w.fid, w.src_node, w.src_port, w.dst_node, w.dst_port, w.pkt_id, w.ptype,
           w.seq, w.size, f.hdr_bytes, w.line_no, w.time, false,
           w.event = 's' AND w.layer = 'AGT' AND w.node = w.src_node,
           w.event = 'r' AND w.layer = 'AGT' AND w.node = w.dst_node,
           w.event = 'd'
    FROM hier_wireless_events w
    JOIN hier_flows f
      ON w.run_id = f.run_id AND w.fid IS NOT DISTINCT FROM f.fid AND w.src_node = f.src_node
     AND w.src_port = f.src_port AND w.dst_node = f.dst_node AND w.dst_port = f.dst_port
    WHERE is_data_packet(w.ptype, w.size, f.fulltcp)
      AND (w.layer = 'AGT' AND (w.event = 's' AND w.node = w.src_node OR w.event = 'r' AND w.node = w.dst_node)
           OR w.event = 'd')
),
per_packet AS (
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, pkt_id, ptype,
           coalesce(arg_min(seq, line_no) FILTER (WHERE at_src), arg_min(seq, line_no)) AS seq,
           coalesce(arg_min(size, line_no) FILTER (WHERE at_src), arg_min(size, line_no)) AS size,
           any_value(hdr_bytes) AS hdr_bytes,
           min(time) FILTER (WHERE at_src) AS t_sent,
           min(time) FILTER (WHERE at_dst) AS t_recv,
           min(line_no) FILTER (WHERE at_dst) AS recv_line,
           coalesce(sum(size) FILTER (WHERE at_dst AND wired), 0) AS wired_rx_bytes,
           coalesce(bool_or(at_dst AND NOT wired), false) AS wireless_delivered,
           count(*) FILTER (WHERE dropped AND wired) AS wired_drops,
           coalesce(bool_or(dropped AND NOT wired), false) AS wireless_dropped
    FROM trips
    GROUP BY run_id, fid, src_node, src_port, dst_node, dst_port, pkt_id, ptype
)
SELECT 'hier' AS trace_kind, run_id, fid, src_node, src_port, dst_node, dst_port,
       pkt_id, ptype, seq, CASE WHEN seq >= 0 THEN seq END AS seq_key, size,
       hdr_bytes, greatest(size - hdr_bytes, 0) AS payload_bytes,
       t_sent, t_recv, recv_line,
       CAST(wired_rx_bytes + CASE WHEN wireless_delivered THEN size ELSE 0 END AS BIGINT) AS rx_bytes,
       CAST(wired_drops + CASE WHEN t_recv IS NULL AND wireless_dropped THEN 1 ELSE 0 END AS BIGINT) AS drops,
       CAST(0 AS BIGINT) AS overheard,
       coalesce(recv_line = min(recv_line) OVER (
           PARTITION BY run_id, fid, src_node, src_port, dst_node, dst_port,
                        CASE WHEN seq >= 0 THEN seq END, CASE WHEN seq >= 0 THEN NULL ELSE pkt_id END
       ), false) AS first_of_seq
FROM per_packet
