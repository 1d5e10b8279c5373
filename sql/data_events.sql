-- data_events: the events of flows' data packets (the columns of `events`): ptype <> 'ack',
-- and in a FullTcp flow (flows.fulltcp) only packets larger than 40 bytes.
CREATE OR REPLACE VIEW data_events AS
SELECT e.*
FROM events e
ANTI JOIN (SELECT run_id, fid, src_node, src_port, dst_node, dst_port FROM flows WHERE fulltcp) f
    ON e.size <= 40
   AND e.run_id = f.run_id AND e.fid = f.fid
   AND e.src_node = f.src_node AND e.src_port = f.src_port
   AND e.dst_node = f.dst_node AND e.dst_port = f.dst_port
WHERE e.ptype <> 'ack'
