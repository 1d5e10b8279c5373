-- flow_stats_in(mode, t0, t1, kind): the one definition of every per-flow metric, over all_flows
-- and packet_delays (the packets with each one's delay; of the trace kind `kind`, 'wired' or
-- 'wireless'; NULL: both), for three kinds of window (a table macro; use it through flow_stats, flow_stats_window, onperiod_flow_stats
-- and wireless_flow_stats). mode 'run': the measurement window of
-- docs/contract.md, [the flow's first send, the run's end (run_ends.t_run_end)], every packet and
-- every delivery counted; 'window': [t0, t1) in every run; 'onperiod': [cbr_start, cbr_stop)
-- of each run that has those labels (run_ends); 'run+onperiod': both at once (run_metrics: the
-- packets are read once). Columns, per flow and window (window_kind: 'run', 'window' or
-- 'onperiod'; the views drop it):
-- sent_pkts: packets with a first send (leaving the source) -- in a window, those first sent in
--   [t0, t1); recv_pkts: those of them delivered at the destination (at any time);
--   dropped_pkts: their drops (packets.drops: wired `d` events anywhere, wireless
--   lost_with_drop; `d` events of LAN stations overhearing a packet are not drops: they are
--   overheard_pkts, packets.overheard summed); in_flight_pkts = sent_pkts - recv_pkts - those of them dropped and never
--   delivered; pdr = recv / sent, drop_rate = dropped / sent (NULL when nothing was sent);
--   tx_bytes: their sent sizes summed;
-- delay (packet_delays.delay_s: first delivery - first send, of those delivered; mean, p50,
--   p95, p99 with percentile, in ms) and jitter_ms = mean |D_i - D_(i-1)| over them in
--   arrival (trace line) order;
-- rx_bytes: bytes delivered (packets.rx_bytes) -- in a window, of deliveries in [t0, t1)
--   (a packet's deliveries are placed at its first one);
-- throughput_kbps = kbps(rx_bytes, window length); the length is run end - first send for
--   'run', t1 - t0 otherwise; goodput_kbps = kbps(payload, the same length), payload = the
--   payload_bytes of the first delivery (trace line order) of each seq_key (a packet without
--   one counts by its id) -- in a window, those whose first delivery lies in [t0, t1);
-- active_throughput_kbps = kbps(rx_bytes, last delivery - first send): ns-3 FlowMonitor's
--   definition; in a window, last delivery in it - max(t0, the flow's first send);
-- 'run': all three are 0.0 when nothing was delivered, else NULL when no send was seen or the
--   length is not positive. Window: NULL when t1 - t0 is not positive (checked first), else
--   0.0 when nothing was delivered in it; active NULL when its interval is not positive.
-- drops_per_s = dropped_pkts / window length (paper 002's packet drop), NULL when the length is
--   not positive or unknown;
-- t_first_send, t_last_recv: first send and last delivery counted (s); t_run_end: the end of
--   the window (s); overheard_pkts: see dropped_pkts; src_port, dst_port, fulltcp, hdr_bytes from all_flows.
-- uses: all_flows, packet_delays, flow_run_facts, run_ends, kbps, percentile, mean_abs_step
CREATE OR REPLACE MACRO flow_stats_in(mode, t0, t1, kind) AS TABLE
WITH win AS MATERIALIZED (  -- one window per run
    SELECT run_id, 'run' AS window_kind, true AS whole, CAST(NULL AS DOUBLE) AS w0, t_run_end AS w1
    FROM run_ends WHERE mode IN ('run', 'run+onperiod')
    UNION ALL
    SELECT run_id, 'window', false, CAST(t0 AS DOUBLE), CAST(t1 AS DOUBLE)
    FROM run_ends WHERE mode = 'window'
    UNION ALL
    SELECT run_id, 'onperiod', false, cbr_start, cbr_stop
    FROM run_ends
    WHERE mode IN ('onperiod', 'run+onperiod') AND cbr_start IS NOT NULL AND cbr_stop IS NOT NULL
),
fl AS MATERIALIZED (  -- the flows of those runs, numbered for cheap joins; over the whole run,
    -- their jitter and every per-packet aggregate from flow_run_facts (stored at ingest: their
    -- packets are neither read nor sorted per query), where its goodput bytes apply: a
    -- wireless flow, or a wired one whose packets packets.hdr_bytes gives the flow's own
    -- header bytes (it joins them by fid =, so not with a NULL fid)
    SELECT f.*, w.window_kind, w.whole, w.w0, w.w1, row_number() OVER () AS flow_no,
           r.jitter_s AS run_jitter_s, r.run_id IS NOT NULL AS run_jitter_known,
           r.run_id IS NOT NULL AND (f.trace_kind = 'wireless' OR f.fid IS NOT NULL AND f.hdr_bytes IN (0, 40))
               AS run_facts_known,
           r.sent_pkts AS run_sent_pkts, r.recv_pkts AS run_recv_pkts,
           r.dropped_pkts AS run_dropped_pkts, r.overheard_pkts AS run_overheard_pkts,
           r.lost_pkts AS run_lost_pkts, r.tx_bytes AS run_tx_bytes, r.rx_bytes AS run_rx_bytes,
           r.delay_mean_s AS run_delay_mean_s,
           [r.delay_p50_s, r.delay_p95_s, r.delay_p99_s] AS run_delay_q,
           r.t_first_send AS run_t_first_send, r.t_last_recv AS run_t_last_recv,
           CASE WHEN f.hdr_bytes = 40 THEN r.goodput_bytes_hdr40 ELSE r.goodput_bytes_hdr0 END
               AS run_goodput_bytes
    FROM all_flows f JOIN win w USING (run_id)
    LEFT JOIN flow_run_facts r
      ON w.whole AND r.run_id = f.run_id AND r.fid IS NOT DISTINCT FROM f.fid
     AND r.src_node = f.src_node AND r.src_port = f.src_port
     AND r.dst_node = f.dst_node AND r.dst_port = f.dst_port
    WHERE kind IS NULL OR f.trace_kind = kind
),
pk AS (
    SELECT f.flow_no, f.run_jitter_known, p.first_of_seq, p.size, p.payload_bytes, p.t_sent, p.t_recv,
           p.delay_s, p.recv_line, p.rx_bytes, p.drops, p.overheard,
           f.whole OR (p.t_sent >= f.w0 AND p.t_sent < f.w1) AS sent_in,
           p.t_recv IS NOT NULL AND (f.whole OR (p.t_recv >= f.w0 AND p.t_recv < f.w1)) AS recv_in
    FROM packet_delays p
    JOIN fl f
      ON p.run_id = f.run_id AND p.fid IS NOT DISTINCT FROM f.fid
     AND p.src_node = f.src_node AND p.src_port = f.src_port
     AND p.dst_node = f.dst_node AND p.dst_port = f.dst_port
    WHERE (kind IS NULL OR p.trace_kind = kind)   -- a constant: prunes the other kind's packets
      AND NOT f.run_facts_known
),
agg AS (
    SELECT flow_no,
           count(t_sent) FILTER (WHERE sent_in) AS sent_pkts,
           count(t_recv) FILTER (WHERE sent_in) AS recv_pkts,
           sum(drops) FILTER (WHERE sent_in) AS dropped_pkts,
           sum(overheard) FILTER (WHERE sent_in) AS overheard_pkts,
           count(*) FILTER (WHERE sent_in AND drops > 0 AND t_recv IS NULL) AS lost_pkts,
           sum(size) FILTER (WHERE sent_in AND t_sent IS NOT NULL) AS tx_bytes,
           -- the delays (packet_delays.delay_s) aggregated in s, then scaled to ms
           avg(delay_s) FILTER (WHERE sent_in) * 1000 AS mean_delay_ms,
           percentile(CASE WHEN sent_in THEN delay_s END, [0.5, 0.95, 0.99]) AS q,
           count(*) FILTER (WHERE recv_in) AS n_rx,
           sum(rx_bytes) FILTER (WHERE recv_in) AS rx_bytes,
           min(t_sent) AS flow_first_send,
           min(t_sent) FILTER (WHERE sent_in) AS t_first_send,
           max(t_recv) FILTER (WHERE recv_in) AS t_last_recv,
           -- the first delivery of each seq (packets.first_of_seq), counted when it lies in the window
           sum(payload_bytes) FILTER (WHERE recv_in AND first_of_seq) AS payload_bytes,
           -- the delays in arrival (trace line) order, for jitter where flow_run_facts has
           -- none (a window, a run with hierarchical addresses): an ordered list per flow
           -- (no window function, which would sort every packet together)
           list(delay_s ORDER BY recv_line)
               FILTER (WHERE NOT run_jitter_known AND sent_in AND delay_s IS NOT NULL)
               AS delays
    FROM pk
    GROUP BY flow_no
    UNION ALL  -- the same aggregates over the whole run, stored
    SELECT flow_no, run_sent_pkts, run_recv_pkts, run_dropped_pkts, run_overheard_pkts,
           run_lost_pkts, run_tx_bytes, run_delay_mean_s * 1000, run_delay_q, run_recv_pkts,
           run_rx_bytes, run_t_first_send, run_t_first_send, run_t_last_recv, run_goodput_bytes,
           NULL
    FROM fl
    WHERE run_facts_known
),
lengths AS (
    SELECT f.* EXCLUDE (run_jitter_s, run_jitter_known, run_facts_known, run_sent_pkts,
                        run_recv_pkts, run_dropped_pkts, run_overheard_pkts, run_lost_pkts,
                        run_tx_bytes, run_rx_bytes, run_delay_mean_s, run_delay_q,
                        run_t_first_send, run_t_last_recv, run_goodput_bytes),
           a.* EXCLUDE (flow_no, delays),
           -- mean |D_i - D_(i-1)| over successive deliveries
           CASE WHEN f.run_jitter_known THEN f.run_jitter_s
                ELSE mean_abs_step(a.delays)
           END * 1000 AS jitter_ms,
           coalesce(a.n_rx, 0) AS n_rx0,
           f.w1 - CASE WHEN f.whole THEN a.flow_first_send ELSE f.w0 END AS length_s,
           a.t_last_recv - CASE WHEN f.whole OR a.flow_first_send IS NULL THEN a.flow_first_send
                                ELSE greatest(f.w0, a.flow_first_send) END AS active_s,
           NOT f.whole AND coalesce(f.w1 - f.w0 <= 0, true) AS bad_window
    FROM fl f
    LEFT JOIN agg a USING (flow_no)
)
SELECT run_id, fid, ptype, name, src_node, dst_node,
       coalesce(sent_pkts, 0) AS sent_pkts,
       coalesce(recv_pkts, 0) AS recv_pkts,
       CAST(coalesce(dropped_pkts, 0) AS BIGINT) AS dropped_pkts,
       CAST(coalesce(rx_bytes, 0) AS BIGINT) AS rx_bytes,
       CASE WHEN bad_window THEN NULL WHEN n_rx0 = 0 THEN 0.0
            WHEN length_s > 0 THEN kbps(rx_bytes, length_s) END AS throughput_kbps,
       CASE WHEN bad_window THEN NULL WHEN n_rx0 = 0 THEN 0.0
            WHEN active_s > 0 THEN kbps(rx_bytes, active_s) END AS active_throughput_kbps,
       CASE WHEN bad_window THEN NULL WHEN n_rx0 = 0 THEN 0.0
            WHEN length_s > 0 THEN kbps(coalesce(payload_bytes, 0), length_s) END AS goodput_kbps,
       coalesce(sent_pkts, 0) - coalesce(recv_pkts, 0) - coalesce(lost_pkts, 0) AS in_flight_pkts,
       mean_delay_ms,
       q[1] * 1000 AS p50_delay_ms,
       q[2] * 1000 AS p95_delay_ms,
       q[3] * 1000 AS p99_delay_ms,
       jitter_ms,
       recv_pkts / nullif(sent_pkts, 0) AS pdr,
       dropped_pkts / nullif(sent_pkts, 0) AS drop_rate,
       src_port, dst_port, fulltcp, hdr_bytes,
       CAST(coalesce(tx_bytes, 0) AS BIGINT) AS tx_bytes,
       CASE WHEN length_s > 0 THEN coalesce(dropped_pkts, 0) / length_s END AS drops_per_s,
       t_first_send, t_last_recv, w1 AS t_run_end,
       CAST(coalesce(overheard_pkts, 0) AS BIGINT) AS overheard_pkts, window_kind
FROM lengths
