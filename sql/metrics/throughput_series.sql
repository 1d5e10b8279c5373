-- throughput_series(bin_s): per run, flow (all_flows: wired and wireless) and time bin
-- [t, t + bin_s), kbps of the bytes of the flow's data packets delivered in that bin over bin_s:
-- bin k holds the times with floor(time / bin_s) = k and t = k x bin_s is its start;
-- zero-filled from t = 0 to the bin of the run's last trace line (run_ends.t_end). Wired: wire
-- bytes of the data_events `r` events at the destination node (each at its own time).
-- Wireless: each delivered packet of packets once, at its first `r` AGT line at the
-- destination, with its sent size (as flow_stats counts rx_bytes). Hierarchical addresses
-- (hier runs, wired-cum-wireless): each delivered packet once, at its first delivery, with its
-- rx_bytes (packets).
-- uses: all_flows, data_events, packets, run_ends, kbps, node_addrs
CREATE OR REPLACE MACRO throughput_series(bin_s) AS TABLE
WITH fl AS MATERIALIZED (
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, name FROM all_flows
),
hier AS (
    SELECT DISTINCT run_id FROM node_addrs
),
deliveries AS (
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, time, size
    FROM data_events
    ANTI JOIN hier USING (run_id)
    WHERE event = 'r' AND to_node = dst_node
    UNION ALL
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, t_recv, rx_bytes
    FROM packets
    WHERE trace_kind IN ('wireless', 'hier') AND t_recv IS NOT NULL
),
delivered AS (
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port,
           CAST(floor(time / CAST(bin_s AS DOUBLE)) AS BIGINT) AS k, sum(size) AS bytes
    FROM deliveries
    GROUP BY ALL
),
grid AS (
    SELECT f.run_id, f.fid, f.src_node, f.src_port, f.dst_node, f.dst_port, f.name,
           unnest(range(0, CAST(floor(e.t_end / CAST(bin_s AS DOUBLE)) AS BIGINT) + 1)) AS k
    FROM fl f
    JOIN run_ends e USING (run_id)
)
SELECT g.run_id, g.fid, g.k * CAST(bin_s AS DOUBLE) AS t,
       kbps(coalesce(d.bytes, 0), CAST(bin_s AS DOUBLE)) AS kbps,
       g.src_node, g.src_port, g.dst_node, g.dst_port, g.name
FROM grid g
LEFT JOIN delivered d
  ON d.run_id = g.run_id AND d.fid IS NOT DISTINCT FROM g.fid AND d.src_node = g.src_node
 AND d.src_port = g.src_port AND d.dst_node = g.dst_node AND d.dst_port = g.dst_port AND d.k = g.k
ORDER BY g.run_id, g.fid, g.src_node, g.src_port, g.dst_node, g.dst_port, t
