"""Runs per minute of one sweep with the local pool (-j N) and on a Dask LocalCluster
(--scheduler local:N), in the same session, interleaved, each a whole `tracekit sweep`
process into a fresh store.

    .venv/bin/python benchmarks/bench_cluster.py                 # 40 simulations, N = 2, 3 reps
    .venv/bin/python benchmarks/bench_cluster.py --reps 1 --rates 1:4:1
    .venv/bin/python benchmarks/bench_cluster.py --loop 5000     # the submit loop alone, no-op tasks

Prints Markdown tables (for RESULTS.md, section "Sweep: local pool vs a Dask LocalCluster")
and writes the raw figures as JSON. Two measures, in each repetition one after the other:

- whole process: wall time of `tracekit sweep`, everything a user waits for: interpreter
  start-up, imports, for local:N starting (and stopping) the cluster's scheduler and worker
  processes, ns-2, ingest. CPU is the process's and its children's (ns-2; the Dask workers,
  which the client waits for);
- in process (`run_sims` / `run_sims_cluster` called from here, fresh store): the time to
  the first finished simulation (for local:N mostly starting the workers and their imports)
  and the steady rate, (n - 1) simulations over the time from the first result to the last.

With --loop N: the client's cost per task of the sweep's submit loop (cluster.drive, as
run_sims_cluster drives it: its worker check, at most MAX_IN_FLIGHT tasks ahead) against raw
Dask (every task submitted, then distributed.as_completed with results), N no-op tasks on a
LocalCluster of --workers processes, the two cases interleaved; ms per task, the time to the
first result, and the ratio of the loop's cost per task to raw Dask's.
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
    ap.add_argument("--loop", type=int, default=0, metavar="N", help="measure the submit loop on N no-op tasks instead")
    a = ap.parse_args()
    if a.loop:
        return bench_loop(a.loop, a.workers, a.reps, a.json)
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


def noop_sim(spec, *args):
    """A simulation that does nothing: the task's argument and result are a real sweep's
    (a SimSpec in, a SimResult out). Defined here, it reaches the workers by value."""
    from tracekit.experiments.sweep import SimResult

    return SimResult(spec, "done")


def _old_loop(client, specs, tag) -> list[float]:
    """The submit loop before cluster.drive (for comparison): a wait over every pending
    future for each round, then each result fetched alone."""
    from distributed import wait

    pending: set = set()
    it = iter(specs)
    stamps: list[float] = []

    def submit_more():
        while len(pending) < 2000:
            spec = next(it, None)
            if spec is None:
                return
            pending.add(client.submit(noop_sim, spec, key=f"old-{tag}-{spec.sim_id}"))

    submit_more()
    while pending:
        try:
            finished, _ = wait(list(pending), timeout=1.0, return_when="FIRST_COMPLETED")
        except TimeoutError:
            continue
        for fut in finished:
            pending.discard(fut)
            fut.result()
            fut.release()
            stamps.append(time.perf_counter())
        submit_more()
    return stamps


def bench_loop(n: int, n_workers: int, reps: int, json_out: Path | None) -> None:
    import logging

    from distributed import Client, LocalCluster, as_completed

    from tracekit.experiments import cluster as tk_cluster
    from tracekit.experiments.sweep import plan_sweep
    from tracekit.store.store import Store

    specs = plan_sweep("cbr-variants", [], list(range(1, n + 1)), {"duration": "2"})
    # the workers import tracekit from where this process does
    os.environ["PYTHONPATH"] = os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")])

    def raw(client, tag):
        t0 = time.perf_counter()
        futs = [client.submit(noop_sim, spec, key=f"raw-{tag}-{spec.sim_id}") for spec in specs]
        stamps = [time.perf_counter() for _ in as_completed(futs, with_results=True)]
        return t0, stamps

    def loop(client, tag, store):
        t0 = time.perf_counter()
        stamps: list[float] = []
        workers = tk_cluster._Workers(client, str(store), "ns", None)
        tk_cluster.drive(client, specs, noop_sim, (), lambda spec: f"loop-{tag}-{spec.sim_id}",
                         lambda item, status, value: stamps.append(time.perf_counter()), workers)
        return t0, stamps

    def old(client, tag):
        t0 = time.perf_counter()
        return t0, _old_loop(client, specs, tag)

    scratch = Path(tempfile.mkdtemp(prefix="bench-loop-"))
    cases = ("raw Dask (submit all, as_completed with results)", "sweep submit loop (cluster.drive)",
             "the loop before drive (a wait over every pending future)")
    figures: dict[str, list[dict]] = {c: [] for c in cases}
    try:
        store = scratch / "store"
        Store(store, create=True)
        with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None,
                          silence_logs=logging.ERROR) as lc, Client(lc) as client:
            client.wait_for_workers(n_workers)
            raw(client, "warm")
            for rep in range(reps):
                for case in cases:
                    load = os.getloadavg()[0]
                    t0, stamps = (raw(client, rep) if case == cases[0] else loop(client, rep, store) if case == cases[1]
                                  else old(client, rep))
                    assert len(stamps) == n, (case, len(stamps))
                    total = stamps[-1] - t0
                    f = {"total_s": total, "first_s": stamps[0] - t0, "ms_per_task": 1000 * total / n, "load1": load}
                    figures[case].append(f)
                    print(f"rep {rep + 1} {case}: {f['ms_per_task']:.2f} ms/task, first result after {f['first_s']:.2f} s, "
                          f"load {load:.2f}", file=sys.stderr)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    def med(xs):
        return sorted(xs)[len(xs) // 2]

    base = med([f["ms_per_task"] for f in figures[cases[0]]])
    print(f"{n} no-op tasks (a SimSpec in, a SimResult out) on a LocalCluster of {n_workers} worker processes, "
          f"{reps} repetitions, cases interleaved; median.\n")
    print("| how | ms per task | first result after | ratio to raw Dask | ms per task of each rep | 1-min load at start |")
    print("|---|---|---|---|---|---|")
    for case, fs in figures.items():
        ms = med([f["ms_per_task"] for f in fs])
        print(f"| {case} | {ms:.2f} | {med([f['first_s'] for f in fs]):.2f} s | {ms / base:.2f} | "
              f"{' / '.join('%.2f' % f['ms_per_task'] for f in fs)} | {' / '.join('%.1f' % f['load1'] for f in fs)} |")
    if json_out:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
