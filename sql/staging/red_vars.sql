-- red_vars: RED queue variables over time: curq (instantaneous queue), ave (EWMA average),
-- prob1 (drop probability), cur_max_p. Queue sizes are in bytes unless the scenario set
-- queue_in_bytes_ false. Times have only 6 significant digits in the trace.
-- uses: raw_red_vars
CREATE OR REPLACE VIEW red_vars AS
SELECT run_id, line_no, CAST(var AS VARCHAR) AS var, time, value FROM raw_red_vars;
