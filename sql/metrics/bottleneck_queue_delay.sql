-- bottleneck_queue_delay: paper 002's latency ("the average difference between a packet being
-- enqueued and dequeued"), per flow of a wired run, at the run's bottleneck link: the link
-- (from_node -> to_node) with the most `d` events in the run; in a run without drops, the one
-- with the largest queue_delay.mean_ms (ties: lowest from_node, then to_node). Over the flow's
-- data packets (flows, is_data_packet) waiting there (queue_waits). Columns: run_id, fid,
-- src/dst node and port, from_node, to_node (the bottleneck), link_drops (its `d` events, all
-- packets), pkts (the flow's packets counted), mean_ms, p95_ms (percentile) of their wait.
-- Flows with no data packet through the bottleneck are left out.
-- queue_waits is read once (it groups every packet of every link: the one costly step): per
-- run, link and flow key, the count and sum of all its waits (the link's mean wait, which
-- ranks links as queue_delay.mean_ms does) and the list of its data packets' waits, of which
-- the bottleneck's are then aggregated.
-- uses: events, queue_waits, flows, is_data_packet, percentile
CREATE OR REPLACE VIEW bottleneck_queue_delay AS
WITH link_drops AS (
    SELECT run_id, from_node, to_node, count(*) AS drops
    FROM events
    WHERE event = 'd'
    GROUP BY ALL
),
waits AS (  -- per run, link, flow key and whether they are its data packets
    SELECT w.run_id, w.from_node, w.to_node, w.fid, w.src_node, w.src_port, w.dst_node, w.dst_port,
           coalesce(f.run_id IS NOT NULL AND is_data_packet(w.ptype, w.size, f.fulltcp), false) AS data,
           count(*) AS n, sum(w.wait_s) AS wait_sum_s, list(w.wait_s) AS waits
    FROM queue_waits w
    LEFT JOIN flows f USING (run_id, fid, src_node, src_port, dst_node, dst_port)
    GROUP BY ALL
),
bottleneck AS (
    SELECT run_id, from_node, to_node, coalesce(d.drops, 0) AS link_drops
    FROM (SELECT run_id, from_node, to_node, sum(wait_sum_s) / sum(n) AS mean_s
          FROM waits GROUP BY ALL) q
    LEFT JOIN link_drops d USING (run_id, from_node, to_node)
    QUALIFY row_number() OVER (PARTITION BY run_id
                               ORDER BY coalesce(d.drops, 0) DESC, q.mean_s DESC, from_node, to_node) = 1
)
SELECT w.run_id, w.fid, w.src_node, w.src_port, w.dst_node, w.dst_port, w.from_node, w.to_node,
       any_value(b.link_drops) AS link_drops,
       count(*) AS pkts,
       avg(u.wait_s) * 1000 AS mean_ms,
       percentile(u.wait_s, 0.95) * 1000 AS p95_ms
FROM waits w
JOIN bottleneck b USING (run_id, from_node, to_node)
CROSS JOIN unnest(w.waits) AS u(wait_s)
WHERE w.data
GROUP BY w.run_id, w.fid, w.src_node, w.src_port, w.dst_node, w.dst_port, w.from_node, w.to_node
