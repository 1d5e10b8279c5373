"""Time every metric view of sql/metrics/ over a store, one by one (not a test).

Usage: python benchmarks/bench_each_view.py --data DIR [--repeat N] [--threads T]
       python benchmarks/bench_each_view.py --data DIR --process [--reps 5] [--other-python PY [--other-data DIR]]

In process (the default), for each view (table macros with fixed arguments): `define`, the
seconds to create the views that query needs on a fresh connection (connect(for_query=...)),
and `query`, the best of N wall-clock timings of `SELECT count(*) FROM <view>` on that
connection, with the process's CPU seconds. Uses the tracekit that the running Python imports,
so the same script times two versions side by side (e.g. a checkout's .venv/bin/python against
another's).

With --process, each view is `tracekit sql "SELECT count(*) FROM <view>"` as a whole process
(start-up, views, query: what a user waits for), median wall and CPU of --reps repetitions;
with --other-python (e.g. main's .venv/bin/python), the other installation's tracekit runs the
same query (on --other-data, default DIR: a store whose stored facts that version wrote)
interleaved with this one, and the ratio this / other is the median of the per-repetition
ratios of wall time.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from tracekit.db.query import close, connect, sql_files

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchproc import TK, timed  # noqa: E402

ARGS = {"throughput_series": "(0.1)", "flow_stats_window": "(0.0, 10.0)"}
INTERNAL = {"flow_stats_in"}


def in_process(views: list[str], data: str, repeat: int, threads: int) -> None:
    print(f"{'view':24s} {'define':>8s} {'query':>8s} {'cpu':>8s}  rows")
    for v in views:
        q = f"SELECT count(*) FROM {v}{ARGS.get(v, '')}"
        t0 = time.perf_counter()
        con = connect(data, read_only_sql=False, for_query=q)
        define = time.perf_counter() - t0
        con.execute("SET enable_progress_bar = false")
        if threads:
            con.execute(f"SET threads = {threads}")
        best, best_cpu, n = float("inf"), float("inf"), None
        for _ in range(repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            n = con.execute(q).fetchall()[0][0]
            best = min(best, time.perf_counter() - t0)
            best_cpu = min(best_cpu, time.process_time() - c0)
        close(con)
        print(f"{v:24s} {define:8.3f} {best:8.3f} {best_cpu:8.3f}  {n}")


def whole_process(views: list[str], data: Path, reps: int, other_python: str | None, other_data: Path) -> None:
    tks = {"this": TK}
    if other_python:
        tks["other"] = [other_python, "-m", "tracekit"]
    head = f"{'view':24s} {'wall s':>8s} {'cpu s':>8s}"
    if other_python:
        head += f" {'other s':>8s} {'o cpu s':>8s} {'ratio':>6s}"
    print(f"whole processes, median of {reps} interleaved repetitions")
    print(head)
    for v in views:
        q = f"SELECT count(*) FROM {v}{ARGS.get(v, '')}"
        res: dict[str, list] = {k: [] for k in tks}
        for _ in range(reps):
            for k, tk in tks.items():
                res[k].append(timed(tk + ["sql", q, "--format", "csv", "--data", data if k == "this" else other_data]))
        line = (f"{v:24s} {statistics.median(p.wall_s for p in res['this']):8.3f} "
                f"{statistics.median(p.cpu_s for p in res['this']):8.3f}")
        if other_python:
            ratio = statistics.median(p.wall_s / o.wall_s for p, o in zip(res["this"], res["other"]))
            line += (f" {statistics.median(p.wall_s for p in res['other']):8.3f} "
                     f"{statistics.median(p.cpu_s for p in res['other']):8.3f} {ratio:6.2f}")
        print(line, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="DuckDB threads (default: all cores)")
    ap.add_argument("--views", nargs="*", help="only these views")
    ap.add_argument("--process", action="store_true", help="whole `tracekit sql` processes")
    ap.add_argument("--reps", type=int, default=5, help="with --process: repetitions")
    ap.add_argument("--other-python", help="with --process: another installation's python, interleaved")
    ap.add_argument("--other-data", help="with --other-python: the store it reads (default: --data)")
    args = ap.parse_args()
    views = [f.name for f in sql_files() if f.layer == "metrics" and f.kind != "macro" and f.name not in INTERNAL]
    if args.views:
        views = [v for v in views if v in args.views]
    views.sort()
    if args.process:
        whole_process(views, Path(args.data), args.reps, args.other_python, Path(args.other_data or args.data))
    else:
        in_process(views, args.data, args.repeat, args.threads)


if __name__ == "__main__":
    main()
