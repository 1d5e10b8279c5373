-- hier_flows: one row per flow of a run with hierarchical addresses (trace_kind 'hier': wired
-- and wired-cum-wireless traces): the (fid, source, destination) of its data packets, whether
-- their lines are wired, wireless or both (a flow from a wired node to a mobile node crosses
-- the base station). A flow with wired lines is found and classified as in flows (from its
-- `+` and `d` events: fulltcp, hdr_bytes; the same rules, over hier_events); a flow without is
-- found from its `s` AGT lines (data: is_data_packet) as in wireless_flows, fulltcp NULL and
-- hdr_bytes 40 for `tcp`, else 0. ptype: alphabetically first; name: flow_labels; src_addr /
-- dst_addr: the hierarchical addresses as text ('1.0.1', node_addrs).
-- uses: hier_events, hier_wireless_events, flow_labels, node_addrs, is_data_packet
CREATE OR REPLACE VIEW hier_flows AS
WITH keyed AS (  -- flows.sql's classification, over the hier runs' wired events
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port,
           min(ptype) AS ptype,
           coalesce(bool_or(ptype = 'tcp' AND tcp_hlen > 0), false) AS hlen_seen,
           bool_or(ptype = 'tcp' AND size <= 40 AND seq > 0) AS small_after_syn,
           bool_or(ptype = 'tcp' AND seq = 0 AND size = 40) AS syn_seen,
           bool_or(ptype = 'tcp' AND seq = 0) AS seq0_seen,
           bool_or(size > 40) AS any_big,
           max(seq) FILTER (WHERE ptype = 'tcp') - min(seq) FILTER (WHERE ptype = 'tcp') AS seq_span,
           count(*) FILTER (WHERE ptype = 'tcp') AS n_tcp
    FROM hier_events
    WHERE is_data_packet(ptype, size, false) AND event IN ('+', 'd')
    GROUP BY run_id, fid, src_node, src_port, dst_node, dst_port
),
names AS (
    SELECT run_id, fid, min(name) AS name FROM flow_labels GROUP BY run_id, fid
),
wired AS (
    SELECT k.*, n_tcp > 0 AND (hlen_seen OR small_after_syn OR seq_span > 2 * n_tcp) AS fulltcp
    FROM keyed k
),
wired_flows AS (
    SELECT w.run_id, w.fid, w.src_node, w.src_port, w.dst_node, w.dst_port, w.ptype, w.fulltcp,
           CASE
               WHEN w.ptype <> 'tcp' THEN 0
               WHEN w.fulltcp OR w.syn_seen THEN 40
               WHEN w.seq0_seen OR lower(n.name) LIKE '%vegas%' THEN 0
               ELSE 40
           END AS hdr_bytes
    FROM wired w
    LEFT JOIN names n USING (run_id, fid)
    WHERE NOT w.fulltcp OR w.any_big
),
agent_flows AS (  -- flows with `s` AGT lines and no wired events
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, min(ptype) AS ptype,
           CAST(NULL AS BOOLEAN) AS fulltcp,
           CASE WHEN min(ptype) = 'tcp' THEN 40 ELSE 0 END AS hdr_bytes
    FROM hier_wireless_events s
    WHERE layer = 'AGT' AND event = 's' AND is_data_packet(ptype, size, NULL)
      AND NOT EXISTS (SELECT 1 FROM keyed k
                      WHERE k.run_id = s.run_id AND k.fid IS NOT DISTINCT FROM s.fid
                        AND k.src_node = s.src_node AND k.src_port = s.src_port
                        AND k.dst_node = s.dst_node AND k.dst_port = s.dst_port)
    GROUP BY run_id, fid, src_node, src_port, dst_node, dst_port
),
both_kinds AS (
    SELECT * FROM wired_flows
    UNION ALL
    SELECT * FROM agent_flows
)
SELECT b.run_id, b.fid, b.src_node, b.src_port, b.dst_node, b.dst_port, b.ptype, n.name,
       b.fulltcp, b.hdr_bytes, sa.addr AS src_addr, da.addr AS dst_addr
FROM both_kinds b
LEFT JOIN names n ON n.run_id = b.run_id AND n.fid = b.fid
LEFT JOIN node_addrs sa ON sa.run_id = b.run_id AND sa.node = b.src_node
LEFT JOIN node_addrs da ON da.run_id = b.run_id AND da.node = b.dst_node
