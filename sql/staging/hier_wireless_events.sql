-- hier_wireless_events: the rows of wireless_events of the runs with hierarchical addresses only
-- (trace_kind 'hier', read from their files alone). As in wireless_events: every event line of
-- the wireless traces (old CMU format and new -t
-- format, fmt says which), one row per line: event s r f d (the old format's D is stored as
-- d), time (s), node, layer (AGT RTR MAC IFQ), reason (drop reason, NULL for ---), pkt_id,
-- ptype, size (bytes at that layer), the MAC header (mac_dur, mac_dst, mac_src, mac_type,
-- from hex), the IP addresses, ttl, next_hop, fid (new format only), seq and tcp_ack (TCP) or
-- seq (CBR), n_forwards, the node position x, y, z (new format only) and detail (the rest of
-- routing / ARP lines, verbatim). New-format RTS/CTS/ACK lines have NULL ptype and size.
-- Definitions: docs/contract-wireless.md.
-- uses: raw_hier_wireless_events
CREATE OR REPLACE VIEW hier_wireless_events AS
SELECT
    run_id, line_no, CAST(fmt AS VARCHAR) AS fmt, CAST(event AS VARCHAR) AS event, time, node,
    CAST(layer AS VARCHAR) AS layer, CAST(reason AS VARCHAR) AS reason, pkt_id,
    CAST(ptype AS VARCHAR) AS ptype, size, mac_dur, mac_dst, mac_src, mac_type,
    src_node, src_port, dst_node, dst_port, ttl, next_hop, fid, seq, tcp_ack, n_forwards,
    x, y, z, detail
FROM raw_hier_wireless_events;
