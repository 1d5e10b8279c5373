-- node_addrs: per run with hierarchical addresses (trace_kind 'hier'), each node's address as
-- the trace shows it (the trace never lists them; tracekit/formats/parsers/hier.py has the rules): line_no
-- (the first line that showed it), node
-- (node id; NULL for an address no line placed at a node), addr (the address levels as text,
-- '1.0.1'), addr_parts (its levels, [1, 0, 1]), packed (the number wireless lines print for it,
-- 4194305: ns-2's default layout of 9, 11 and 11 bits), seen_as (source: the node made a packet
-- from it; agent_recv: an `r` AGT line at the node; last_hop: a wired `r` at the node of a
-- packet the node did not pass on). Join on (run_id, node) to see any node column as an address.
-- uses: raw_node_addrs
CREATE OR REPLACE VIEW node_addrs AS
SELECT run_id, line_no, node, addr, addr_parts, packed, seen_as
FROM raw_node_addrs;
