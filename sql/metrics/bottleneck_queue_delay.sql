-- bottleneck_queue_delay: paper 002's latency ("the average difference between a packet being
-- enqueued and dequeued"), per flow of a wired run, at the run's bottleneck link: the link
-- (from_node -> to_node) with the most `d` events in the run; in a run without drops, the one
-- with the largest queue_delay.mean_ms (ties: lowest from_node, then to_node). For each data
-- packet of the flow (data_events) with both a `+` and a `-` on that link: first `-` time -
-- first `+` time there. Columns: run_id, fid, src/dst node and port, from_node, to_node (the
-- bottleneck), link_drops (its `d` events, all packets), pkts (the flow's packets counted),
-- mean_ms, p95_ms (percentile). Flows with no packet through the bottleneck are left out.
-- uses: events, data_events, queue_delay, percentile
CREATE OR REPLACE VIEW bottleneck_queue_delay AS
WITH link_drops AS (
    SELECT run_id, from_node, to_node, count(*) AS drops
    FROM events
    WHERE event = 'd'
    GROUP BY ALL
),
bottleneck AS (
    SELECT run_id, from_node, to_node, coalesce(d.drops, 0) AS link_drops
    FROM queue_delay q
    LEFT JOIN link_drops d USING (run_id, from_node, to_node)
    QUALIFY row_number() OVER (PARTITION BY run_id
                               ORDER BY coalesce(d.drops, 0) DESC, q.mean_ms DESC, from_node, to_node) = 1
),
per_packet AS (
    SELECT e.run_id, e.fid, e.src_node, e.src_port, e.dst_node, e.dst_port, e.pkt_id,
           any_value(b.from_node) AS from_node, any_value(b.to_node) AS to_node,
           any_value(b.link_drops) AS link_drops,
           min(e.time) FILTER (WHERE e.event = '+') AS t_in,
           min(e.time) FILTER (WHERE e.event = '-') AS t_out
    FROM data_events e
    JOIN bottleneck b USING (run_id, from_node, to_node)
    WHERE e.event IN ('+', '-')
    GROUP BY e.run_id, e.fid, e.src_node, e.src_port, e.dst_node, e.dst_port, e.pkt_id
)
SELECT run_id, fid, src_node, src_port, dst_node, dst_port, from_node, to_node,
       any_value(link_drops) AS link_drops,
       count(*) AS pkts,
       avg(t_out - t_in) * 1000 AS mean_ms,
       percentile(t_out - t_in, 0.95) * 1000 AS p95_ms
FROM per_packet
WHERE t_in IS NOT NULL AND t_out IS NOT NULL
GROUP BY run_id, fid, src_node, src_port, dst_node, dst_port, from_node, to_node
