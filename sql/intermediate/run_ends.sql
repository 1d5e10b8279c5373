-- run_ends: per run, the end of its measurement window (docs/contract.md, revised): t_run_end =
-- the simulation's stop time where the run records it (the label `stop_s`, which every
-- bundled scenario writes; stop_s is NULL when absent or not a number), else t_end, the time
-- of the run's last trace line (runs.t_end: the largest time of the run's event lines, `+ - r
-- d e h` wired, `s r f d` wireless; `v`, `M`, `N` and DSR lines do not count; NULL for a run
-- without events). Also the on-period of a CBR burst where the run records one (labels
-- cbr_start, cbr_stop, in seconds; the queue-influence scenario, paper 004's experiment 3);
-- cbr_stop is capped at t_run_end (cbr-variants writes 100000 for a CBR that never stops
-- before the sources do, so its on-period is the rest of the run).
-- uses: runs
CREATE OR REPLACE VIEW run_ends AS
WITH labelled AS (
    SELECT run_id, trace_kind,
           TRY_CAST(labels['stop_s'] AS DOUBLE) AS stop_s,
           CASE WHEN isfinite(t_end) THEN t_end END AS t_end,
           TRY_CAST(labels['cbr_start'] AS DOUBLE) AS cbr_start,
           TRY_CAST(labels['cbr_stop'] AS DOUBLE) AS cbr_stop_label
    FROM runs
),
ended AS (
    SELECT *, coalesce(stop_s, t_end) AS t_run_end FROM labelled
)
SELECT run_id, trace_kind, stop_s, t_end, t_run_end, cbr_start,
       least(cbr_stop_label, t_run_end) AS cbr_stop
FROM ended
