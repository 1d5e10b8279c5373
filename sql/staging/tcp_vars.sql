-- tcp_vars: TCP agent variables from `$tcp trace cwnd_` files (plain format), one row per
-- change (a step function): var is the ns-2 name (cwnd_, ssthresh_, rtt_, ...), value as
-- printed (cwnd_ in segments, rtt_/srtt_ in seconds). The agent is (src_node, src_port).
-- uses: raw_tcp_vars
CREATE OR REPLACE VIEW tcp_vars AS
SELECT run_id, line_no, time, src_node, src_port, dst_node, dst_port, CAST(var AS VARCHAR) AS var, value
FROM raw_tcp_vars;
