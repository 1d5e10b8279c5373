-- all_flows: every flow of every packet-trace run, wired (flows), wireless (wireless_flows) and
-- with hierarchical addresses (hier_flows: wired and wired-cum-wireless traces, whose flows may
-- cross from wired to wireless nodes) alike, with the flow key (run_id, fid, src/dst node and
-- port), ptype, name, trace_kind ('wired' / 'wireless' / 'hier'), for wired flows fulltcp and
-- hdr_bytes (NULL for wireless flows, whose header bytes go by each packet's ptype: see
-- packets), and src_addr / dst_addr, the hierarchical addresses as text ('1.0.1'; NULL for
-- flat addresses, where the node is the address).
-- uses: flows, wireless_flows, hier_flows, node_addrs
CREATE OR REPLACE VIEW all_flows AS
WITH hier AS (
    SELECT DISTINCT run_id FROM node_addrs
)
SELECT run_id, fid, src_node, src_port, dst_node, dst_port, ptype, name,
       'wired' AS trace_kind, fulltcp, hdr_bytes,
       CAST(NULL AS VARCHAR) AS src_addr, CAST(NULL AS VARCHAR) AS dst_addr
FROM flows
ANTI JOIN hier USING (run_id)
UNION ALL
SELECT run_id, fid, src_node, src_port, dst_node, dst_port, ptype, name,
       'wireless', CAST(NULL AS BOOLEAN), CAST(NULL AS INTEGER),
       CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR)
FROM wireless_flows
ANTI JOIN hier USING (run_id)
UNION ALL
SELECT run_id, fid, src_node, src_port, dst_node, dst_port, ptype, name,
       'hier', fulltcp, hdr_bytes, src_addr, dst_addr
FROM hier_flows
