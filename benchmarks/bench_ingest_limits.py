"""Where ingest's time goes, as whole processes side by side with one gawk pass: the floors
under `tracekit ingest` on this machine.

Usage: .venv/bin/python benchmarks/bench_ingest_limits.py TRACE [--reps 3] [--no-pure]
Cases, each a whole process, interleaved per repetition, trace in the page cache:
  gawk             one gawk pass (one flow's throughput, as bench_ingest.py)
  wc -l            a count-only scan of the file
  sha256sum        the file hashed by coreutils (a run's id is the sha256 of its content)
  start-up         python importing what ingest imports (tracekit.apps.cli, tracekit.ingest.pipeline)
  read+sha256      start-up, then the file read in 8 MiB chunks, hashed and split into lines
                   (TraceSource.chunks: what ingest does before parsing), on one thread
  + parse          that, and every chunk parsed (the wired C fast path, or the polars parser)
  + write          that, and every chunk's events written as ingest writes its Parquet parts;
                   still one thread: the CPU this work needs, with no overlap
  ingest, no facts `tracekit ingest` into a fresh store without the stored facts step
                   (tracekit.ingest.facts.materialise_run made a no-op): reading, hashing,
                   parsing and writing overlapped on the machine's cores, the time checks,
                   the run record and the commit -- the floor of this design
  ingest           `tracekit ingest` into a fresh store (adds the stored facts)
  ingest (pure)    the same with TRACEKIT_PURE_PYTHON=1 (the polars parser)
Prints wall (median), CPU (user+sys, median) and peak RSS for each, and the ratio to gawk;
then the lower bound the one-thread cases give for 2 cores: start-up + (CPU of `+ write` -
CPU of start-up) / cores, what a perfect split of that work over the cores would take.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PY = sys.executable

READ = """
import sys, tempfile, shutil
from pathlib import Path
import tracekit.apps.cli, tracekit.ingest.pipeline
from tracekit.ingest.pipeline import _store_part
from tracekit.formats.sources import TraceSource
from tracekit.formats.parsers import get_parser
src = TraceSource.open(sys.argv[1])
parse, write = sys.argv[2] >= "1", sys.argv[2] == "2"
p = get_parser("wired")
out = Path(tempfile.mkdtemp(prefix="tk-limits-"))
for k, c in enumerate(src.chunks()):
    if parse:
        res = p.parse_chunk(c.data, c.first_line_no)
        if write:
            _store_part(res.tables["events"], "events", out / f"events-{k:05d}.parquet")
shutil.rmtree(out)
print(src.sha256)
"""

# `tracekit ingest` without the stored facts: the CLI with materialise_run made a no-op
NO_FACTS = """
import sys
import tracekit.ingest.pipeline
tracekit.ingest.pipeline.materialise_run = lambda *a, **k: None
from tracekit.apps import cli
sys.argv = ["tracekit", *sys.argv[1:]]
getattr(cli, "entry_point", cli.main)()      # as the `tracekit` command runs it
"""


def timed(cmd: list[str], env: dict | None = None) -> tuple[float, float, int]:
    """Wall s, CPU s (user + sys) and peak RSS (KB) of one whole process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{p.stderr.read().decode()}")  # type: ignore[union-attr]
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", type=Path)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-pure", action="store_true", help="leave out the pure-Python ingest (slow)")
    a = ap.parse_args()
    trace = str(a.trace)
    with open(trace, "rb") as f:
        while f.read(1 << 24):
            pass
    pure = {**os.environ, "TRACEKIT_PURE_PYTHON": "1"}
    cases: dict[str, tuple[list[str], dict | None]] = {
        "gawk": (["gawk", '$1=="r" && $4==3 && $8==1 {b+=$6} END {print b}', trace], None),
        "wc -l": (["wc", "-l", trace], None),
        "sha256sum": (["sha256sum", trace], None),
        "start-up": ([PY, "-c", "import tracekit.apps.cli, tracekit.ingest.pipeline"], None),
        "read+sha256": ([PY, "-c", READ, trace, "0"], None),
        "+ parse": ([PY, "-c", READ, trace, "1"], None),
        "+ write": ([PY, "-c", READ, trace, "2"], None),
        "ingest, no facts": ([PY, "-c", NO_FACTS, "ingest", trace, "--data"], None),
        "ingest": ([PY, "-m", "tracekit", "ingest", trace, "--data"], None),
        "ingest (pure)": ([PY, "-m", "tracekit", "ingest", trace, "--data"], pure),
    }
    if a.no_pure:
        del cases["ingest (pure)"]
    got: dict[str, list[tuple[float, float, int]]] = {k: [] for k in cases}
    load = []
    for _ in range(a.reps):
        load.append(os.getloadavg()[0])
        for name, (cmd, env) in cases.items():
            store = None
            if cmd[-1] == "--data":
                store = tempfile.mkdtemp(prefix="tk-limits-")
                cmd = cmd + [store]
            try:
                got[name].append(timed(cmd, env))
            finally:
                if store:
                    shutil.rmtree(store, ignore_errors=True)
    size_mb = a.trace.stat().st_size / 1e6
    g = statistics.median(w for w, _, _ in got["gawk"])
    print(f"trace: {trace} ({size_mb:.0f} MB), {os.cpu_count()} cores, median of {a.reps}, "
          f"1-min load average at each rep's start: {', '.join(f'{x:.1f}' for x in load)}")
    print(f"{'case':<20} {'wall s':>7} {'x gawk':>7} {'CPU s':>7} {'peak RSS MB':>12}   walls")
    for name, rows in got.items():
        w = statistics.median(r[0] for r in rows)
        c = statistics.median(r[1] for r in rows)
        m = max(r[2] for r in rows) / 1024
        print(f"{name:<20} {w:7.2f} {w / g:7.2f} {c:7.2f} {m:12.0f}   {' / '.join(f'{r[0]:.2f}' for r in rows)}")
    cores = os.cpu_count() or 1
    up_w = statistics.median(r[0] for r in got["start-up"])
    up_c = statistics.median(r[1] for r in got["start-up"])
    work_c = statistics.median(r[1] for r in got["+ write"]) - up_c
    bound = up_w + work_c / cores
    print(f"lower bound on {cores} cores: start-up {up_w:.2f} s + ({work_c:.2f} s of read, hash, parse and write CPU) / {cores} "
          f"= {bound:.2f} s = {bound / g:.2f} x gawk")


if __name__ == "__main__":
    main()
