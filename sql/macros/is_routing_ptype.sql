-- is_routing_ptype(ptype): whether a wireless packet type is a routing protocol's own packet
-- (AODV, AOMDV, DSR, DSDV's `message`, TORA, IMEP). Used by routing_overhead and
-- node_forwarding; NULL (a new-format MAC control frame) is not.
-- uses:
CREATE OR REPLACE MACRO is_routing_ptype(p) AS
    coalesce(CAST(p AS VARCHAR) IN ('AODV', 'AOMDV', 'DSR', 'message', 'TORA', 'IMEP'), false);
