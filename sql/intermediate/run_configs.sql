-- run_configs: per run with a seed, its configuration: the labels other than `seed` and
-- `sim_id` (tracekit's id of one simulation, a hash of scenario, parameters and seed), as a
-- canonical 'key=value,key=value' string sorted by key; runs that differ only in their seed
-- share a config. Runs without a seed are not replications and are left out. A simulation
-- counts once: of several runs of one sim_id and trace kind (a cut-off copy and the whole
-- trace, ingested before ingest refused such copies) only the longest is kept (most event
-- lines, then the latest end, then the run_id), so copies are not replications.
-- uses: runs
CREATE OR REPLACE VIEW run_configs AS
SELECT run_id, scenario, seed, config FROM (
    SELECT run_id, scenario, seed,
           coalesce(array_to_string(
               list_sort(list_transform(
                   list_filter(map_entries(labels), lambda kv: kv.key NOT IN ('seed', 'sim_id')),
                   lambda kv: kv.key || '=' || coalesce(kv.value, ''))),
               ','), '') AS config,
           row_number() OVER (PARTITION BY trace_kind, coalesce(map_extract_value(labels, 'sim_id'), run_id)
                              ORDER BY n_events DESC, t_end DESC, run_id) AS copy_rank
    FROM runs
    WHERE seed IS NOT NULL)
WHERE copy_rank = 1
