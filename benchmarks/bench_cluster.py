"""Runs per minute of one sweep with the local pool (-j N) and on a Dask LocalCluster
(--scheduler local:N), in the same session, interleaved, each a whole `tracekit sweep`
process into a fresh store.

    .venv/bin/python benchmarks/bench_cluster.py                 # 40 simulations, N = 2, 3 reps
    .venv/bin/python benchmarks/bench_cluster.py --reps 1 --rates 1:4:1

Prints Markdown tables (for RESULTS.md, section "Sweep: local pool vs a Dask LocalCluster")
and writes the raw figures as JSON. Two measures, in each repetition one after the other:

- whole process: wall time of `tracekit sweep`, everything a user waits for: interpreter
  start-up, imports, for local:N starting (and stopping) the cluster's scheduler and worker
  processes, ns-2, ingest. CPU is the process's and its children's (ns-2; the Dask workers,
  which the client waits for);
- in process (`run_sims` / `run_sims_cluster` called from here, fresh store): the time to
  the first finished simulation (for local:N mostly starting the workers and their imports)
  and the steady rate, (n - 1) simulations over the time from the first result to the last.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY = sys.executable


def run(argv: list[str]) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TRACEKIT_DATA"}
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out, err = p.communicate()
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({p.returncode}):\n{err[-3000:]}")
    return {"wall_s": wall, "load1": load, "summary": out.strip().splitlines()[-1]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2, help="N of -j N and local:N")
    ap.add_argument("--rates", default="1:10:1", help="the cbr_rate_mbps grid")
    ap.add_argument("--variants", default="Tahoe,Reno,Newreno,Vegas")
    ap.add_argument("--duration", default="2")
    ap.add_argument("--json", type=Path, default=None, help="also write the raw figures here")
    a = ap.parse_args()
    sweep = ["sweep", "cbr-variants", "--grid", f"variant={a.variants}", "--grid", f"cbr_rate_mbps={a.rates}",
             "--set", f"duration={a.duration}", "--seeds", "1"]
    n = a.workers
    cases = {f"local pool (-j {n})": ["-j", str(n)], f"Dask LocalCluster (--scheduler local:{n})": ["--scheduler", f"local:{n}"]}
    figures: dict[str, list[dict]] = {c: [] for c in cases}
    scratch = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    # CPU of a whole sweep including its children: RUSAGE_CHILDREN before and after
    import resource

    inproc: dict[str, list[dict]] = {c: [] for c in cases}
    try:
        for rep in range(a.reps):
            for case, extra in cases.items():
                store = scratch / f"inproc-{rep}-{extra[0].strip('-')}"
                f = run_in_process(sweep, extra, store)
                inproc[case].append(f)
                print(f"rep {rep + 1} {case} in process: first result after {f['first_s']:.2f} s, "
                      f"steady {f['steady_runs_per_min']:.1f} runs/min", file=sys.stderr)
                shutil.rmtree(store, ignore_errors=True)
                store = scratch / f"store-{rep}-{len(figures[case])}-{extra[0].strip('-')}"
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                f = run([PY, "-m", "tracekit", *sweep, *extra, "--data", str(store)])
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                f["cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
                f["n_sims"] = int(f["summary"].split()[1])
                f["runs_per_min"] = 60 * f["n_sims"] / f["wall_s"]
                figures[case].append(f)
                print(f"rep {rep + 1} {case}: {f['wall_s']:.2f} s, {f['runs_per_min']:.1f} runs/min, load {f['load1']:.2f}", file=sys.stderr)
                shutil.rmtree(store, ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    def med(xs):
        xs = sorted(xs)
        return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2

    n_sims = next(iter(figures.values()))[0]["n_sims"]
    print(f"`tracekit {' '.join(sweep)}` ({n_sims} simulations), {a.reps} repetitions, cases interleaved, "
          "each a fresh process and a fresh store; median.\n")
    print("| how | wall (median) | runs/min | CPU (process + children) | wall of each rep (s) | 1-min load at start |")
    print("|---|---|---|---|---|---|")
    for case, fs in figures.items():
        print(f"| {case} | {med([f['wall_s'] for f in fs]):.2f} s | {med([f['runs_per_min'] for f in fs]):.1f} | "
              f"{med([f['cpu_s'] for f in fs]):.2f} s | {' / '.join('%.2f' % f['wall_s'] for f in fs)} | "
              f"{' / '.join('%.1f' % f['load1'] for f in fs)} |")
    print("\nIn process (same sweep, same repetitions): time to the first finished simulation, and the steady rate "
          "(from the first result to the last).\n")
    print("| how | first result after (median) | steady runs/min (median) | total (median) | steady runs/min of each rep |")
    print("|---|---|---|---|---|")
    for case, fs in inproc.items():
        print(f"| {case} | {med([f['first_s'] for f in fs]):.2f} s | {med([f['steady_runs_per_min'] for f in fs]):.1f} | "
              f"{med([f['total_s'] for f in fs]):.2f} s | {' / '.join('%.1f' % f['steady_runs_per_min'] for f in fs)} |")
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps({"whole_process": figures, "in_process": inproc}, indent=1))


def run_in_process(sweep: list[str], extra: list[str], store: Path) -> dict:
    """The sweep through the library (no CLI), timing each result."""
    from tracekit.experiments.sweep import parse_grid, plan_sweep, run_sims

    args = sweep[2:]
    grids = [parse_grid(args[i + 1]) for i, x in enumerate(args) if x == "--grid"]
    fixed = dict(args[i + 1].split("=", 1) for i, x in enumerate(args) if x == "--set")
    specs = plan_sweep(sweep[1], grids, [1], fixed)
    stamps: list[float] = []
    t0 = time.perf_counter()
    if extra[0] == "-j":
        run_sims(specs, store, jobs=int(extra[1]), on_result=lambda r: stamps.append(time.perf_counter()))
    else:
        from tracekit.experiments.cluster import run_sims_cluster

        run_sims_cluster(specs, store, extra[1], on_result=lambda r: stamps.append(time.perf_counter()))
    total = time.perf_counter() - t0
    return {"first_s": stamps[0] - t0, "total_s": total, "n_sims": len(stamps),
            "steady_runs_per_min": 60 * (len(stamps) - 1) / (stamps[-1] - stamps[0])}


if __name__ == "__main__":
    main()
