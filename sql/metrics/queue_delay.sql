-- queue_delay: per run and link (from_node -> to_node), the waiting time of every packet (any
-- type) that was both enqueued and dequeued there: first `-` time - first `+` time of the same
-- packet id on that link, in ms (pkts = such packets; p95 interpolates linearly).
-- uses: events, percentile
CREATE OR REPLACE VIEW queue_delay AS
WITH per_packet AS (
    SELECT run_id, from_node, to_node, pkt_id,
           min(time) FILTER (WHERE event = '+') AS t_in,
           min(time) FILTER (WHERE event = '-') AS t_out
    FROM events
    WHERE event IN ('+', '-')
    GROUP BY run_id, from_node, to_node, pkt_id
)
SELECT run_id, from_node, to_node,
       count(*) AS pkts,
       avg(t_out - t_in) * 1000 AS mean_ms,
       percentile(t_out - t_in, 0.95) * 1000 AS p95_ms
FROM per_packet
WHERE t_in IS NOT NULL AND t_out IS NOT NULL
GROUP BY run_id, from_node, to_node
