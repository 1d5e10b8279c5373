-- queue_samples: queue monitor output per link (from_node -> to_node). sample_kind 'event':
-- a `q -t` line, bytes/pkts in the queue right after an arrival, departure or drop;
-- 'periodic': a `monitor-queue` sample, bytes/pkts time-averaged over the last interval and
-- the six counters cumulative since the start.
-- uses: raw_queue_samples
CREATE OR REPLACE VIEW queue_samples AS
SELECT run_id, line_no, CAST(sample_kind AS VARCHAR) AS sample_kind, time, from_node, to_node,
       bytes, pkts, arrivals_pkts, departures_pkts, drops_pkts,
       arrivals_bytes, departures_bytes, drops_bytes
FROM raw_queue_samples;
