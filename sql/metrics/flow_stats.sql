-- flow_stats: per run and flow (all_flows: wired flows and wireless flows alike), docs/contract.md's
-- metrics over the measurement window [first send, run end] (run_ends.t_run_end: the stop_s
-- label, else the run's last trace line): flow_stats_in('run'), where every column is defined.
-- Wired flows follow docs/contract.md, wireless flows docs/contract-wireless.md (read at the agent
-- layer; rx_bytes is application bytes, the size the agent sent; fulltcp and hdr_bytes NULL).
-- Extra columns: src_port, dst_port, fulltcp, hdr_bytes, tx_bytes, drops_per_s, t_first_send,
-- t_last_recv, t_run_end.
-- uses: flow_stats_in
CREATE OR REPLACE VIEW flow_stats AS
SELECT * EXCLUDE (window_kind) FROM flow_stats_in('run', NULL, NULL, NULL)
