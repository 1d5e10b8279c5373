-- runs: one row per ingested trace. labels is a MAP of the --label k=v pairs and the
-- metadata a bundled scenario wrote into its trace (scenario, seed, parameters);
-- scenario and seed are also columns of their own. flow_labels: see the flow_labels view.
-- ingested_at is a UTC timestamp.
-- uses: raw_runs
CREATE OR REPLACE VIEW runs AS
SELECT
    run_id, source, sha256, trace_kind, compression, size_bytes, n_lines, n_events,
    n_skipped_lines, t_start, t_end, scenario, seed,
    map_from_entries(labels) AS labels,
    timezone('UTC', ingested_at) AS ingested_at, tracekit_version, schema_version
FROM raw_runs;
