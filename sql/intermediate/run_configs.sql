-- run_configs: per run with a seed, its configuration: the labels other than `seed` and
-- `sim_id` (tracekit's id of one simulation, a hash of scenario, parameters and seed), as a
-- canonical 'key=value,key=value' string sorted by key; runs that differ only in their seed
-- share a config. Runs without a seed are not replications and are left out.
-- uses: runs
CREATE OR REPLACE VIEW run_configs AS
SELECT run_id, scenario, seed,
       coalesce(array_to_string(
           list_sort(list_transform(
               list_filter(map_entries(labels), lambda kv: kv.key NOT IN ('seed', 'sim_id')),
               lambda kv: kv.key || '=' || coalesce(kv.value, ''))),
           ','), '') AS config
FROM runs
WHERE seed IS NOT NULL
