-- packet_delays: every row of packets with its one-way delay: the one definition of the
-- per-packet delay, which flow_stats_in's delay and jitter columns, the dashboard's delay
-- distributions and the report's delay CDFs all read.
-- Columns: those of packets; delay_s = t_recv - t_sent (the first delivery at the
-- destination minus the first send from the source, s) and delay_ms = delay_s * 1000, both
-- NULL unless the packet was sent and delivered. Aggregates (a mean, a percentile) are taken
-- over delay_s and then scaled by 1000, as flow_run_facts stores them (in s), so that a
-- flow's delay columns are the same whether read from the stored facts or computed here.
-- flow_run_facts_from_events, a stored (label-free, hashed) definition over packet_facts,
-- computes the same t_recv - t_sent itself: tests/test_packet_delays.py checks they agree.
-- uses: packets
CREATE OR REPLACE VIEW packet_delays AS
SELECT *,
       t_recv - t_sent AS delay_s,
       (t_recv - t_sent) * 1000 AS delay_ms
FROM packets
