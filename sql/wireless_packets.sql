-- wireless_packets: one row per data packet of a wireless run (docs/contract-wireless.md), the
-- packet-level facts wireless_flow_stats and throughput_series both count: its flow key (run_id,
-- fid, src/dst node and port), pkt_id and ptype (a data packet is named by the two), and from its
-- `s` AGT lines at the source node the first send time t_sent and the size and seq of the first
-- such line; from its `r` AGT lines at the destination node the first delivery t_recv and that
-- line's number recv_line (NULL when never delivered); lost_with_drop = never delivered and a `d`
-- line of the same (pkt_id, ptype) exists at any layer and node.
CREATE OR REPLACE VIEW wireless_packets AS
WITH sends AS (
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, pkt_id, ptype,
           min(time) AS t_sent,
           arg_min(size, line_no) AS size,
           arg_min(seq, line_no) AS seq
    FROM wireless_events
    WHERE layer = 'AGT' AND event = 's' AND ptype <> 'ack' AND node = src_node
    GROUP BY run_id, fid, src_node, src_port, dst_node, dst_port, pkt_id, ptype
),
recvs AS (  -- first `r` AGT line of each packet at each node
    SELECT run_id, pkt_id, ptype, node, min(time) AS t_recv, min(line_no) AS recv_line
    FROM wireless_events
    WHERE layer = 'AGT' AND event = 'r'
    GROUP BY run_id, pkt_id, ptype, node
),
dropped AS (
    SELECT DISTINCT run_id, pkt_id, ptype FROM wireless_events WHERE event = 'd'
)
SELECT s.run_id, s.fid, s.src_node, s.src_port, s.dst_node, s.dst_port, s.pkt_id, s.ptype,
       s.size, s.seq, s.t_sent, r.t_recv, r.recv_line,
       r.t_recv IS NULL AND d.pkt_id IS NOT NULL AS lost_with_drop
FROM sends s
LEFT JOIN recvs r
  ON r.run_id = s.run_id AND r.pkt_id = s.pkt_id AND r.ptype = s.ptype AND r.node = s.dst_node
LEFT JOIN dropped d
  ON d.run_id = s.run_id AND d.pkt_id = s.pkt_id AND d.ptype = s.ptype
