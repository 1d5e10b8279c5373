-- retransmissions: per flow (run_id and the flow key), the data packets it sent at its source
-- and how many of them were retransmissions. A retransmission is a data packet of the flow
-- sent at its source (packets.t_sent: its first `+` or bare `d` leaving the source node; in a
-- wireless run its `s` AGT line there) whose sequence number an earlier packet of the same flow
-- had already carried (earlier t_sent; at the same time, the lower packet id is the earlier).
-- Packets without a sequence number (seq_key NULL: ns-2's -1) are never retransmissions; a
-- CBR flow numbers every packet anew, so it has none. Columns: sent_pkts (packets sent at the
-- source), distinct_seqs (sequence numbers among them), retransmitted_pkts (packets that
-- repeated an earlier one's sequence number), retransmitted_seqs (sequence numbers sent more
-- than once), retransmit_ratio = retransmitted_pkts / sent_pkts, first_retransmit_s (time of
-- the first retransmission, NULL when none). Flows that sent nothing have no row.
-- uses: packets
CREATE OR REPLACE VIEW retransmissions AS
WITH sent AS (
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, pkt_id, seq_key, t_sent,
           CASE WHEN seq_key IS NULL THEN 1
                ELSE row_number() OVER (PARTITION BY run_id, fid, src_node, src_port, dst_node, dst_port, seq_key
                                        ORDER BY t_sent, pkt_id) END AS copy
    FROM packets
    WHERE t_sent IS NOT NULL
)
SELECT run_id, fid, src_node, src_port, dst_node, dst_port,
       count(*) AS sent_pkts,
       count(DISTINCT seq_key) AS distinct_seqs,
       count(*) FILTER (WHERE copy > 1) AS retransmitted_pkts,
       count(DISTINCT seq_key) FILTER (WHERE copy > 1) AS retransmitted_seqs,
       count(*) FILTER (WHERE copy > 1) / count(*) AS retransmit_ratio,
       min(t_sent) FILTER (WHERE copy > 1) AS first_retransmit_s
FROM sent
GROUP BY run_id, fid, src_node, src_port, dst_node, dst_port
