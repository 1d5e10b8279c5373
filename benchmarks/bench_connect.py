"""Connecting to a store of many runs, and the commands that bind the big views (not a test).

Usage: python benchmarks/bench_connect.py --data DIR [--experiment NAME] [--reps N] [--seeds 1-3]

Every `tracekit` command connects first: the raw_* views over the store's Parquet parts, then
every sql/ view. What that costs grows with the number of part files, so this measures it on
a store of many small runs (a sweep), as whole processes (wall, CPU, peak RSS from os.wait4):

- baseline: a plain `duckdb` process that reads one column of every events part of the store
  (`SELECT count(*), sum(size) FROM read_parquet([...])`): the floor for touching every file;
- `tracekit sql "SELECT 1"` (connect alone), `tracekit sql "SELECT count(*) FROM flow_stats"`,
  `tracekit metrics --format csv`, and with --experiment `tracekit compare --experiment NAME`.

Each tracekit figure is also given as a ratio to the baseline measured in the same repetition,
so that a busy machine slows both alike. If DIR holds no store, it is first filled with
`tracekit sweep --experiment NAME --seeds SEEDS -j 1` (cbr-exp1 with 3 seeds: 396 simulations,
1188 runs, 3310 part files, ~480 MB, about 5 min on one core).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchproc import PY, TK, neutral_cwd, timed  # noqa: E402

BASELINE = """
import duckdb, glob, sys
files = sorted(glob.glob(sys.argv[1] + "/runs/run_id=*/events-*.parquet"))
print(duckdb.connect().execute("SELECT count(*), sum(size) FROM read_parquet(?)", [files]).fetchall())
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="the store (filled by a sweep if it holds none)")
    ap.add_argument("--experiment", default="cbr-exp1", help="for the sweep and `compare` ('' to skip compare)")
    ap.add_argument("--seeds", default="1-3", help="seeds of the sweep that fills an empty store")
    ap.add_argument("--reps", type=int, default=1)
    args = ap.parse_args()
    data = str(args.data.resolve())
    if not (args.data / "runs").is_dir() or not any((args.data / "runs").iterdir()):
        if not args.experiment:
            raise SystemExit("an empty store needs --experiment to fill it")
        t0 = time.perf_counter()
        subprocess.run([*TK, "sweep", "--experiment", args.experiment, "--seeds", args.seeds, "-j", "1",
                        "--data", data], check=True, cwd=neutral_cwd())
        print(f"sweep: {time.perf_counter() - t0:.0f} s")
    runs = list((args.data / "runs").glob("run_id=*"))
    parts = list((args.data / "runs").glob("run_id=*/*.parquet"))
    print(f"store {data}: {len(runs)} runs, {len(parts)} Parquet files; load {os.getloadavg()[0]:.1f}")

    cases = {
        "baseline: duckdb sum(size) over every events part": [PY, "-c", BASELINE, data],
        "tracekit sql 'SELECT 1'": [*TK, "sql", "SELECT 1", "--data", data],
        "tracekit sql 'SELECT count(*) FROM flow_stats'": [*TK, "sql", "SELECT count(*) FROM flow_stats", "--data", data],
        "tracekit metrics --format csv": [*TK, "metrics", "--format", "csv", "--data", data],
    }
    if args.experiment:
        cases[f"tracekit compare --experiment {args.experiment}"] = [*TK, "compare", "--experiment", args.experiment, "--data", data]
    res: dict[str, list] = {k: [] for k in cases}
    ratios: dict[str, list[float]] = {k: [] for k in cases}
    for rep in range(args.reps):
        base = None
        for name, cmd in cases.items():
            r = timed(cmd)
            res[name].append(r)
            base = base or r.wall_s
            ratios[name].append(r.wall_s / base)
        print(f"rep {rep + 1}/{args.reps} done; load {os.getloadavg()[0]:.1f}", file=sys.stderr)
    print(f"median of {args.reps}: wall s, CPU s (user + system), peak RSS MB, wall / baseline wall")
    for name in cases:
        wall = statistics.median(r.wall_s for r in res[name])
        cpu = statistics.median(r.cpu_s for r in res[name])
        rss = statistics.median(r.rss_mb for r in res[name])
        print(f"{name:52s} {wall:8.2f} {cpu:8.2f} {rss:8.0f} {statistics.median(ratios[name]):8.2f}x")


if __name__ == "__main__":
    main()
