"""What each start-up trick of the CLI buys (issue 40): the everyday commands as whole
processes, run by several checkouts of tracekit side by side. Not a test: it prints a Markdown
table, and with --results writes it into benchmarks/RESULTS.md (replacing the section of the
same --title, between its START/END markers).

Usage: python benchmarks/bench_tricks.py --variant NAME=DIR [--variant NAME=DIR ...]
           --small TRACE --big TRACE [--reps 5] [--title T] [--results benchmarks/RESULTS.md]

A variant is a directory holding a `tracekit/` package (a checkout, or a copy of one with a
trick switched off by a local edit), run as `python -m tracekit` with PYTHONPATH=DIR and
byte-compiled first. Every case is timed by benchproc.timed (wall from spawn to exit, CPU of
the process and its children), the median of --reps repetitions taken round-robin (every
variant and case once, then again), so that the machine's load touches them all alike. Each
ingest writes a new store of its own (none removed before the end: benchproc's note on
ext4). Cases: `tracekit --help`, `tracekit sql "SELECT 1"` on an empty store, `tracekit
ingest` of --small and of --big. The first variant is the reference of the ratios.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from benchproc import PY, compile_installation, timed  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", action="append", required=True, metavar="NAME=DIR")
    ap.add_argument("--small", type=Path, required=True, help="a small plain trace")
    ap.add_argument("--big", type=Path, required=True, help="a big plain trace (e.g. ~50 MB of bigtrace.tcl)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--title", default="Start-up tricks")
    ap.add_argument("--results", type=Path)
    args = ap.parse_args()
    variants = [(n, Path(d).resolve()) for n, _, d in (v.partition("=") for v in args.variant)]
    mb = {t: t.stat().st_size / 1e6 for t in (args.small, args.big)}

    with tempfile.TemporaryDirectory(prefix="bench-tricks-") as tmp:
        work = Path(tmp)
        envs = {n: {**os.environ, "PYTHONPATH": str(d)} for n, d in variants}
        for n, _ in variants:
            compile_installation(PY, envs[n])
        empty = work / "empty"
        timed([PY, "-c", "import sys; from tracekit.store.store import Store; Store(sys.argv[1], create=True)", empty],
              env=envs[variants[0][0]])
        counter = iter(range(10**9))

        def cases(n: str) -> list[tuple[str, list]]:
            return [
                ("`tracekit --help`", [PY, "-m", "tracekit", "--help"]),
                ('`tracekit sql "SELECT 1"`, empty store', [PY, "-m", "tracekit", "sql", "SELECT 1", "--data", empty, "--format", "csv"]),
                (f"`tracekit ingest` {args.small.name} ({mb[args.small]:.1f} MB)",
                 [PY, "-m", "tracekit", "ingest", args.small.resolve(), "--data", lambda: work / f"s{next(counter)}"]),
                (f"`tracekit ingest` {args.big.name} ({mb[args.big]:.1f} MB)",
                 [PY, "-m", "tracekit", "ingest", args.big.resolve(), "--data", lambda: work / f"s{next(counter)}"]),
            ]

        def run(n: str, cmd: list):
            return timed([a() if callable(a) else a for a in cmd], env=envs[n])

        load0 = os.getloadavg()
        for n, _ in variants:                   # warm the page cache
            for _, cmd in cases(n):
                run(n, cmd)
        got: dict[tuple[str, str], list] = {}
        for _ in range(args.reps):
            for n, _ in variants:
                for case, cmd in cases(n):
                    got.setdefault((n, case), []).append(run(n, cmd))
        load1 = os.getloadavg()

    names = [c for c, _ in cases(variants[0][0])]
    ref = variants[0][0]
    start, end = f"<!-- bench_tricks {args.title}: START -->", f"<!-- bench_tricks {args.title}: END -->"
    lines = [start, f"## {args.title} (`benchmarks/bench_tricks.py`)", "",
             f"Whole processes, median of {args.reps} (round-robin), wall (CPU); `python benchmarks/bench_tricks.py "
             f"{' '.join(sys.argv[1:])}`; load average {load0[0]:.1f} before, {load1[0]:.1f} after, on {os.cpu_count()} cores. "
             f"In brackets: the wall time's change against `{ref}`.", "",
             "| variant | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for n, _ in variants:
        cells = []
        for c in names:
            w = statistics.median(p.wall_s for p in got[(n, c)])
            cpu = statistics.median(p.cpu_s for p in got[(n, c)])
            w0 = statistics.median(p.wall_s for p in got[(ref, c)])
            cells.append(f"{w:.3f} s ({cpu:.3f} s)" + ("" if n == ref else f" [{(w / w0 - 1) * 100:+.0f} %]"))
        lines.append(f"| `{n}` | " + " | ".join(cells) + " |")
    lines += ["", end]
    section = "\n".join(lines)
    print(section)
    if args.results is not None:
        text = args.results.read_text() if args.results.exists() else ""
        if start in text and end in text:
            text = text[:text.index(start)] + section + text[text.index(end) + len(end):]
        else:
            text = text.rstrip("\n") + "\n\n" + section + "\n"
        args.results.write_text(text)


if __name__ == "__main__":
    main()
