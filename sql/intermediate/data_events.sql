-- data_events: the events of flows' data packets (the columns of `events`): the events for
-- which is_data_packet(ptype, size, fulltcp of the event's flow) holds, i.e. ptype <> 'ack',
-- and in a FullTcp flow (flows.fulltcp) only packets larger than 40 bytes. packets, rtt and
-- throughput_series read data packets from here, so the rule is applied in one place.
-- uses: events, flows, is_data_packet
CREATE OR REPLACE VIEW data_events AS
SELECT e.*
FROM events e
LEFT JOIN (SELECT run_id, fid, src_node, src_port, dst_node, dst_port, fulltcp FROM flows WHERE fulltcp) f
    ON e.run_id = f.run_id AND e.fid = f.fid
   AND e.src_node = f.src_node AND e.src_port = f.src_port
   AND e.dst_node = f.dst_node AND e.dst_port = f.dst_port
WHERE is_data_packet(e.ptype, e.size, f.fulltcp)
