-- throughput_series(bin_s): per run, flow (see flows, and wireless_flows for wireless runs)
-- and time bin [t, t + bin_s), the bytes of the flow's data packets delivered in that bin x 8
-- / 1000 / bin_s: bin k holds the times with floor(time / bin_s) = k and t = k x bin_s is its
-- start; zero-filled from t = 0 to the bin of the run's last event. Wired: wire bytes of the
-- `r` events at the destination node. Wireless: each delivered packet of wireless_packets once,
-- at its first `r` AGT line at the destination, with its sent size (as wireless_flow_stats
-- counts rx_bytes).
CREATE OR REPLACE MACRO throughput_series(bin_s) AS TABLE
WITH fl AS MATERIALIZED (
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, name FROM flows
    UNION ALL
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, name FROM wireless_flows
),
wired_delivered AS (
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, k, sum(size) AS bytes
    FROM (
        SELECT e.run_id, e.fid, e.src_node, e.src_port, e.dst_node, e.dst_port, e.size,
               CAST(floor(e.time / CAST(bin_s AS DOUBLE)) AS BIGINT) AS k
        FROM events e
        JOIN flows f USING (run_id, fid, src_node, src_port, dst_node, dst_port)
        WHERE e.event = 'r' AND e.to_node = e.dst_node AND e.ptype <> 'ack'
          AND NOT (f.fulltcp AND e.size <= 40)
    )
    GROUP BY run_id, fid, src_node, src_port, dst_node, dst_port, k
),
wl_delivered AS (
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, k, sum(size) AS bytes
    FROM (
        SELECT run_id, fid, src_node, src_port, dst_node, dst_port, size,
               CAST(floor(t_recv / CAST(bin_s AS DOUBLE)) AS BIGINT) AS k
        FROM wireless_packets
        WHERE t_recv IS NOT NULL
    )
    GROUP BY run_id, fid, src_node, src_port, dst_node, dst_port, k
),
delivered AS (
    SELECT * FROM wired_delivered UNION ALL SELECT * FROM wl_delivered
),
last_bin AS (
    SELECT run_id, CAST(floor(t_last / CAST(bin_s AS DOUBLE)) AS BIGINT) AS k_last
    FROM (SELECT run_id, max(t_last) AS t_last
          FROM (SELECT run_id, max(time) AS t_last FROM events GROUP BY run_id
                UNION ALL
                SELECT run_id, max(time) AS t_last FROM wireless_events GROUP BY run_id)
          GROUP BY run_id)
),
grid AS (
    SELECT f.run_id, f.fid, f.src_node, f.src_port, f.dst_node, f.dst_port, f.name,
           unnest(range(0, l.k_last + 1)) AS k
    FROM fl f
    JOIN last_bin l USING (run_id)
)
SELECT g.run_id, g.fid, g.k * CAST(bin_s AS DOUBLE) AS t,
       coalesce(d.bytes, 0) * 8 / 1000 / CAST(bin_s AS DOUBLE) AS kbps,
       g.src_node, g.src_port, g.dst_node, g.dst_port, g.name
FROM grid g
LEFT JOIN delivered d
  ON d.run_id = g.run_id AND d.fid IS NOT DISTINCT FROM g.fid AND d.src_node = g.src_node
 AND d.src_port = g.src_port AND d.dst_node = g.dst_node AND d.dst_port = g.dst_port AND d.k = g.k
ORDER BY g.run_id, g.fid, g.src_node, g.src_port, g.dst_node, g.dst_port, t
