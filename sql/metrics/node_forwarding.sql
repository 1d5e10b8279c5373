-- node_forwarding: per node of a wireless run (every node that wrote an event line): the
-- `f` RTR lines it wrote, of data (fwd_data_pkts: neither a routing packet nor ARP; data and
-- TCP ACKs relayed, fwd_data_bytes their sizes at RTR summed) and of routing packets
-- (fwd_routing_pkts, see is_routing_packet).
-- uses: wireless_events, is_routing_packet
CREATE OR REPLACE VIEW node_forwarding AS
WITH nodes AS (
    SELECT DISTINCT run_id, node FROM wireless_events
),
fw AS (
    SELECT run_id, node,
           count(*) FILTER (WHERE NOT is_routing_packet(ptype, src_port) AND coalesce(ptype, '') <> 'ARP') AS fwd_data_pkts,
           sum(size) FILTER (WHERE NOT is_routing_packet(ptype, src_port) AND coalesce(ptype, '') <> 'ARP') AS fwd_data_bytes,
           count(*) FILTER (WHERE is_routing_packet(ptype, src_port)) AS fwd_routing_pkts
    FROM wireless_events
    WHERE layer = 'RTR' AND event = 'f'
    GROUP BY run_id, node
)
SELECT n.run_id, n.node,
       coalesce(fw.fwd_data_pkts, 0) AS fwd_data_pkts,
       CAST(coalesce(fw.fwd_data_bytes, 0) AS BIGINT) AS fwd_data_bytes,
       coalesce(fw.fwd_routing_pkts, 0) AS fwd_routing_pkts
FROM nodes n
LEFT JOIN fw USING (run_id, node)
