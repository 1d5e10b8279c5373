"""CLI start-up, as whole processes (issue 16: `tracekit sql "SELECT 1"` and `tracekit --help`
in <= 0.3 s). Not a test: it prints a Markdown section, and with --results writes it into
benchmarks/RESULTS.md (replacing its own section, between the START/END markers).

Usage: python benchmarks/bench_startup.py [--data DIR] [--reps 5] [--results benchmarks/RESULTS.md]

Each case is one whole process, timed from spawn to exit (wall; CPU and peak RSS from
os.wait4), the median of --reps repetitions taken round-robin (every case once, then again)
so that a change in the machine's load touches them all alike. In the same session, two
baselines: a bare interpreter (`python -c pass`) and `import duckdb` plus one query on an
in-memory connection (the floor of any command that queries). Cases:

- `tracekit --help`;
- `tracekit sql "SELECT 1"` on an empty store (one made here, in a temporary directory);
- `tracekit sql "SELECT 1"` and `tracekit sql "SELECT count(*) FROM flow_stats"` on the store
  DIR (--data; its number of runs is counted and reported);
- with --before PYTHON, `sql "SELECT 1"` run by another installation (the version before).
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
from benchproc import PY, timed  # noqa: E402

TK = [PY, "-m", "tracekit"]        # as the --before case is run (an interpreter, not a script)
START, END = "<!-- bench_startup: START -->", "<!-- bench_startup: END -->"


def n_runs(store: Path) -> int:
    runs = store / "runs"
    return sum(1 for p in runs.iterdir() if p.name.startswith("run_id=")) if runs.is_dir() else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, help="a store of many runs (e.g. filled by `tracekit sweep`)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--results", type=Path, help="write the section into this RESULTS.md")
    ap.add_argument("--before", metavar="PYTHON", help="also time `sql \"SELECT 1\"` with another installation's interpreter "
                    "(e.g. a checkout of the previous version: /path/to/.venv/bin/python), in the same rounds")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        empty = Path(tmp) / "empty-store"
        # an empty store: what `tracekit ingest` creates before its first run (an empty trace
        # directory ingests nothing); made through the library, not by hand
        timed([PY, "-c", "import sys; from tracekit.store.store import Store; Store(sys.argv[1], create=True)", empty])
        cases: list[tuple[str, list[str]]] = [
            ("`python -c pass` (baseline)", [PY, "-c", "pass"]),
            ("`import duckdb` + `SELECT 1` (baseline)", [PY, "-c", "import duckdb; duckdb.connect().execute('select 1').fetchall()"]),
            ("`tracekit --help`", [*TK, "--help"]),
            ('`tracekit sql "SELECT 1"`, empty store', [*TK, "sql", "SELECT 1", "--data", str(empty), "--format", "csv"]),
        ]
        runs = None
        if args.data is not None:
            runs = n_runs(args.data)
            cases += [
                (f'`tracekit sql "SELECT 1"`, {runs} runs', [*TK, "sql", "SELECT 1", "--data", str(args.data.resolve()), "--format", "csv"]),
                (f'`tracekit sql "SELECT count(*) FROM flow_stats"`, {runs} runs',
                 [*TK, "sql", "SELECT count(*) FROM flow_stats", "--data", str(args.data.resolve()), "--format", "csv"]),
            ]
        if args.before:
            store = str(args.data.resolve()) if args.data is not None else str(empty)
            cases.append((f'`tracekit sql "SELECT 1"`, {runs if args.data is not None else "empty store,"} runs, with `{args.before}` (before)',
                          [args.before, "-m", "tracekit", "sql", "SELECT 1", "--data", store, "--format", "csv"]))
        load0 = os.getloadavg()
        for _, cmd in cases:                      # warm the page cache and .pyc files
            timed(cmd)
        got: dict[str, list] = {name: [] for name, _ in cases}
        for _ in range(args.reps):
            for name, cmd in cases:
                got[name].append(timed(cmd))
        load1 = os.getloadavg()

    base_wall = statistics.median(p.wall_s for p in got[cases[1][0]])
    base_cpu = statistics.median(p.cpu_s for p in got[cases[1][0]])
    lines = [START, "## CLI start-up (`benchmarks/bench_startup.py`)", "",
             f"Whole processes, median of {args.reps} (round-robin), `{' '.join(['python', 'benchmarks/bench_startup.py', *sys.argv[1:]])}`; "
             f"load average {load0[0]:.1f} before, {load1[0]:.1f} after, on {os.cpu_count()} cores. "
             "Target (issue 16): `tracekit sql \"SELECT 1\"` and `tracekit --help` <= 0.3 s. "
             "Ratios are to the `import duckdb` baseline measured in the same run.", "",
             "| command | wall | CPU | peak RSS | wall / duckdb baseline | CPU / duckdb baseline |",
             "|---|---|---|---|---|---|"]
    for name, _ in cases:
        ws, cs, rs = zip(*((p.wall_s, p.cpu_s, p.rss_bytes) for p in got[name]))
        w, c, r = statistics.median(ws), statistics.median(cs), statistics.median(rs)
        lines.append(f"| {name} | {w:.3f} s | {c:.3f} s | {r / 2**20:.0f} MB | {w / base_wall:.2f} | {c / base_cpu:.2f} |")
    lines += ["", END]
    section = "\n".join(lines)
    print(section)
    if args.results is not None:
        text = args.results.read_text() if args.results.exists() else ""
        if START in text and END in text:
            text = text[:text.index(START)] + section + text[text.index(END) + len(END):]
        else:
            text = text.rstrip("\n") + "\n\n" + section + "\n"
        args.results.write_text(text)


if __name__ == "__main__":
    main()
