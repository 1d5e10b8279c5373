#!/usr/bin/env bash
# The main job: set up (scripts/setup.sh), run the demo experiments with ns-2 (or, where
# ns-2 cannot be installed, ingest sample_traces/), print what the runs show, then open the
# dashboard on them. Re-running skips the simulations already in the store.
#   scripts/demo.sh [--no-dashboard]        (the store: $TRACEKIT_DATA, else ./tracekit-data)
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh || exit 1
TK=.venv/bin/tracekit
export TRACEKIT_DATA="${TRACEKIT_DATA:-$PWD/tracekit-data}"
step() { printf '\n== %s\n' "$*"; }

if command -v ns >/dev/null 2>&1; then
  step "running the demo experiments with ns-2 into $TRACEKIT_DATA"
  # papers 002/004: four variants against CBR cross traffic, at 7 Mb/s (no loss: the loss-based
  # variants agree) and through the loss region (from ~8.3 Mb/s) where they differ; five seeds
  $TK sweep cbr-variants --grid variant=Tahoe,Reno,Newreno,Vegas --grid cbr_rate_mbps=7,8.5,9,9.5,10 \
      --seeds 1-5 || exit 1
  # fairness pairs at CBR 8 Mb/s (two TCP flows lose packets from ~6.7), mixed pairs in both orders
  $TK sweep cbr-fairness --grid pair=Reno-Reno,Newreno-Reno,Reno-Newreno,Vegas-Vegas,Newreno-Vegas,Vegas-Newreno \
      --seeds 1-5 || exit 1
  $TK sweep queue-influence --grid queue=DropTail,RED --set variant=Reno --seeds 1-5 || exit 1
  # paper 003: Reno vs Vegas
  $TK sweep reno-vs-vegas --grid queue=DropTail,RED --seeds 1-5 || exit 1
  # wireless: ad-hoc routing protocols compared on a 20-node random-waypoint MANET
  $TK sweep manet --grid routing=AODV,DSDV,DSR --set duration=30 --seeds 1-5 || exit 1
else
  step "ns-2 is not available here: ingesting the recorded runs in sample_traces/"
  $TK ingest sample_traces/ >/dev/null || exit 1
fi

step "what is in the store"
$TK sql "SELECT scenario, count(DISTINCT labels['sim_id']) AS simulations, count(*) AS runs,
                sum(n_events) AS rows FROM runs GROUP BY scenario ORDER BY scenario" || exit 1

step "TCP throughput against CBR rate (cbr-variants; mean over seeds, 95% CI half-width)"
$TK sql "SELECT CAST(regexp_extract(config, 'cbr_rate_mbps=([^,]+)', 1) AS DOUBLE) AS cbr_mbps,
                name AS variant, n_runs, round(mean, 1) AS throughput_kbps,
                round(ci95_half_width, 1) AS ci95_kbps
         FROM replication_stats
         WHERE scenario = 'cbr-variants' AND metric = 'throughput_kbps' AND name <> 'CBR'
         ORDER BY cbr_mbps, variant" || exit 1

step "fairness of the TCP pairs (cbr-fairness; Jain's index, mean over seeds)"
$TK sql "SELECT regexp_extract(config, 'pair=([^,]+)', 1) AS pair, n_runs,
                round(mean, 4) AS jain_index, round(ci95_half_width, 4) AS ci95
         FROM replication_stats WHERE scenario = 'cbr-fairness' AND metric = 'jain_index'
         ORDER BY pair" || exit 1

step "ad-hoc routing protocols (manet; all flows of a run, mean over seeds, 95% CI half-width)"
$TK sql "SELECT regexp_extract(config, 'routing=([^,]+)', 1) AS routing, metric, n_runs,
                round(mean, 3) AS mean, round(ci95_half_width, 3) AS ci95
         FROM replication_stats
         WHERE scenario = 'manet' AND metric IN ('run_pdr', 'run_mean_delay_ms', 'nrl')
         ORDER BY metric, routing" || exit 1

if [ "${1:-}" = "--no-dashboard" ]; then
  step "done; start the dashboard with: $TK dashboard"
  exit 0
fi
step "starting the dashboard on http://127.0.0.1:8501 (Ctrl-C stops it)"
exec $TK dashboard --port 8501
