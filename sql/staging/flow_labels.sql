-- flow_labels: a name per (run, fid): from `--flow-label FID=NAME` at ingest, or the flow
-- names a bundled scenario wrote into its trace (the variant, or CBR).
-- uses: raw_runs
CREATE OR REPLACE VIEW flow_labels AS
SELECT run_id, fl.fid AS fid, fl.name AS name
FROM (SELECT run_id, unnest(flow_labels) AS fl FROM raw_runs);
