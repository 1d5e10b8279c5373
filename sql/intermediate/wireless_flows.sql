-- wireless_flows: one row per flow of a wireless run (docs/contract-wireless.md): the data
-- packets (an `s` AGT line, ptype not `ack`) with the same source and destination address
-- (node.port) and fid (NULL in the old format) on their `s` AGT lines. ptype: theirs
-- (alphabetically first if several); name: from flow_labels by fid, NULL without a fid.
-- uses: wireless_events, flow_labels, is_data_packet
CREATE OR REPLACE VIEW wireless_flows AS
WITH sent AS (
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, min(ptype) AS ptype
    FROM wireless_events
    WHERE layer = 'AGT' AND event = 's' AND is_data_packet(ptype, size, NULL)
    GROUP BY run_id, fid, src_node, src_port, dst_node, dst_port
),
names AS (
    SELECT run_id, fid, min(name) AS name FROM flow_labels GROUP BY run_id, fid
)
SELECT s.run_id, s.fid, s.src_node, s.src_port, s.dst_node, s.dst_port, s.ptype, n.name
FROM sent s
LEFT JOIN names n ON n.run_id = s.run_id AND n.fid = s.fid
