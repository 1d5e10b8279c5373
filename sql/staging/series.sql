-- series: two-column `time value` files (a Tcl proc sampling `[$tcp set cwnd_]` or a queue
-- length every 0.1 s), one row per line in file order: time (s) and value as printed. What
-- the value is comes from the run's labels: var (`tracekit ingest --series-name cwnd`, or
-- `--label var=cwnd`) and flow (`--label flow=...`, e.g. the fid or a name); NULL without.
-- uses: raw_series, raw_runs
CREATE OR REPLACE VIEW series AS
SELECT s.run_id, s.line_no, s.time, s.value,
       map_from_entries(r.labels)['var'] AS var, map_from_entries(r.labels)['flow'] AS flow
FROM raw_series s
JOIN raw_runs r USING (run_id);
