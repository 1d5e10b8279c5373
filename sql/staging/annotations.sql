-- annotations: the 'v' lines of wired and wireless traces (trace-annotate text,
-- link-down/link-up), verbatim after the time field; of nam traces, the text after `-e`.
-- uses: raw_annotations
CREATE OR REPLACE VIEW annotations AS
SELECT run_id, line_no, time, text FROM raw_annotations;
