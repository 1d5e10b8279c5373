-- wireless_flow_stats: per flow of a wireless run (wireless_flows), read at the agent layer
-- only (docs/contract-wireless.md), over wireless_packets. A data packet is named by (pkt_id, ptype).
-- sent = data packets with an `s` AGT line at the source node; recv = those with an `r` AGT
-- line at the destination node; dropped = sent, never received, and with a `d` line of the
-- same (pkt_id, ptype) at any layer and node; tx_bytes / rx_bytes = the size on the `s` AGT
-- line of the sent / received packets (not the `r` size: routing adds 20 B of IP header to
-- non-TCP packets); throughput = rx_bytes x 8 / 1000 / (last delivery - first send), 0 when
-- nothing arrived, NULL when that interval is not positive; goodput = payload of the first
-- delivery of each seq (packets without one count each once; tcp: size - 40, never
-- negative; else the size) over the same
-- interval; delay = first `r` AGT at the destination - first `s` AGT at the source (ms;
-- quantiles interpolate linearly); jitter = mean |D_i - D_(i-1)| in arrival (line) order;
-- pdr = recv / sent; drop_rate = dropped / sent; t_first_send, t_last_recv in seconds.
CREATE OR REPLACE VIEW wireless_flow_stats AS
WITH fl AS MATERIALIZED (
    SELECT *, row_number() OVER () AS flow_no FROM wireless_flows
),
pk AS MATERIALIZED (  -- wireless_packets, numbered by flow
    SELECT f.flow_no, p.pkt_id, p.size, p.seq, p.t_sent, p.ptype, p.t_recv, p.recv_line, p.lost_with_drop
    FROM wireless_packets p
    JOIN fl f
      ON p.run_id = f.run_id AND p.fid IS NOT DISTINCT FROM f.fid
     AND p.src_node = f.src_node AND p.src_port = f.src_port
     AND p.dst_node = f.dst_node AND p.dst_port = f.dst_port
),
agg AS (
    SELECT flow_no,
           count(*) AS sent_pkts,
           count(t_recv) AS recv_pkts,
           count(*) FILTER (WHERE lost_with_drop) AS dropped_pkts,
           sum(size) AS tx_bytes,
           coalesce(sum(size) FILTER (WHERE t_recv IS NOT NULL), 0) AS rx_bytes,
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
        WHERE t_recv IS NOT NULL
    )
    GROUP BY flow_no
),
payload AS (  -- first delivery of each seq
    SELECT flow_no,
           sum(CASE WHEN ptype = 'tcp' THEN greatest(size - 40, 0) ELSE size END) AS payload_bytes
    FROM (
        SELECT flow_no, seq, arg_min(size, recv_line) AS size, arg_min(ptype, recv_line) AS ptype
        FROM pk
        WHERE t_recv IS NOT NULL
        GROUP BY flow_no, seq, CASE WHEN seq IS NULL THEN pkt_id END  -- no seq: each packet once
    )
    GROUP BY flow_no
)
SELECT f.run_id, f.fid, f.ptype, f.name, f.src_node, f.src_port, f.dst_node, f.dst_port,
       coalesce(a.sent_pkts, 0) AS sent_pkts,
       coalesce(a.recv_pkts, 0) AS recv_pkts,
       coalesce(a.dropped_pkts, 0) AS dropped_pkts,
       CAST(coalesce(a.tx_bytes, 0) AS BIGINT) AS tx_bytes,
       CAST(coalesce(a.rx_bytes, 0) AS BIGINT) AS rx_bytes,
       CASE WHEN coalesce(a.recv_pkts, 0) = 0 THEN 0.0
            WHEN a.t_last_recv > a.t_first_send
            THEN a.rx_bytes * 8 / 1000 / (a.t_last_recv - a.t_first_send) END AS throughput_kbps,
       CASE WHEN coalesce(a.recv_pkts, 0) = 0 THEN 0.0
            WHEN a.t_last_recv > a.t_first_send
            THEN p.payload_bytes * 8 / 1000 / (a.t_last_recv - a.t_first_send) END AS goodput_kbps,
       a.mean_delay_ms,
       a.q[1] * 1000 AS p50_delay_ms,
       a.q[2] * 1000 AS p95_delay_ms,
       a.q[3] * 1000 AS p99_delay_ms,
       j.jitter_ms,
       a.recv_pkts / nullif(a.sent_pkts, 0) AS pdr,
       a.dropped_pkts / nullif(a.sent_pkts, 0) AS drop_rate,
       a.t_first_send, a.t_last_recv
FROM fl f
LEFT JOIN agg a USING (flow_no)
LEFT JOIN jitter j USING (flow_no)
LEFT JOIN payload p USING (flow_no)
