-- packet_facts_from_events: one row per data packet of every packet-trace run, wired and
-- wireless alike, computed from the run's events: the facts flow_stats, flow_stats_window and
-- throughput_series count (through packets), none of them depending on a label. What
-- `packet_facts` stores per run at ingest (tracekit.ingest.facts runs this view over the run's
-- own parts), and what it computes for a run ingested without them. A packet id names one
-- packet in a wired run; a wireless data packet is named by (pkt_id, ptype)
-- (docs/contract-wireless.md).
-- Columns: trace_kind; the flow key run_id, fid, src_node, src_port, dst_node, dst_port;
-- pkt_id, ptype, seq (of its first sending line), size (sent size, bytes); t_sent = first
-- time it left the source; t_recv = first delivery at the destination and recv_line its
-- trace line (NULL if never delivered); rx_bytes = bytes delivered; drops = drops counted
-- for it; overheard = its `d` events on LAN stations that overheard it (not losses, not in
-- drops; 0 for wireless packets); first_of_seq = it is the first delivery (trace line order)
-- of its seq (seq NULL or negative: of itself) among its flow's packets (what goodput counts;
-- false when it was never delivered).
-- Wired (data_events, the contract's definitions): leaving the source = a `+`, `h` or `d`
-- event whose from_node is the source node (ns-2 writes a packet's `+` on a link before its
-- `-` and `r` there; a loss model at the link head drops with a bare `d`; on a LAN (`$ns
-- newLan`) the `h` onto the LAN comes first, 10 ms and more before the `+`); delivery = an `r`
-- event whose to_node is the destination node; rx_bytes = wire bytes of those `r` events
-- (headers included, duplicates too); drops = its `d` events anywhere, except the overheard
-- ones: on a LAN every station that is neither the sender nor the receiver writes a `d` of
-- each frame it hears (from_node the station, to_node the LAN's node). A `d` is overheard when
-- its to_node is a LAN node (the to_node of an `h` event of the run) and the same packet was
-- received across that LAN (an `r` event whose from_node is that node). seq and size are those
-- of its non-`h` events (a nam trace's transmission `h` lines carry seq -1).
-- Wireless (agent layer only): sending = its `s` AGT lines at the source node (t_sent the
-- first, size and seq those of the first line); delivery = its first `r` AGT line at the
-- destination node; rx_bytes = its sent size if delivered (the `r` size is not used: routing
-- adds 20 B of IP header to non-TCP packets); drops = 1 when it was never delivered and a `d`
-- line of the same (pkt_id, ptype) exists at any layer and node (lost_with_drop), else 0.
-- uses: data_events, events, wireless_events, is_data_packet
CREATE OR REPLACE VIEW packet_facts_from_events AS
WITH lan_nodes AS (  -- the nodes standing for a LAN: where `h` events go
    SELECT DISTINCT run_id, to_node AS lan_node FROM events WHERE event = 'h'
),
received_across AS (  -- packets received across a LAN: `r` events from a LAN node
    -- (filtered by the LAN nodes first: in a run without LANs nothing is kept or hashed)
    SELECT DISTINCT r.run_id, r.pkt_id, r.from_node AS lan_node
    FROM events r
    SEMI JOIN lan_nodes l ON l.run_id = r.run_id AND l.lan_node = r.from_node
    WHERE r.event = 'r'
),
wired_trips AS (  -- data events leaving the source, arriving at the destination, dropped
    -- (a `d` is overheard when it lies at a LAN the packet was received across: a lookup in
    -- the few packets received across LANs, none in a run without LANs)
    SELECT run_id, pkt_id, fid, src_node, src_port, dst_node, dst_port, ptype, seq, size,
           event, time, line_no,
           event <> 'r' AND from_node = src_node AS at_src,
           event = 'r' AND to_node = dst_node AS at_dst,
           event = 'd' AND (run_id, pkt_id, to_node) IN (SELECT run_id, pkt_id, lan_node FROM received_across)
               AS overheard_d
    FROM data_events
    WHERE event = 'r' AND to_node = dst_node
       OR event = 'd'
       OR event IN ('+', 'h') AND from_node = src_node
),
wired AS (
    -- one flow per packet id, and one ptype (a packet's type never changes on its way: in
    -- the key rather than aggregated, which is cheaper)
    SELECT run_id, pkt_id, fid, src_node, src_port, dst_node, dst_port, ptype,
           coalesce(any_value(seq) FILTER (WHERE event <> 'h'), any_value(seq)) AS seq,
           any_value(size) AS size,
           min(time) FILTER (WHERE at_src) AS t_sent,
           min(time) FILTER (WHERE at_dst) AS t_recv,
           min(line_no) FILTER (WHERE at_dst) AS recv_line,
           coalesce(sum(size) FILTER (WHERE at_dst), 0) AS rx_bytes,
           count(*) FILTER (WHERE event = 'd' AND NOT overheard_d) AS drops,
           count(*) FILTER (WHERE overheard_d) AS overheard
    FROM wired_trips
    GROUP BY run_id, pkt_id, fid, src_node, src_port, dst_node, dst_port, ptype
),
wl_agt AS MATERIALIZED (  -- the agent-layer lines, read once for the sends and the receptions
    -- (computed once, its rows read by both: each column is decompressed and decoded once,
    -- not once per consumer, and these lines are ~2 % of a trace's; a scan apiece cost ~a
    -- quarter of the statement's CPU on the benchmarks' wireless traces). The `d` lines, at any layer, are
    -- read apart: with them this scan's filter could no longer be pushed into the Parquet
    -- reader, and every column of nearly every line would be decoded
    SELECT run_id, line_no, event, time, node, pkt_id, ptype, size,
           src_node, src_port, dst_node, dst_port, fid, seq
    FROM wireless_events
    WHERE layer = 'AGT'
),
wl_sends AS (
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, pkt_id, ptype,
           min(time) AS t_sent,
           arg_min(size, line_no) AS size,
           arg_min(seq, line_no) AS seq
    FROM wl_agt
    WHERE event = 's' AND is_data_packet(ptype, size, NULL) AND node = src_node
    GROUP BY run_id, fid, src_node, src_port, dst_node, dst_port, pkt_id, ptype
),
wl_recvs AS (  -- first `r` AGT line of each packet at each node
    SELECT run_id, pkt_id, ptype, node, min(time) AS t_recv, min(line_no) AS recv_line
    FROM wl_agt
    WHERE event = 'r'
    GROUP BY run_id, pkt_id, ptype, node
),
wl_dropped AS (
    SELECT DISTINCT run_id, pkt_id, ptype FROM wireless_events WHERE event = 'd'
),
wireless AS (
    SELECT s.run_id, s.fid, s.src_node, s.src_port, s.dst_node, s.dst_port, s.pkt_id, s.ptype,
           s.seq, s.size, s.t_sent, r.t_recv, r.recv_line,
           CASE WHEN r.t_recv IS NOT NULL THEN s.size ELSE 0 END AS rx_bytes,
           CASE WHEN r.t_recv IS NULL AND d.pkt_id IS NOT NULL THEN 1 ELSE 0 END AS drops
    FROM wl_sends s
    LEFT JOIN wl_recvs r
      ON r.run_id = s.run_id AND r.pkt_id = s.pkt_id AND r.ptype = s.ptype AND r.node = s.dst_node
    LEFT JOIN wl_dropped d
      ON d.run_id = s.run_id AND d.pkt_id = s.pkt_id AND d.ptype = s.ptype
),
facts AS MATERIALIZED (  -- (computed once: read for the rows and for the seq check below)
    SELECT 'wired' AS trace_kind, run_id, fid, src_node, src_port, dst_node, dst_port,
           pkt_id, ptype, seq, size, t_sent, t_recv, recv_line, CAST(rx_bytes AS BIGINT) AS rx_bytes,
           CAST(drops AS BIGINT) AS drops, CAST(overheard AS BIGINT) AS overheard
    FROM wired
    UNION ALL
    SELECT 'wireless', run_id, fid, src_node, src_port, dst_node, dst_port,
           pkt_id, ptype, seq, size, t_sent, t_recv, recv_line, CAST(rx_bytes AS BIGINT),
           CAST(drops AS BIGINT), CAST(0 AS BIGINT)
    FROM wireless
),
-- first_of_seq without a window over every packet (which sorts them all): the seqs delivered
-- more than once are few, found by a hash of (flow, seq) first and then checked exactly
delivered AS (  -- the delivered packets, each with a hash of its flow and seq (a packet
    -- without one: its id)
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port, pkt_id, seq, recv_line,
           hash(run_id, fid, src_node, src_port, dst_node, dst_port,
                CASE WHEN seq >= 0 THEN seq END, CASE WHEN seq >= 0 THEN NULL ELSE pkt_id END) AS h
    FROM facts
    WHERE recv_line IS NOT NULL
),
candidates AS (  -- those whose hash repeats (a seq delivered twice, or a rare collision)
    SELECT * FROM delivered
    WHERE h IN (SELECT h FROM delivered GROUP BY h HAVING count(*) > 1)
),
repeated AS (  -- of those, the seqs of a flow delivered more than once, and their first delivery
    SELECT run_id, fid, src_node, src_port, dst_node, dst_port,
           CASE WHEN seq >= 0 THEN seq END AS seq_key, CASE WHEN seq >= 0 THEN NULL ELSE pkt_id END AS id_key,
           min(recv_line) AS first_line
    FROM candidates
    GROUP BY ALL
    HAVING count(*) > 1
),
later AS (  -- their deliveries after the first
    SELECT f.run_id, f.recv_line
    FROM candidates f
    JOIN repeated r
      ON f.run_id = r.run_id AND f.fid IS NOT DISTINCT FROM r.fid AND f.src_node = r.src_node
     AND f.src_port = r.src_port AND f.dst_node = r.dst_node AND f.dst_port = r.dst_port
     AND (CASE WHEN f.seq >= 0 THEN f.seq END) IS NOT DISTINCT FROM r.seq_key
     AND (CASE WHEN f.seq >= 0 THEN NULL ELSE f.pkt_id END) IS NOT DISTINCT FROM r.id_key
     AND f.recv_line > r.first_line
)
-- first_of_seq: the first delivery (in trace line order) of its seq (a packet without one:
-- of itself) within its flow
SELECT *,
       recv_line IS NOT NULL AND NOT ((run_id, recv_line) IN (SELECT run_id, recv_line FROM later)) AS first_of_seq
FROM facts
