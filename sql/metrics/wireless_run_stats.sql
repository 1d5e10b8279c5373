-- wireless_run_stats: per wireless run, over its wireless_flow_stats flows: n_flows; sums of
-- sent_pkts, recv_pkts, dropped_pkts, rx_bytes; pdr = recv / sent; throughput_kbps =
-- kbps(rx_bytes, run end - first send over all flows): the measurement window of the run
-- (run_ends.t_run_end: the stop_s label, else the last trace line; 0 when nothing arrived, NULL
-- when that interval is not positive); mean_delay_ms over all received data packets (the
-- flows' means weighted by their recv_pkts); routing_pkts and nrl from routing_overhead.
-- uses: wireless_flow_stats, routing_overhead, run_ends, kbps
CREATE OR REPLACE VIEW wireless_run_stats AS
WITH fs AS (
    SELECT run_id,
           count(*) AS n_flows,
           sum(sent_pkts) AS sent_pkts,
           sum(recv_pkts) AS recv_pkts,
           sum(dropped_pkts) AS dropped_pkts,
           sum(rx_bytes) AS rx_bytes,
           min(t_first_send) AS t_first,
           sum(mean_delay_ms * recv_pkts) FILTER (WHERE recv_pkts > 0) AS delay_sum_ms
    FROM wireless_flow_stats
    GROUP BY run_id
)
SELECT o.run_id,
       coalesce(fs.n_flows, 0) AS n_flows,
       CAST(coalesce(fs.sent_pkts, 0) AS BIGINT) AS sent_pkts,
       CAST(coalesce(fs.recv_pkts, 0) AS BIGINT) AS recv_pkts,
       CAST(coalesce(fs.dropped_pkts, 0) AS BIGINT) AS dropped_pkts,
       fs.recv_pkts / nullif(fs.sent_pkts, 0) AS pdr,
       CAST(coalesce(fs.rx_bytes, 0) AS BIGINT) AS rx_bytes,
       CASE WHEN coalesce(fs.recv_pkts, 0) = 0 THEN 0.0
            WHEN e.t_run_end - fs.t_first > 0 THEN kbps(fs.rx_bytes, e.t_run_end - fs.t_first) END AS throughput_kbps,
       fs.delay_sum_ms / nullif(fs.recv_pkts, 0) AS mean_delay_ms,
       o.routing_pkts, o.nrl
FROM routing_overhead o
LEFT JOIN fs USING (run_id)
LEFT JOIN run_ends e USING (run_id)
