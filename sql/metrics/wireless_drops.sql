-- wireless_drops: per wireless run, layer, reason and ptype (`MAC control` for the untyped
-- new-format RTS/CTS/ACK lines): drops = the number of `d` lines, bytes = their sizes summed
-- (lines without a size count 0). Every drop line counts, of any packet, also of frames
-- retried later: a MAC COL is a lost frame, not necessarily a lost packet.
-- uses: wireless_events
CREATE OR REPLACE VIEW wireless_drops AS
SELECT run_id, layer, reason, coalesce(ptype, 'MAC control') AS ptype,
       count(*) AS drops,
       CAST(coalesce(sum(size), 0) AS BIGINT) AS bytes
FROM wireless_events
WHERE event = 'd'
GROUP BY run_id, layer, reason, coalesce(ptype, 'MAC control')
