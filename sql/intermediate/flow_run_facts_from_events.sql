-- flow_run_facts_from_events: per flow of a packet-trace run (wired and wireless alike: the
-- flow key of its packet_facts rows), what its packets decide over the whole run in their
-- order of arrival, which a query could only get by sorting them: what `flow_run_facts`
-- stores per run at ingest (after packet_facts, which it reads), and what it computes for a
-- run ingested without them.
-- Columns: trace_kind and the flow key; jitter_s = the mean |D_i - D_(i-1)| of the delays D
-- (t_recv - t_sent) of its packets delivered and sent, in arrival (trace line, recv_line)
-- order (NULL with fewer than two): flow_stats' jitter over the whole run.
-- uses: packet_facts
CREATE OR REPLACE VIEW flow_run_facts_from_events AS
SELECT trace_kind, run_id, fid, src_node, src_port, dst_node, dst_port,
       list_avg(list_transform(range(2, len(d) + 1), lambda i: abs(d[i] - d[i - 1]))) AS jitter_s
FROM (
    SELECT trace_kind, run_id, fid, src_node, src_port, dst_node, dst_port,
           list(t_recv - t_sent ORDER BY recv_line)
               FILTER (WHERE t_recv IS NOT NULL AND t_sent IS NOT NULL) AS d
    FROM packet_facts
    GROUP BY trace_kind, run_id, fid, src_node, src_port, dst_node, dst_port
)
