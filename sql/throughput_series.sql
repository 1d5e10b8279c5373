-- throughput_series(bin_s): per run, flow (see flows) and time bin [t, t + bin_s), the wire
-- bytes of the flow's data packets delivered (`r` at the destination node) in that bin x 8 /
-- 1000 / bin_s: bin k holds the times with floor(time / bin_s) = k and t = k x bin_s is its
-- start; zero-filled from t = 0 to the bin of the run's last event.
CREATE OR REPLACE MACRO throughput_series(bin_s) AS TABLE
WITH fl AS MATERIALIZED (
    SELECT * FROM flows
),
delivered AS (
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, k, sum(size) AS bytes
    FROM (
        SELECT e.run_id, e.fid, e.src_node, e.src_port, e.dst_node, e.dst_port, e.size,
               CAST(floor(e.time / CAST(bin_s AS DOUBLE)) AS BIGINT) AS k
        FROM events e
        JOIN fl f USING (run_id, fid, src_node, src_port, dst_node, dst_port)
        WHERE e.event = 'r' AND e.to_node = e.dst_node AND e.ptype <> 'ack'
          AND NOT (f.fulltcp AND e.size <= 40)
    )
    GROUP BY run_id, fid, src_node, src_port, dst_node, dst_port, k
),
last_bin AS (
    SELECT run_id, CAST(floor(t_last / CAST(bin_s AS DOUBLE)) AS BIGINT) AS k_last
    FROM (SELECT run_id, max(time) AS t_last FROM events GROUP BY run_id)
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
LEFT JOIN delivered d USING (run_id, fid, src_node, src_port, dst_node, dst_port, k)
ORDER BY g.run_id, g.fid, g.src_node, g.src_port, g.dst_node, g.dst_port, t
