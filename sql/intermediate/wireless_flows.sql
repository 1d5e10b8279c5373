-- wireless_flows: one row per flow of a wireless run (docs/contract-wireless.md): the data
-- packets (an `s` AGT line, ptype not `ack`) with the same source and destination address
-- (node.port) and fid (NULL in the old format) on their `s` AGT lines. ptype: theirs
-- (alphabetically first if several); name: from flow_labels by fid, NULL without a fid.
-- (The flows themselves are flow_facts' wireless rows: stored at ingest, see
-- flow_facts_from_events.)
-- uses: flow_facts, flow_labels
CREATE OR REPLACE VIEW wireless_flows AS
WITH names AS (
    SELECT run_id, fid, min(name) AS name FROM flow_labels GROUP BY run_id, fid
)
SELECT s.run_id, s.fid, s.src_node, s.src_port, s.dst_node, s.dst_port, s.ptype, n.name
FROM flow_facts s
LEFT JOIN names n ON n.run_id = s.run_id AND n.fid = s.fid
WHERE s.trace_kind = 'wireless'
