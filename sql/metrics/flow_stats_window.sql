-- flow_stats_window(t0, t1): the columns of flow_stats over the interval [t0, t1) (seconds)
-- only, warm-up and tail excluded (docs/contract.md): packets first sent in it for counts, delay,
-- jitter, PDR and drops; deliveries in it, over t1 - t0, for throughput and goodput; active
-- throughput over [max(t0, first send), last delivery in it]; t_run_end = t1. Every flow of
-- flow_stats has a row. Defined by flow_stats_in('window', t0, t1, NULL).
-- uses: flow_stats_in
CREATE OR REPLACE MACRO flow_stats_window(t0, t1) AS TABLE
SELECT * EXCLUDE (window_kind) FROM flow_stats_in('window', t0, t1, NULL)
