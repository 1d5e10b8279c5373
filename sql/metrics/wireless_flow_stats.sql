-- wireless_flow_stats: the wireless flows' rows of flow_stats (per flow of a wireless run,
-- read at the agent layer only, docs/contract-wireless.md; every column is defined once, in
-- flow_stats_in over packets, here asked for the wireless flows only), with the columns that matter for wireless flows: tx_bytes (the
-- size on the `s` AGT lines of the sent packets) and rx_bytes (the same size, of the received
-- ones: not the `r` size, as routing adds 20 B of IP header to non-TCP packets) among them.
-- uses: flow_stats_in
CREATE OR REPLACE VIEW wireless_flow_stats AS
SELECT run_id, fid, ptype, name, src_node, src_port, dst_node, dst_port,
       sent_pkts, recv_pkts, dropped_pkts, tx_bytes, rx_bytes,
       throughput_kbps, goodput_kbps, mean_delay_ms, p50_delay_ms, p95_delay_ms, p99_delay_ms,
       jitter_ms, pdr, drop_rate, t_first_send, t_last_recv,
       active_throughput_kbps, in_flight_pkts, drops_per_s, t_run_end
FROM flow_stats_in('run', NULL, NULL, 'wireless')
