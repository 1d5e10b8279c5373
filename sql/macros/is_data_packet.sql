-- is_data_packet(ptype, size, fulltcp): the contract's data-packet rule, written once: a
-- packet is data unless its ptype is `ack` (TCP sinks' ACKs, also FullTcp/Sack's 50-byte SACK
-- ACKs), and in a FullTcp flow (fulltcp true) unless it is 40 bytes or less (the handshake,
-- pure ACKs, the FIN). fulltcp NULL or false: the size does not matter (wireless flows, and
-- flows before they are classified). Used by flows, data_events (so packets, flow_stats, rtt,
-- throughput_series), wireless_flows and packets' wireless half.
-- uses:
CREATE OR REPLACE MACRO is_data_packet(ptype, size, fulltcp) AS
    CAST(ptype AS VARCHAR) <> 'ack' AND NOT (coalesce(fulltcp, false) AND size <= 40);
