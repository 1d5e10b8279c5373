-- rtt: per TCP flow (ptype 'tcp'), round-trip samples: first send of segment seq s at the
-- source node -> first `ack` (`r` at the source node, same fid, reversed addresses) that covers
-- it: one-way TCP ack seq >= s; FullTcp ackno (16-field lines only) >= s + size - 40.
-- Segments sent under more than one packet id are skipped (Karn). samples may be 0.
-- Sends are read from the data packets' (data_events) `+`, `h` and `d` events at the source,
-- as in packets, with a seq (>= 0: a nam trace's transmission `h` lines carry seq -1).
-- The samples themselves: rtt_samples.
-- uses: rtt_samples, flows, percentile
CREATE OR REPLACE VIEW rtt AS
WITH tcp_flows AS (
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port
    FROM flows
    WHERE ptype = 'tcp'
)
SELECT f.run_id, f.fid,
       count(s.rtt_s) AS samples,
       avg(s.rtt_s) * 1000 AS mean_ms,
       percentile(s.rtt_s, 0.95) * 1000 AS p95_ms,
       f.src_node, f.src_port, f.dst_node, f.dst_port
FROM tcp_flows f
LEFT JOIN rtt_samples s USING (run_id, fid, src_node, src_port, dst_node, dst_port)
GROUP BY f.run_id, f.fid, f.src_node, f.src_port, f.dst_node, f.dst_port
