-- packet_hdr_bytes(trace_kind, ptype, flow_hdr_bytes): the header bytes of one data packet,
-- not counted as goodput: a wired packet's are its flow's (flows.hdr_bytes, which depends on
-- the flow's name, a label), a wireless packet's go by its own ptype: 40 for `tcp`, else 0.
-- packets adds them to every packet; flow_run_facts_from_events stores the whole run's
-- goodput bytes for both values a wired flow can have (0 and 40).
-- uses:
CREATE OR REPLACE MACRO packet_hdr_bytes(trace_kind, ptype, flow_hdr_bytes) AS
    CASE WHEN trace_kind = 'wired' THEN flow_hdr_bytes WHEN ptype = 'tcp' THEN 40 ELSE 0 END;
