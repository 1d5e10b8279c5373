-- hier_events: the rows of events of the runs with hierarchical addresses only (trace_kind
-- 'hier', read from their files alone: free in a store without such runs). As in events:
-- every packet event of the wired traces (+ enqueue, - dequeue, r receive at
-- to_node, d drop; h hop: on a LAN (`$ns newLan`) a packet's `h` onto the LAN's node comes
-- before its `+`, and every station overhearing a frame writes a `d` of it; e RED early
-- drop), one row per trace line in file order (line_no). Addresses are split
-- into node and port; tcp_ackno, tcp_flags, tcp_hlen, sack_blocks come from 16-field
-- `show_tcphdr_` lines and are NULL on 12-field lines. Times in seconds, sizes in bytes.
-- uses: raw_hier_events
CREATE OR REPLACE VIEW hier_events AS
SELECT
    run_id, line_no, CAST(event AS VARCHAR) AS event, time, from_node, to_node,
    CAST(ptype AS VARCHAR) AS ptype, size, CAST(flags AS VARCHAR) AS flags, fid,
    src_node, src_port, dst_node, dst_port, seq, pkt_id,
    tcp_ackno, tcp_flags, tcp_hlen, sack_blocks
FROM raw_hier_events;
