-- rtt_samples: every round-trip sample of every TCP flow (ptype 'tcp'), the facts the rtt view
-- aggregates: one row per segment sampled, with its seq, the time it was sent (t_send_s) and
-- rtt_s (seconds). A sample: first send of segment seq s at the
-- source node -> first `ack` (`r` at the source node, same fid, reversed addresses) that covers
-- it: one-way TCP ack seq >= s; FullTcp ackno (16-field lines only) >= s + size - 40.
-- Segments sent under more than one packet id are skipped (Karn). samples may be 0.
-- Sends are read from the data packets' (data_events) `+`, `h` and `d` events at the source,
-- as in packets, with a seq (>= 0: a nam trace's transmission `h` lines carry seq -1).
-- uses: data_events, flows, events
CREATE OR REPLACE VIEW rtt_samples AS
WITH tcp_flows AS MATERIALIZED (
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, fulltcp
    FROM flows
    WHERE ptype = 'tcp'
),
segments AS (
    SELECT d.run_id, d.fid, d.src_node, d.src_port, d.dst_node, d.dst_port, d.seq,
           min(d.time) AS t_send,
           count(DISTINCT d.pkt_id) AS copies,
           CASE WHEN any_value(f.fulltcp) THEN d.seq + min(d.size) - 40 ELSE d.seq END AS need
    FROM data_events d
    JOIN tcp_flows f USING (run_id, fid, src_node, src_port, dst_node, dst_port)
    WHERE d.event IN ('+', 'h', 'd') AND d.from_node = d.src_node AND d.seq >= 0
    GROUP BY d.run_id, d.fid, d.src_node, d.src_port, d.dst_node, d.dst_port, d.seq
),
acks AS (  -- acks arriving at the source, keyed by the data flow they acknowledge
    SELECT f.run_id, f.fid, f.src_node, f.src_port, f.dst_node, f.dst_port, e.time,
           CASE WHEN f.fulltcp THEN e.tcp_ackno ELSE e.seq END AS value
    FROM events e
    JOIN tcp_flows f
      ON e.run_id = f.run_id AND e.fid = f.fid
     AND e.src_node = f.dst_node AND e.src_port = f.dst_port
     AND e.dst_node = f.src_node AND e.dst_port = f.src_port
    WHERE e.event = 'r' AND e.ptype = 'ack' AND e.to_node = e.dst_node
),
levels AS (  -- the highest ack value seen so far; the first time each level was reached
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, reach, min(time) AS t_ack
    FROM (
        SELECT *, max(value) OVER (
                      PARTITION BY run_id, fid, src_node, src_port, dst_node, dst_port
                      ORDER BY time ROWS UNBOUNDED PRECEDING) AS reach
        FROM acks
        WHERE value IS NOT NULL
    )
    GROUP BY ALL
),
merged AS (  -- Karn-valid segments and ack levels, in one value order per flow
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port,
           need AS value, 0 AS kind, seq, t_send, CAST(NULL AS DOUBLE) AS t_ack
    FROM segments
    WHERE copies = 1
    UNION ALL
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, reach, 1, NULL, NULL, t_ack
    FROM levels
),
samples AS (  -- levels rise with time, so the lowest level >= need is the first to cover it
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, seq, t_send, t_covered - t_send AS sample_s
    FROM (
        SELECT *, first_value(t_ack IGNORE NULLS) OVER (
                      PARTITION BY run_id, fid, src_node, src_port, dst_node, dst_port
                      ORDER BY value, kind
                      ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS t_covered
        FROM merged
    )
    WHERE kind = 0 AND t_covered IS NOT NULL
)
SELECT run_id, fid, src_node, src_port, dst_node, dst_port, seq, t_send AS t_send_s, sample_s AS rtt_s
FROM samples
