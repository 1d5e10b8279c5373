-- flow_run_facts_from_events: per flow of a packet-trace run (wired and wireless alike: the
-- flow key of its packet_facts rows), what its packets decide over the whole run, which a
-- query could only get by reading (and, for the jitter and the delay percentiles, sorting)
-- every one of them: what `flow_run_facts` stores per run at ingest (after packet_facts,
-- which it reads), and what it computes for a run ingested without them. flow_stats_in reads
-- them for its 'run' window (every packet sent and every delivery counted) instead of the
-- packets: nothing here depends on a label.
-- Columns: trace_kind and the flow key; jitter_s = the mean |D_i - D_(i-1)| of the delays D
-- (t_recv - t_sent) of its packets delivered and sent, in arrival (trace line, recv_line)
-- order (NULL with fewer than two): flow_stats' jitter over the whole run;
-- sent_pkts = count(t_sent), recv_pkts = count(t_recv), dropped_pkts = sum(drops),
-- overheard_pkts = sum(overheard), lost_pkts = packets dropped and never delivered,
-- tx_bytes = the sizes of the packets sent, rx_bytes = packets.rx_bytes of those delivered,
-- delay_mean_s / delay_p50_s / delay_p95_s / delay_p99_s = the mean (favg: compensated
-- summation, in arrival order: the same on every connection, and within an ulp of the exact
-- mean, where a plain sum of a million delays is ~1e-12 off) and percentile of D,
-- t_first_send = min(t_sent), t_last_recv = max(t_recv) (s);
-- goodput_bytes_hdr0, goodput_bytes_hdr40 = the payload bytes (size - packet_hdr_bytes, never
-- negative) of the first delivery of each seq (first_of_seq), when the flow's header bytes
-- (flows.hdr_bytes, which depends on a label) are 0 and 40: for a wireless flow, whose
-- header bytes go by each packet's ptype, both are the same. The sums are NULL, like sum(),
-- when no packet counts.
-- uses: packet_facts, packet_hdr_bytes, percentile, mean_abs_step
CREATE OR REPLACE VIEW flow_run_facts_from_events AS
SELECT trace_kind, run_id, fid, src_node, src_port, dst_node, dst_port,
       mean_abs_step(d) AS jitter_s,
       sent_pkts, recv_pkts, dropped_pkts, overheard_pkts, lost_pkts, tx_bytes, rx_bytes,
       list_aggregate(d, 'favg') AS delay_mean_s, q[1] AS delay_p50_s, q[2] AS delay_p95_s, q[3] AS delay_p99_s,
       t_first_send, t_last_recv, goodput_bytes_hdr0, goodput_bytes_hdr40
FROM (
    SELECT trace_kind, run_id, fid, src_node, src_port, dst_node, dst_port,
           list(t_recv - t_sent ORDER BY recv_line)
               FILTER (WHERE t_recv IS NOT NULL AND t_sent IS NOT NULL) AS d,
           count(t_sent) AS sent_pkts,
           count(t_recv) AS recv_pkts,
           CAST(sum(drops) AS BIGINT) AS dropped_pkts,
           CAST(sum(overheard) AS BIGINT) AS overheard_pkts,
           count(*) FILTER (WHERE drops > 0 AND t_recv IS NULL) AS lost_pkts,
           CAST(sum(size) FILTER (WHERE t_sent IS NOT NULL) AS BIGINT) AS tx_bytes,
           CAST(sum(rx_bytes) FILTER (WHERE t_recv IS NOT NULL) AS BIGINT) AS rx_bytes,
           percentile(t_recv - t_sent, [0.5, 0.95, 0.99]) AS q,
           min(t_sent) AS t_first_send,
           max(t_recv) AS t_last_recv,
           CAST(sum(greatest(size - packet_hdr_bytes(trace_kind, ptype, 0), 0))
                FILTER (WHERE t_recv IS NOT NULL AND first_of_seq) AS BIGINT) AS goodput_bytes_hdr0,
           CAST(sum(greatest(size - packet_hdr_bytes(trace_kind, ptype, 40), 0))
                FILTER (WHERE t_recv IS NOT NULL AND first_of_seq) AS BIGINT) AS goodput_bytes_hdr40
    FROM packet_facts
    GROUP BY trace_kind, run_id, fid, src_node, src_port, dst_node, dst_port
)
