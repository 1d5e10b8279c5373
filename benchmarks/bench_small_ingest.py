"""CPU per trace of one `tracekit ingest DIR` of many small traces (issue 38: <= 10 ms a trace,
amortised). Not a test.

Example:
    python benchmarks/bench_small_ingest.py --traces /tmp/small300 --more /tmp/small300b \\
        --code before=/tmp/before --code after=. --reps 3

Each --code NAME=DIR is a tracekit checkout (a directory holding tracekit/ and sql/), put
first on PYTHONPATH of `python -m tracekit`; without --code, the checkout this script is in.
For each repetition and each code, round-robin: one `tracekit ingest TRACES --data FRESH`
into a fresh store, then (with --more: other, distinct traces) one `tracekit ingest MORE`
into that store, which then holds len(TRACES) runs already (an ingest of trace N must not
cost more than one of trace 1). With --gawk, one gawk pass over TRACES each repetition: the
machine's speed at the time (benchmarks/RESULTS.md's study section has it too). Whole processes (benchproc.timed: wall, and CPU of the
process and its children from wait4), medians of --reps; a markdown table on stdout.
Make distinct small traces with write_copies of benchmarks/bench_study.py.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchproc import PY, compile_installation, timed  # noqa: E402

HERE = Path(__file__).resolve().parent
GAWK = '$1=="r" && $5=="tcp" {b+=$6} END {print b+0}'      # bench_study's


def n_files(d: Path) -> int:
    return sum(1 for p in d.rglob("*") if p.is_file() and not p.name.startswith("."))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--traces", type=Path, required=True, help="directory of small traces, ingested into a fresh store")
    ap.add_argument("--more", type=Path, help="directory of other traces, ingested next into that store")
    ap.add_argument("--code", action="append", default=[], metavar="NAME=DIR",
                    help="a tracekit checkout to measure (repeatable); default: this one")
    ap.add_argument("--reps", type=int, default=3, help="repetitions (medians are shown; default 3)")
    ap.add_argument("--gawk", action="store_true", help="also one gawk pass over TRACES (the machine's speed, for reference)")
    ap.add_argument("--work", type=Path, help="where the stores go (default: a temporary directory, removed)")
    args = ap.parse_args()

    codes = [tuple(c.split("=", 1)) for c in args.code] or [("this", str(HERE.parent))]
    work = args.work or Path(tempfile.mkdtemp(prefix="tk-small-ingest-"))
    envs = {}
    for name, d in codes:
        env = {**os.environ, "PYTHONPATH": str(Path(d).resolve())}
        compile_installation(PY, env)       # not the byte-compiler's time
        envs[name] = env
    n, n_more = n_files(args.traces), (n_files(args.more) if args.more else 0)
    got: dict[str, dict[str, list]] = {name: {"fresh": [], "fresh_wall": [], "more": []} for name, _ in codes}
    awk: list[float] = []
    traces = sorted(p for p in args.traces.rglob("*") if p.is_file() and not p.name.startswith("."))
    try:
        for rep in range(args.reps):
            for name, _ in codes:
                store = work / f"{name}-{rep}"
                shutil.rmtree(store, ignore_errors=True)
                p = timed([PY, "-m", "tracekit", "ingest", args.traces, "--data", store], env=envs[name])
                got[name]["fresh"].append(p.cpu_s)
                got[name]["fresh_wall"].append(p.wall_s)
                if args.more:
                    got[name]["more"].append(timed([PY, "-m", "tracekit", "ingest", args.more, "--data", store],
                                                   env=envs[name]).cpu_s)
                if args.work is None:
                    shutil.rmtree(store, ignore_errors=True)
            if args.gawk:
                awk.append(timed(["gawk", GAWK, *traces]).cpu_s)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)

    med = statistics.median
    head = f"| code | {n} traces, fresh store: CPU | ms CPU a trace | wall |"
    line = "|---|---|---|---|"
    if args.more:
        head += f" {n_more} more into that store ({n} runs): CPU | ms CPU a trace |"
        line += "---|---|"
    print(f"`python benchmarks/bench_small_ingest.py {' '.join(sys.argv[1:])}`; medians of {args.reps}, "
          f"whole processes (CPU: user + system, children included); load average {os.getloadavg()[0]:.1f} at the end\n")
    print(head)
    print(line)
    for name, _ in codes:
        g = got[name]
        row = f"| {name} | {med(g['fresh']):.2f} s | {med(g['fresh']) / n * 1e3:.1f} | {med(g['fresh_wall']):.2f} s |"
        if args.more:
            row += f" {med(g['more']):.2f} s | {med(g['more']) / n_more * 1e3:.1f} |"
        print(row)
    if awk:
        print(f"| one gawk pass (reference) | {med(awk):.2f} s | {med(awk) / n * 1e3:.1f} | |" + (" | |" if args.more else ""))


if __name__ == "__main__":
    main()
