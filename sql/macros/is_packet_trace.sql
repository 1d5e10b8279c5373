-- is_packet_trace(trace_kind): whether a run of this trace kind is a packet trace, one with
-- flows and packets (wired, wireless, hier, nam; not tcpvar, queue_monitor, red, series): the
-- one definition of the packet-trace-run filter in SQL, for the views (fairness) and the
-- queries of the Python side (`WHERE is_packet_trace(trace_kind)`). The same list as
-- tracekit.formats.parsers.PACKET_KINDS (the formats' is_packet_trace), which code without a
-- connection uses; tests/test_packet_delays.py checks they agree.
-- uses:
CREATE OR REPLACE MACRO is_packet_trace(k) AS
    coalesce(CAST(k AS VARCHAR) IN ('wired', 'wireless', 'hier', 'nam'), false);
