"""Time every metric view of sql/metrics/ over a store, one by one (not a test).

Usage: python benchmarks/bench_each_view.py --data DIR [--repeat N] [--threads T]

For each view (table macros with fixed arguments): `define`, the seconds to create the
views that query needs on a fresh connection (connect(for_query=...): DuckDB binds each view
through the whole chain below it), and `query`, the best of N wall-clock timings of
`SELECT count(*) FROM <view>` on that connection, with the process's CPU seconds. Uses the
tracekit that the running Python imports, so the same script times two versions side by side
(e.g. a checkout's .venv/bin/python against another's).
"""
from __future__ import annotations

import argparse
import time

from tracekit.query import close, connect, sql_files

ARGS = {"throughput_series": "(0.1)", "flow_stats_window": "(0.0, 10.0)"}
INTERNAL = {"flow_stats_in"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="DuckDB threads (default: all cores)")
    ap.add_argument("--views", nargs="*", help="only these views")
    args = ap.parse_args()
    views = [f.name for f in sql_files() if f.layer == "metrics" and f.kind != "macro" and f.name not in INTERNAL]
    if args.views:
        views = [v for v in views if v in args.views]
    print(f"{'view':24s} {'define':>8s} {'query':>8s} {'cpu':>8s}  rows")
    for v in sorted(views):
        q = f"SELECT count(*) FROM {v}{ARGS.get(v, '')}"
        t0 = time.perf_counter()
        con = connect(args.data, read_only_sql=False, for_query=q)
        define = time.perf_counter() - t0
        con.execute("SET enable_progress_bar = false")
        if args.threads:
            con.execute(f"SET threads = {args.threads}")
        best, best_cpu, n = float("inf"), float("inf"), None
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            n = con.execute(q).fetchall()[0][0]
            best = min(best, time.perf_counter() - t0)
            best_cpu = min(best_cpu, time.process_time() - c0)
        close(con)
        print(f"{v:24s} {define:8.3f} {best:8.3f} {best_cpu:8.3f}  {n}")


if __name__ == "__main__":
    main()
