-- is_routing_packet(ptype, src_port): whether a wireless packet is a routing protocol's own
-- packet, by what it is rather than by name: its IP source port is 255, the port ns-2 gives
-- every routing agent (RT_PORT; AODV, DSDV, DSR, MDART, ... and a modified copy of any of them
-- under a name of its own, `-It MYAODV`), or its type is one of is_routing_ptype's. ARP and
-- MAC control frames (no IP header, NULL ptype) are not. Data packets are never sent from
-- port 255 (agents get ports from 0 up). Used by routing_overhead and node_forwarding.
-- uses: is_routing_ptype
CREATE OR REPLACE MACRO is_routing_packet(p, src_port) AS
    is_routing_ptype(p)
    OR coalesce(src_port = 255 AND CAST(p AS VARCHAR) <> 'ARP', false);
