"""`tracekit sql "SELECT * FROM flow_stats"` as a whole process beside one gawk pass over the
same trace, and the floors under it (issue 16: flow_stats <= 0.5 x gawk).

Usage: .venv/bin/python benchmarks/bench_flow_stats.py TRACE STORE [--reps 5] [--other-python PY [--other-store DIR]]
STORE holds TRACE ingested (with its stored facts). Cases, each a whole process, interleaved
per repetition, trace in the page cache:
  gawk                 one gawk pass (one flow's throughput, as run_benchmarks.py)
  sql SELECT 1         `tracekit sql "SELECT 1"` on STORE: start-up, no views
  bare group-by        `tracekit sql` of a group-by per flow over the stored packet_facts
                       (count, sums, min/max: no percentiles, no jitter, no goodput): what a
                       flow_stats that reads the packets costs at least
  flow_run_facts       `tracekit sql "SELECT * FROM flow_run_facts"`: start-up, the views it
                       needs, and the stored per-flow whole-run facts read (one row per flow):
                       the floor of a flow_stats that reads them (the views over flows and
                       labels, and the per-flow arithmetic, are what flow_stats adds)
  flow_stats           `tracekit sql "SELECT * FROM flow_stats"` (csv, as run_benchmarks.py)
  flow_stats (other)   the same with --other-python's tracekit (e.g. main's .venv), to compare
                       two versions side by side (on --other-store, default STORE: a store
                       whose facts that version wrote)
Prints wall and CPU (median) and each one's ratio to gawk (median of the per-repetition
ratios); with --other-python, also flow_stats' wall time over the other's (median of the
per-repetition ratios).
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchproc import PY, TK, timed  # noqa: E402

ONE_FLOW = '$1=="r" && $4==3 && $8==1 {b+=$6} END {print b*8/1000/$2}'
BARE = ("SELECT fid, src_node, src_port, dst_node, dst_port, count(t_sent) AS sent, count(t_recv) AS recv, "
        "sum(drops) AS drops, sum(rx_bytes) AS rx, avg(t_recv - t_sent) AS delay, min(t_sent) AS t0, "
        "max(t_recv) AS t1 FROM packet_facts GROUP BY ALL")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", type=Path)
    ap.add_argument("store", type=Path)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--other-python", help="another installation's python (its tracekit CLI is run with -m)")
    ap.add_argument("--other-store", type=Path, help="the store --other-python reads (default: STORE)")
    a = ap.parse_args()
    with open(a.trace, "rb") as f:      # into the page cache
        while f.read(1 << 24):
            pass

    def sql(q: str, tk: list[str] = TK, store: Path = a.store):
        return lambda: timed(tk + ["sql", q, "--format", "csv", "--data", store])

    cases = {
        "gawk": lambda: timed(["gawk", ONE_FLOW, a.trace]),
        "sql SELECT 1": sql("SELECT 1"),
        "bare group-by": sql(BARE),
        "flow_run_facts": sql("SELECT * FROM flow_run_facts"),
        "flow_stats": sql("SELECT * FROM flow_stats"),
    }
    if a.other_python:
        cases["flow_stats (other)"] = sql("SELECT * FROM flow_stats", [a.other_python, "-m", "tracekit"],
                                            a.other_store or a.store)
    res: dict[str, list] = {k: [] for k in cases}
    for _ in range(a.reps):
        for k, run in cases.items():
            res[k].append(run())
    g = res["gawk"]
    print(f"python {PY}; {a.reps} interleaved repetitions")
    print(f"{'case':20s} {'wall s':>8s} {'cpu s':>8s} {'x gawk':>8s}")
    for k, ps in res.items():
        ratio = statistics.median(p.wall_s / q.wall_s for p, q in zip(ps, g))
        print(f"{k:20s} {statistics.median(p.wall_s for p in ps):8.3f} "
              f"{statistics.median(p.cpu_s for p in ps):8.3f} {ratio:8.2f}")
    if a.other_python:
        rel = statistics.median(p.wall_s / q.wall_s for p, q in zip(res["flow_stats"], res["flow_stats (other)"]))
        print(f"flow_stats / flow_stats (other), wall: {rel:.2f}")


if __name__ == "__main__":
    main()
