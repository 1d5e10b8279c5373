-- is_wireless_fact_event(layer, event): whether a wireless trace line is one the stored facts
-- of its run read (flow_facts_from_events, packet_facts_from_events and what they use read
-- no other line of wireless_events): an agent-layer line, or a drop at any layer. Ingest
-- keeps these lines of a big wireless run as it parses it and computes the run's facts from
-- them instead of reading every stored line back (tracekit.ingest.facts.Ahead;
-- tests/test_materialise.py: the same facts both ways). A definition of the facts that reads
-- other lines must widen this.
-- uses:
CREATE OR REPLACE MACRO is_wireless_fact_event(layer, event) AS
    CAST(layer AS VARCHAR) = 'AGT' OR CAST(event AS VARCHAR) = 'd';
