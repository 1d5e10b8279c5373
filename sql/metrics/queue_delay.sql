-- queue_delay: per run and link (from_node -> to_node), the waiting time of every packet (any
-- type) that was both enqueued and dequeued there (queue_waits: first `-` time - first `+`
-- time of the same packet id on that link), in ms: pkts = such packets, mean_ms, p95_ms
-- (percentile).
-- uses: queue_waits, percentile
CREATE OR REPLACE VIEW queue_delay AS
SELECT run_id, from_node, to_node,
       count(*) AS pkts,
       avg(wait_s) * 1000 AS mean_ms,
       percentile(wait_s, 0.95) * 1000 AS p95_ms
FROM queue_waits
GROUP BY run_id, from_node, to_node
