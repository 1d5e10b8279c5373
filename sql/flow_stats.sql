-- flow_stats: per run and flow (see flows), CONTRACT.md's metrics over its data packets:
-- sent = packet ids seen leaving the source node, recv = packet ids with an `r` at the
-- destination node, dropped = their `d` events, rx_bytes = size summed over those `r` events,
-- throughput = rx_bytes x 8 / 1000 / (last delivery - first send), goodput = payload (size -
-- flows.hdr_bytes, never negative) of the first delivery of each seq over the same interval,
-- delay = first `r` at the destination - first send (quantiles interpolate linearly),
-- jitter = mean |D_i - D_(i-1)| in arrival (trace line) order, pdr and drop_rate per sent.
-- Throughput and goodput are 0 when nothing arrived, NULL when no send was seen.
-- Leaving the source is read from the `+` and `d` events whose from_node is the source: ns-2
-- writes a packet's `+` on a link before its `-` and `r` there, and a loss model at the link
-- head drops with a bare `d`. A packet id names one packet within a run. Extra columns:
-- src_port, dst_port, fulltcp, hdr_bytes (from flows), t_first_send, t_last_recv (seconds).
-- Wireless runs: their flows come from wireless_flow_stats (the agent-layer definitions of
-- docs/contract-wireless.md; rx_bytes there is application bytes, the size the agent sent),
-- with the columns in common; fulltcp and hdr_bytes are NULL for them.
CREATE OR REPLACE VIEW flow_stats AS
WITH fl AS MATERIALIZED (  -- flows, computed once, numbered for cheap joins
    SELECT *, row_number() OVER () AS flow_no FROM flows
),
trip_events AS (  -- data packets leaving the source, arriving at the destination, dropped
    SELECT e.pkt_id, f.flow_no, e.seq, e.size, e.event, e.time, e.line_no,
           e.event <> 'r' AND e.from_node = e.src_node AS at_src
    FROM events e
    JOIN fl f
      ON e.run_id = f.run_id AND e.fid = f.fid
     AND e.src_node = f.src_node AND e.src_port = f.src_port
     AND e.dst_node = f.dst_node AND e.dst_port = f.dst_port
    WHERE e.ptype <> 'ack'
      AND (e.event = 'r' AND e.to_node = e.dst_node
           OR e.event = 'd'
           OR e.event = '+' AND e.from_node = e.src_node)
      AND NOT (f.fulltcp AND e.size <= 40)
),
pk AS MATERIALIZED (  -- one row per data packet (a packet id names one packet in a run)
    SELECT flow_no, pkt_id,
           any_value(seq) AS seq,
           any_value(size) AS size,
           min(time) FILTER (WHERE at_src) AS t_sent,
           min(time) FILTER (WHERE event = 'r') AS t_recv,
           min(line_no) FILTER (WHERE event = 'r') AS recv_line,
           sum(size) FILTER (WHERE event = 'r') AS rx_bytes,
           count(*) FILTER (WHERE event = 'd') AS drops
    FROM trip_events
    GROUP BY flow_no, pkt_id
),
agg AS (
    SELECT flow_no,
           count(t_sent) AS sent_pkts,
           count(t_recv) AS recv_pkts,
           sum(drops) AS dropped_pkts,
           coalesce(sum(rx_bytes), 0) AS rx_bytes,
           min(t_sent) AS t_first_send,
           max(t_recv) AS t_last_recv,
           avg(t_recv - t_sent) * 1000 AS mean_delay_ms,
           quantile_cont(t_recv - t_sent, [0.5, 0.95, 0.99]) AS q
    FROM pk
    GROUP BY flow_no
),
jitter AS (
    SELECT flow_no, avg(abs(delay - prev)) * 1000 AS jitter_ms
    FROM (
        SELECT flow_no, t_recv - t_sent AS delay,
               lag(t_recv - t_sent) OVER (PARTITION BY flow_no ORDER BY recv_line) AS prev
        FROM pk
        WHERE t_recv IS NOT NULL AND t_sent IS NOT NULL
    )
    GROUP BY flow_no
),
first_delivery AS (
    SELECT flow_no, seq, arg_min(size, recv_line) AS size
    FROM pk
    WHERE t_recv IS NOT NULL
    GROUP BY flow_no, seq
),
payload AS (  -- both header sizes per flow (0 and 40 bytes); the flow's hdr_bytes picks one
    SELECT flow_no,
           sum(greatest(size, 0)) AS payload_0,
           coalesce(sum(size - 40) FILTER (WHERE size > 40), 0) AS payload_40
    FROM first_delivery
    GROUP BY flow_no
)
SELECT f.run_id, f.fid, f.ptype, f.name, f.src_node, f.dst_node,
       coalesce(a.sent_pkts, 0) AS sent_pkts,
       coalesce(a.recv_pkts, 0) AS recv_pkts,
       CAST(coalesce(a.dropped_pkts, 0) AS BIGINT) AS dropped_pkts,
       CAST(coalesce(a.rx_bytes, 0) AS BIGINT) AS rx_bytes,
       CASE WHEN coalesce(a.recv_pkts, 0) = 0 THEN 0.0
            WHEN a.t_last_recv > a.t_first_send
            THEN a.rx_bytes * 8 / 1000 / (a.t_last_recv - a.t_first_send) END AS throughput_kbps,
       CASE WHEN coalesce(a.recv_pkts, 0) = 0 THEN 0.0
            WHEN a.t_last_recv > a.t_first_send
            THEN CASE f.hdr_bytes WHEN 0 THEN p.payload_0 WHEN 40 THEN p.payload_40 END
                 * 8 / 1000 / (a.t_last_recv - a.t_first_send)
       END AS goodput_kbps,
       a.mean_delay_ms,
       a.q[1] * 1000 AS p50_delay_ms,
       a.q[2] * 1000 AS p95_delay_ms,
       a.q[3] * 1000 AS p99_delay_ms,
       j.jitter_ms,
       a.recv_pkts / nullif(a.sent_pkts, 0) AS pdr,
       a.dropped_pkts / nullif(a.sent_pkts, 0) AS drop_rate,
       f.src_port, f.dst_port, f.fulltcp, f.hdr_bytes, a.t_first_send, a.t_last_recv
FROM fl f
LEFT JOIN agg a USING (flow_no)
LEFT JOIN jitter j USING (flow_no)
LEFT JOIN payload p USING (flow_no)
UNION ALL BY NAME
SELECT run_id, fid, ptype, name, src_node, dst_node, sent_pkts, recv_pkts, dropped_pkts, rx_bytes,
       throughput_kbps, goodput_kbps, mean_delay_ms, p50_delay_ms, p95_delay_ms, p99_delay_ms,
       jitter_ms, pdr, drop_rate, src_port, dst_port, t_first_send, t_last_recv
FROM wireless_flow_stats
