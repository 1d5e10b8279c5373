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
-- exists. hdr_bytes: its flow's (flows) when it has wired lines, else 40 for `tcp`, 0 otherwise.
-- Data packets: wired lines those of data_events, wireless lines is_data_packet(ptype, size,
-- NULL). overheard: 0.
-- uses: runs, data_events, wireless_events, is_data_packet
CREATE OR REPLACE VIEW hier_packets AS
WITH hier AS (
    SELECT run_id FROM runs WHERE trace_kind = 'hier'
),
trips AS (
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, pkt_id, ptype, seq, size,
           hdr_bytes, line_no, time, true AS wired,
           event <> 'r' AND from_node = src_node AS at_src,
           event = 'r' AND to_node = dst_node AS at_dst,
           event = 'd' AS dropped
    FROM data_events
    SEMI JOIN hier USING (run_id)
    WHERE event = 'r' AND to_node = dst_node
       OR event = 'd'
       OR event IN ('+', 'h') AND from_node = src_node
    UNION ALL
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, pkt_id, ptype, seq, size,
           CAST(NULL AS INTEGER), line_no, time, false,
           event = 's' AND layer = 'AGT' AND node = src_node,
           event = 'r' AND layer = 'AGT' AND node = dst_node,
           event = 'd'
    FROM wireless_events
    SEMI JOIN hier USING (run_id)
    WHERE is_data_packet(ptype, size, NULL)
      AND (layer = 'AGT' AND (event = 's' AND node = src_node OR event = 'r' AND node = dst_node)
           OR event = 'd')
),
per_packet AS (
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, pkt_id, ptype,
           coalesce(arg_min(seq, line_no) FILTER (WHERE at_src), arg_min(seq, line_no)) AS seq,
           coalesce(arg_min(size, line_no) FILTER (WHERE at_src), arg_min(size, line_no)) AS size,
           coalesce(any_value(hdr_bytes), CASE WHEN ptype = 'tcp' THEN 40 ELSE 0 END) AS hdr_bytes,
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
       CAST(0 AS BIGINT) AS overheard
FROM per_packet
