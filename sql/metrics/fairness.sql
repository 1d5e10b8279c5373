-- fairness: per packet-trace run (wired, wireless, hier or nam), Jain's index (sum x)^2 / (n * sum x^2) over the throughput_kbps x
-- (over the measurement window, so a starved flow counts as starved) of its TCP data flows (ptype 'tcp', throughput not NULL, zero-throughput flows included), with
-- min, max and max - min; all four NULL when the run has fewer than two such flows.
-- uses: flow_stats, runs, is_packet_trace
CREATE OR REPLACE VIEW fairness AS
WITH agg AS (
    SELECT run_id,
           count(*) AS n,
           sum(throughput_kbps) AS s,
           sum(throughput_kbps * throughput_kbps) AS s2,
           min(throughput_kbps) AS lo,
           max(throughput_kbps) AS hi
    FROM flow_stats
    WHERE ptype = 'tcp' AND throughput_kbps IS NOT NULL
    GROUP BY run_id
)
SELECT r.run_id,
       coalesce(a.n, 0) AS n_flows,
       CASE WHEN a.n >= 2 AND a.s2 > 0 THEN a.s * a.s / (a.n * a.s2) END AS jain_index,
       CASE WHEN a.n >= 2 THEN a.lo END AS min_kbps,
       CASE WHEN a.n >= 2 THEN a.hi END AS max_kbps,
       CASE WHEN a.n >= 2 THEN a.hi - a.lo END AS abs_diff_kbps
FROM runs r
LEFT JOIN agg a USING (run_id)
WHERE is_packet_trace(r.trace_kind)
