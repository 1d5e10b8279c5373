-- wireless_logs: DSR's own trace lines (SFs, SFf, SFESTs, Sconfig, ...): tag, time (s), node
-- (NULL when the line names none) and the rest of the line.
-- uses: raw_wireless_logs
CREATE OR REPLACE VIEW wireless_logs AS
SELECT run_id, line_no, CAST(tag AS VARCHAR) AS tag, time, node, text FROM raw_wireless_logs;
