-- hier_flows: one row per flow of a run with hierarchical addresses (trace_kind 'hier'): the
-- (fid, source, destination) of its data packets (hier_packets), wired, wireless or crossing
-- the base station alike; ptype (alphabetically first), name (flow_labels), fulltcp and
-- hdr_bytes from flows when the flow has wired lines (else fulltcp NULL, hdr_bytes 40 for
-- `tcp`, 0 otherwise), and src_addr / dst_addr, the hierarchical addresses as text ('1.0.1',
-- from node_addrs).
-- uses: hier_packets, flows, flow_labels, node_addrs
CREATE OR REPLACE VIEW hier_flows AS
WITH keyed AS (
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, min(ptype) AS ptype,
           max(hdr_bytes) AS hdr_bytes
    FROM hier_packets
    GROUP BY run_id, fid, src_node, src_port, dst_node, dst_port
),
names AS (
    SELECT run_id, fid, min(name) AS name FROM flow_labels GROUP BY run_id, fid
)
SELECT k.run_id, k.fid, k.src_node, k.src_port, k.dst_node, k.dst_port, k.ptype, n.name,
       f.fulltcp, coalesce(f.hdr_bytes, k.hdr_bytes) AS hdr_bytes,
       sa.addr AS src_addr, da.addr AS dst_addr
FROM keyed k
LEFT JOIN names n ON n.run_id = k.run_id AND n.fid = k.fid
LEFT JOIN flows f
  ON f.run_id = k.run_id AND f.fid IS NOT DISTINCT FROM k.fid AND f.src_node = k.src_node
 AND f.src_port = k.src_port AND f.dst_node = k.dst_node AND f.dst_port = k.dst_port
LEFT JOIN node_addrs sa ON sa.run_id = k.run_id AND sa.node = k.src_node
LEFT JOIN node_addrs da ON da.run_id = k.run_id AND da.node = k.dst_node
