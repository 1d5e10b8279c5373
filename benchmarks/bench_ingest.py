"""Ingest speed and memory against one gawk pass over the same trace, side by side.

Usage: .venv/bin/python benchmarks/bench_ingest.py [--size-mb 400] [--reps 3] [--trace FILE]
Generates a wired trace of about --size-mb with real ns-2 (benchmarks/bigtrace.tcl: a TCP
flow and heavy CBR over 100 Mb/s links) unless --trace is given, then measures, median of
--reps: `tracekit ingest` into a fresh store (wall s, MB/s, peak RSS) and a gawk pass that
computes one flow's throughput (the baseline every awk script starts from).
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from benchproc import TK, compile_installation, timed  # noqa: E402
MB_PER_SIM_S = 3.9          # bigtrace.tcl writes about this many MB per simulated second


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=float, default=400)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--trace", type=Path)
    a = ap.parse_args()
    compile_installation()       # (benchproc: else an edited module is compiled at every start)
    trace = a.trace
    if trace is None:
        dur = max(1, round(a.size_mb / MB_PER_SIM_S))
        trace = HERE / "data" / f"big-{dur}s.tr"
        if not trace.exists():
            trace.parent.mkdir(exist_ok=True)
            print(f"generating {trace} with ns-2 ({dur} simulated seconds)...", file=sys.stderr)
            subprocess.run(["ns", str(HERE / "bigtrace.tcl"), str(dur), str(trace)], check=True, stdout=subprocess.DEVNULL)
    size_mb = trace.stat().st_size / 1e6
    with open(trace, "rb") as f:                       # warm the page cache for both
        while f.read(1 << 24):
            pass
    tk = [*TK, "ingest", str(trace.resolve()), "--data"]
    gawk = ["gawk", '$1=="r" && $4==3 && $8==1 {b+=$6} END {print b}', str(trace)]
    ingest, awk, rss = [], [], []
    for _ in range(a.reps):
        awk.append(timed(gawk).wall_s)
        store = Path(tempfile.mkdtemp(prefix="tk-bench-"))
        try:
            p = timed(tk + [str(store)])
        finally:
            shutil.rmtree(store, ignore_errors=True)
        ingest.append(p.wall_s)
        rss.append(p.rss_mb)
    ti, ta = statistics.median(ingest), statistics.median(awk)
    print(f"trace: {trace} ({size_mb:.0f} MB), {os.cpu_count()} cores, median of {a.reps}")
    print(f"tracekit ingest: {ti:.2f} s, {size_mb / ti:.0f} MB/s, peak RSS {max(rss):.0f} MB")
    print(f"gawk one pass:   {ta:.2f} s, {size_mb / ta:.0f} MB/s")
    print(f"ratio ingest / gawk: {ti / ta:.2f}")


if __name__ == "__main__":
    main()
