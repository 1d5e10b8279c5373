-- routing_overhead: per wireless run, the routing protocol's own packets (is_routing_packet: sent from
-- the routing agent's port 255, or of a known routing type)
-- at the routing layer: routing_sent_pkts = their `s` RTR lines, routing_fwd_pkts = their
-- `f` RTR lines, routing_pkts = both (each hop-wise transmission counts once, Broch et al.
-- 1998), routing_bytes = their sizes at RTR summed; data_recv_pkts = recv_pkts summed over
-- the run's wireless_flow_stats; nrl (normalised routing load) = routing_pkts /
-- data_recv_pkts, NULL when no data packet arrived.
-- uses: wireless_events, wireless_flow_stats, runs, is_routing_packet
CREATE OR REPLACE VIEW routing_overhead AS
WITH rt AS (
    SELECT run_id,
           count(*) FILTER (WHERE event = 's') AS routing_sent_pkts,
           count(*) FILTER (WHERE event = 'f') AS routing_fwd_pkts,
           sum(size) AS routing_bytes
    FROM wireless_events
    WHERE layer = 'RTR' AND event IN ('s', 'f') AND is_routing_packet(ptype, src_port)
    GROUP BY run_id
),
dl AS (
    SELECT run_id, sum(recv_pkts) AS data_recv_pkts FROM wireless_flow_stats GROUP BY run_id
)
SELECT r.run_id,
       coalesce(rt.routing_sent_pkts, 0) AS routing_sent_pkts,
       coalesce(rt.routing_fwd_pkts, 0) AS routing_fwd_pkts,
       coalesce(rt.routing_sent_pkts + rt.routing_fwd_pkts, 0) AS routing_pkts,
       CAST(coalesce(rt.routing_bytes, 0) AS BIGINT) AS routing_bytes,
       CAST(coalesce(dl.data_recv_pkts, 0) AS BIGINT) AS data_recv_pkts,
       coalesce(rt.routing_sent_pkts + rt.routing_fwd_pkts, 0) / nullif(dl.data_recv_pkts, 0) AS nrl
FROM runs r
LEFT JOIN rt USING (run_id)
LEFT JOIN dl USING (run_id)
WHERE r.trace_kind = 'wireless'
