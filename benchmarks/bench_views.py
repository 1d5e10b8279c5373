"""Time the metric views over one big wired run (not a test).

Usage: python benchmarks/bench_views.py [--duration S] [--data DIR] [--repeat N] [--threads T]
Generates benchmarks/bigtrace.tcl's trace (S simulated seconds, 100 s = about 7 million
events) with /usr/bin/ns unless DIR already holds a store, ingests it, then reports the best
of N wall-clock timings of each view, fully materialised.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tracekit.ingest.pipeline import ingest_paths  # noqa: E402
from tracekit.db.query import connect  # noqa: E402

from run_benchmarks import VIEW_QUERIES as QUERIES  # noqa: E402  (one list of the views, also timed there as whole processes)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=100.0)
    ap.add_argument("--data", type=Path, default=None, help="store to reuse (created if empty)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="DuckDB threads (default: all cores)")
    args = ap.parse_args()
    data = args.data or Path(tempfile.mkdtemp(prefix="tracekit-bench-"))
    if not (data / "runs").exists() or not any((data / "runs").iterdir()):
        trace = data.parent / f"bigtrace-{args.duration:g}s.tr"
        if not trace.exists():
            t0 = time.perf_counter()
            subprocess.run(["ns", str(HERE / "bigtrace.tcl"), str(args.duration), str(trace)], check=True)
            print(f"ns: {time.perf_counter() - t0:.1f} s -> {trace}")
        t0 = time.perf_counter()
        (res,) = ingest_paths(data, [trace])
        print(f"ingest: {res.n_events:,} events in {time.perf_counter() - t0:.1f} s")
    con = connect(data, read_only_sql=False)
    con.execute("SET enable_progress_bar = false")
    if args.threads:
        con.execute(f"SET threads = {args.threads}")
    n = con.execute("SELECT count(*) FROM events").fetchall()[0][0]
    print(f"store {data}: {n:,} events")
    threads = con.execute("SELECT current_setting('threads')").fetchall()[0][0]
    print(f"DuckDB threads: {threads}; best of {args.repeat}: wall clock, and CPU time of this process")
    for name, q in QUERIES.items():
        best, best_cpu = float("inf"), float("inf")
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            con.sql(q).to_arrow_table()
            best = min(best, time.perf_counter() - t0)
            best_cpu = min(best_cpu, time.process_time() - c0)
        print(f"{name:24s} {best:7.3f} s   cpu {best_cpu:7.3f} s")


if __name__ == "__main__":
    main()
