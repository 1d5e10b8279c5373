-- onperiod_flow_stats: per flow of the runs that record a CBR on-period (labels cbr_start and
-- cbr_stop, seconds: the queue-influence scenario, paper 004's experiment 3, which reports the
-- TCP flow's throughput while the CBR burst is on), the columns of flow_stats over
-- [cbr_start, cbr_stop) of its run, with flow_stats_window's rules: flow_stats_in('onperiod').
-- uses: flow_stats_in
CREATE OR REPLACE VIEW onperiod_flow_stats AS
SELECT * EXCLUDE (window_kind) FROM flow_stats_in('onperiod', NULL, NULL, NULL)
