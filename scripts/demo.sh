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

HAVE_NS=0
if command -v ns >/dev/null 2>&1; then
  HAVE_NS=1
  step "running the demo experiments with ns-2 into $TRACEKIT_DATA"
  # papers 002/004: four variants against CBR cross traffic, at 7 Mb/s (no loss: the loss-based
  # variants agree) and through the loss region (from ~8.3 Mb/s) where they differ; five seeds
  $TK sweep cbr-variants --grid variant=Tahoe,Reno,Newreno,Vegas --grid cbr_rate_mbps=7,8.5,9,9.5,10 \
      --seeds 1-5 || exit 1
  # fairness pairs at CBR 8 Mb/s (two TCP flows lose packets from ~6.7), mixed pairs in both orders
  $TK sweep cbr-fairness --grid pair=Reno-Reno,Newreno-Reno,Reno-Newreno,Vegas-Vegas,Newreno-Vegas,Vegas-Newreno \
      --seeds 1-5 || exit 1
else
  step "ns-2 is not available here: ingesting the recorded runs in sample_traces/"
  $TK ingest sample_traces/ >/dev/null || exit 1
fi

step "what is in the store"
$TK sql "SELECT scenario, count(DISTINCT labels['sim_id']) AS simulations, count(*) AS runs,
                sum(n_events) AS rows FROM runs GROUP BY scenario ORDER BY scenario" || exit 1

# what the runs show: per group the runs n, the mean over seeds and its 95% CI, and a verdict
# that claims a difference only where Welch's t-test over the runs finds one (tracekit compare)
step "TCP throughput against CBR rate (cbr-variants; the CBR flow left out)"
$TK compare cbr-variants --by variant --per cbr_rate_mbps --metric throughput_kbps --where name!=CBR || exit 1

step "fairness of the TCP pairs (cbr-fairness; Jain's index of the two TCP flows)"
$TK compare cbr-fairness --by pair --metric jain_index || exit 1

if [ "$HAVE_NS" = 1 ]; then
  # the papers' numbers and claims beside ours (tracekit reproduce): each runs the paper
  # experiment's simulations (full size: these three are small), then sets every value and
  # claim of the paper files beside them, marked reproduced / not reproduced / untestable /
  # paper implausible, with the evidence
  step "paper 004 experiment 3: DropTail against RED, Reno and SACK (tracekit reproduce cbr-exp3)"
  $TK reproduce cbr-exp3 || exit 1
  step "paper 003: Reno against Vegas on one bottleneck (tracekit reproduce reno-vegas)"
  $TK reproduce reno-vegas || exit 1
  step "Broch et al. 1998 in small: AODV, DSDV and DSR (tracekit reproduce manet-routing)"
  $TK reproduce manet-routing || exit 1
  step "every experiment and its last result (tracekit reproduce --list)"
  $TK reproduce --list || exit 1
else
  step "DropTail against RED (queue-influence; the TCP flow)"
  $TK compare queue-influence --by queue --metric throughput_kbps --metric mean_delay_ms || exit 1
  step "Reno against Vegas on one bottleneck (reno-vs-vegas; per queue discipline)"
  $TK compare reno-vs-vegas --by name --per queue --metric throughput_kbps || exit 1
  step "ad-hoc routing protocols (manet; all flows of a run)"
  $TK compare manet --by routing --metric run_pdr --metric run_mean_delay_ms --metric nrl || exit 1
fi

if [ "${1:-}" = "--no-dashboard" ]; then
  step "done; start the dashboard with: $TK dashboard"
  exit 0
fi
step "starting the dashboard on http://127.0.0.1:8501 (Ctrl-C stops it)"
exec $TK dashboard --port 8501
