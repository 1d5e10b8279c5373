"""Where a wireless ingest's time goes, as whole processes side by side with one gawk pass
(bench_wireless.py's per-flow AGT counts): the floors under `tracekit ingest` on this machine.

Usage: .venv/bin/python benchmarks/bench_wireless_limits.py TRACE [TRACE ...] [--reps 3]
                                                            [--before OTHER_VENV_PYTHON]
Cases, each a whole process, run one after the other in each repetition (interleaved), the
trace in the page cache:
  gawk                 bench_wireless.py's gawk program (per-flow AGT sent/received counts)
  start-up             python importing what ingest imports (tracekit.apps.cli, tracekit.ingest.pipeline)
  read+sha256          start-up, then the file read in 8 MiB chunks, hashed and split into
                       lines (TraceSource.chunks: what ingest does before parsing)
  +parse               that, and every chunk parsed by the wireless parser (its C fast path
                       where built, else the polars parser), on one thread
  ingest, no facts     `tracekit ingest` with the stored facts (tracekit.ingest.facts) skipped
                       (and their connection, made ahead):
                       read, parse on two threads, write the Parquet parts, commit
  ingest               `tracekit ingest` into a fresh store
  +parse (before)      with --before: +parse run by another installation's python (e.g.
                       /work/main/.venv/bin/python: the code before this change)
  ingest (before)      with --before: `tracekit ingest` run by that python
Prints wall (median), CPU (user+sys, median), peak RSS, and the ratio to gawk's wall, both
of medians and the median of the per-repetition ratios (steadier on a busy machine); then
the parse's own CPU (+parse less read+sha256, each repetition's difference, median), and
with --before the same for the other installation.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_wireless import GAWK_FLOWS  # noqa: E402
from benchproc import PY, timed  # noqa: E402

READ = """
import sys
import tracekit.apps.cli, tracekit.ingest.pipeline
from tracekit.formats.sources import TraceSource
from tracekit.formats.parsers import get_parser
src = TraceSource.open(sys.argv[1])
parse = sys.argv[2] == "1"
p = get_parser("wireless")
for c in src.chunks():
    if parse:
        p.parse_chunk(c.data, c.first_line_no)
print(src.sha256)
"""

# `tracekit ingest` with materialise_run (the stored facts) replaced by a no-op
NO_FACTS = """
import sys
import tracekit.ingest.pipeline
tracekit.ingest.pipeline.materialise_run = lambda *a, **k: []
from tracekit.apps.cli import app
sys.argv = ["tracekit", "ingest", *sys.argv[1:]]
app()
"""


def bench(trace: Path, reps: int, before: str | None) -> None:
    with open(trace, "rb") as f:                       # warm the page cache
        while f.read(1 << 24):
            pass
    cases: dict[str, list] = {
        "gawk": ["gawk", GAWK_FLOWS, trace],
        "start-up": [PY, "-c", "import tracekit.apps.cli, tracekit.ingest.pipeline"],
        "read+sha256": [PY, "-c", READ, trace, "0"],
        "+parse": [PY, "-c", READ, trace, "1"],
        "ingest, no facts": [PY, "-c", NO_FACTS, trace, "--data"],
        "ingest": [PY, "-m", "tracekit", "ingest", trace, "--data"],
    }
    if before:
        cases["+parse (before)"] = [before, "-c", READ, trace, "1"]
        cases["ingest (before)"] = [before, "-m", "tracekit", "ingest", trace, "--data"]
    got: dict[str, list] = {k: [] for k in cases}
    load = []
    for _ in range(reps):
        load.append(os.getloadavg()[0])
        for name, cmd in cases.items():
            store = None
            if cmd[-1] == "--data":
                store = tempfile.mkdtemp(prefix="tk-wl-limits-")
                cmd = [*cmd, str(Path(store) / "store")]
            try:
                got[name].append(timed(cmd))
            finally:
                if store:
                    shutil.rmtree(store, ignore_errors=True)
    size_mb = trace.stat().st_size / 1e6
    g = statistics.median(p.wall_s for p in got["gawk"])
    print(f"\ntrace: {trace} ({size_mb:.0f} MB), {os.cpu_count()} cores, median of {reps}, "
          f"1-min load average at each rep's start: {', '.join(f'{x:.1f}' for x in load)}")
    print(f"{'case':<18} {'wall s':>7} {'x gawk':>7} {'paired':>7} {'CPU s':>7} {'peak MB':>8}   walls")
    for name, rows in got.items():
        w = statistics.median(r.wall_s for r in rows)
        c = statistics.median(r.cpu_s for r in rows)
        m = max(r.rss_mb for r in rows)
        paired = statistics.median(r.wall_s / a.wall_s for r, a in zip(rows, got["gawk"]))
        print(f"{name:<18} {w:7.2f} {w / g:7.2f} {paired:7.2f} {c:7.2f} {m:8.0f}   {' / '.join(f'{r.wall_s:.2f}' for r in rows)}")
    for case in ("+parse", "+parse (before)"):
        if case in got:
            cpu = [p.cpu_s - r.cpu_s for p, r in zip(got[case], got["read+sha256"])]
            print(f"parse CPU ({case} less read+sha256): {statistics.median(cpu):.2f} s "
                  f"({' / '.join(f'{x:.2f}' for x in cpu)})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", type=Path, nargs="+")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--before", help="another installation's python, to time its `tracekit ingest` alongside")
    a = ap.parse_args()
    for trace in a.trace:
        bench(trace.resolve(), a.reps, a.before)


if __name__ == "__main__":
    main()
