-- data_events: the events of flows' data packets: the events of a flow of `flows` for which
-- is_data_packet(ptype, size, the flow's fulltcp) holds, i.e. ptype <> 'ack', and in a FullTcp
-- flow only packets larger than 40 bytes. packets, rtt, throughput_series and
-- bottleneck_queue_delay read data packets from here, so the rule is applied in one place.
-- Columns: those of `events`, and the flow's fulltcp and hdr_bytes (see flows).
-- uses: events, flows, is_data_packet
CREATE OR REPLACE VIEW data_events AS
SELECT e.*, f.fulltcp, f.hdr_bytes
FROM events e
JOIN (SELECT run_id, fid, src_node, src_port, dst_node, dst_port, fulltcp, hdr_bytes FROM flows) f
    ON e.run_id = f.run_id AND e.fid = f.fid
   AND e.src_node = f.src_node AND e.src_port = f.src_port
   AND e.dst_node = f.dst_node AND e.dst_port = f.dst_port
WHERE is_data_packet(e.ptype, e.size, f.fulltcp)
