-- queue_waits: per run, link (from_node -> to_node) and packet id, for every packet (any type)
-- that was both enqueued and dequeued there: t_in = its first `+` time on that link, t_out =
-- its first `-` time there, wait_s = t_out - t_in (seconds); with the packet's ptype, size and
-- flow key (fid, src/dst node and port). queue_delay and bottleneck_queue_delay aggregate it.
-- uses: events
CREATE OR REPLACE VIEW queue_waits AS
SELECT run_id, from_node, to_node, pkt_id, t_in, t_out, t_out - t_in AS wait_s,
       ptype, size, fid, src_node, src_port, dst_node, dst_port
FROM (
    SELECT run_id, from_node, to_node, pkt_id,
           min(time) FILTER (WHERE event = '+') AS t_in,
           min(time) FILTER (WHERE event = '-') AS t_out,
           any_value(ptype) AS ptype, any_value(size) AS size, any_value(fid) AS fid,
           any_value(src_node) AS src_node, any_value(src_port) AS src_port,
           any_value(dst_node) AS dst_node, any_value(dst_port) AS dst_port
    FROM events
    WHERE event IN ('+', '-')
    GROUP BY run_id, from_node, to_node, pkt_id
)
WHERE t_in IS NOT NULL AND t_out IS NOT NULL
