-- wireless_packets: the wireless rows of packets (one per data packet of a wireless run,
-- docs/contract-wireless.md), with its flow key (run_id, fid, src/dst node and port), pkt_id
-- and ptype (a data packet is named by the two), size and seq of its first `s` AGT line at
-- the source, t_sent, t_recv (first `r` AGT line at the destination) and recv_line (NULL when
-- never delivered), lost_with_drop = never delivered and a `d` line of the same (pkt_id,
-- ptype) exists at any layer and node.
-- uses: packets
CREATE OR REPLACE VIEW wireless_packets AS
SELECT run_id, fid, src_node, src_port, dst_node, dst_port, pkt_id, ptype, size, seq,
       t_sent, t_recv, recv_line, drops > 0 AS lost_with_drop
FROM packets
WHERE trace_kind = 'wireless'
