-- all_flows: every flow of every packet-trace run, wired (flows) and wireless
-- (wireless_flows) alike, with the flow key (run_id, fid, src/dst node and port), ptype, name,
-- trace_kind ('wired' / 'wireless'), and for wired flows fulltcp and hdr_bytes (NULL for
-- wireless flows, whose header bytes go by each packet's ptype: see packets).
-- uses: flows, wireless_flows
CREATE OR REPLACE VIEW all_flows AS
SELECT run_id, fid, src_node, src_port, dst_node, dst_port, ptype, name,
       'wired' AS trace_kind, fulltcp, hdr_bytes
FROM flows
UNION ALL
SELECT run_id, fid, src_node, src_port, dst_node, dst_port, ptype, name,
       'wireless', CAST(NULL AS BOOLEAN), CAST(NULL AS INTEGER)
FROM wireless_flows
