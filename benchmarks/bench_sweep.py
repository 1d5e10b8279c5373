"""A sweep beside ns-2 alone, for the short runs of run_benchmarks.py's sweep AND the
scenario's default run length (what users run), interleaved, with the floor beside them.

    .venv/bin/python benchmarks/bench_sweep.py --reps 3
    .venv/bin/python benchmarks/bench_sweep.py --python before=/work/main/.venv/bin/python \\
        --python after=.venv/bin/python --reps 3        # two installations, interleaved
    # or one python, two source trees (an export of the old commit, its C extension copied in):
    .venv/bin/python benchmarks/bench_sweep.py --python before=.venv/bin/python:/tmp/base \\
        --python after=.venv/bin/python --reps 3

The sweep is run_benchmarks.py's: `cbr-variants --grid variant=Tahoe,Reno,Newreno,Vegas
--grid cbr_rate_mbps=1:10:1 --seeds 1` (40 simulations), with `--set duration=2` and with the
scenario's default duration (10 s), each through tracekit.experiments.sweep.run_sims in a
fresh process and a fresh store (interpreter start-up, imports, ns-2, ingest with the raw
traces kept: the whole process, as run_benchmarks.py times it). The control is the same 40
simulations with ns-2 alone (no ingest, no store), `-j` at a time, in the same repetition.

The floor: ns-2 alone at -j 1 and -j 2, and the least tracekit can spend on one simulation:
the ingest of its three traces (as run_sims does it: labelled, raw traces kept, the stored
facts of sweep.FACTS_BATCH simulations at once where the tracekit has it) in a warm process,
into one store, the mean over many simulations' worth (`warm ingest`), and the part of it
that is the stored facts (tracekit.ingest.facts).

Outside ns-2 = 1 - (ns-2 alone's wall) / (the sweep's wall), paired per repetition (the
larger-is-worse figure of run_benchmarks.py's target); per sim = (sweep CPU - ns-2 alone CPU) / n.
The control runs under the first --python: its driver imports tracekit.experiments.sweep too,
so that import is in its wall; name the tree being measured first.
Both end as `tracekit` does (run_benchmarks.PROMPT_EXIT: tracekit.core.startup.exit_promptly, where
the tracekit has it): no interpreter teardown.

The second table: the target's figure (the larger of 1 - the sweep's own ns-2 time / (wall x
jobs) and the figure above), and the sweep's timeline: head (process start to the first ns-2
start), middle (to the last ns-2 end), tail (to the process end), from SimResult's ns-2 start
and end times (ns_start_unix_s, ns_end_unix_s) and the times this process starts and reaps it.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchproc import compile_installation, file_create_us, timed  # noqa: E402
# the control (the same simulations with ns-2 alone, as run_benchmarks.py runs it) and the
# drivers' common parts
from run_benchmarks import AS_THE_CLI, NS_ONLY_DRIVER, PROMPT_EXIT, SIM_COPIES  # noqa: E402

GRID = ["variant=Tahoe,Reno,Newreno,Vegas", "cbr_rate_mbps=1:10:1"]
SCENARIO = "cbr-variants"

# the timeline: each simulation's ns-2 start and end from SimResult.ns_start_unix_s /
# ns_end_unix_s (time.time() around run_scenario_traces), or, for a tracekit without them,
# from a wrapper of runner._run_ns (the same ns-2 process, ~1 ms less of checks around it)
SWEEP_DRIVER = AS_THE_CLI + """
import json, sys, time
from tracekit.experiments.sweep import SimResult, parse_grid, plan_sweep, run_sims
imported = time.time()
spans = []
if not hasattr(SimResult, "ns_start_unix_s"):
    from tracekit.experiments import runner
    real = runner._run_ns
    def _run_ns(*a, **k):
        t = time.time()
        try:
            return real(*a, **k)
        finally:
            spans.append((t, time.time()))
    runner._run_ns = _run_ns
data, jobs, grids, fixed, scenario = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]), json.loads(sys.argv[4]), sys.argv[5]
specs = plan_sweep(scenario, [parse_grid(g) for g in grids], [1], fixed)
res = run_sims(specs, data, jobs=jobs)
returned = time.time()
spans = spans or [(r.ns_start_unix_s, r.ns_end_unix_s) for r in res if r.status == "done"]
import tracekit
print(json.dumps({"n": len(res), "done": sum(r.status == "done" for r in res),
                  "ns_s": sum(r.ns_seconds for r in res), "tracekit": tracekit.__file__,
                  "imported_unix_s": imported, "first_ns_unix_s": min(a for a, _ in spans),
                  "last_ns_end_unix_s": max(b for _, b in spans), "returned_unix_s": returned}))
"""


# one simulation's traces (ns-2 run once), then their ingest, as run_sims does it, n times in
# a warm process into one store: each copy with a comment line of its own on top (other runs:
# not duplicates); the stored facts at each ingest, or (a tracekit with sweep.FACTS_BATCH) of
# FACTS_BATCH simulations at once after their commits
WARM_DRIVER = AS_THE_CLI + """
import json, sys, time
from pathlib import Path
from tracekit.experiments import sweep
from tracekit.experiments.sweep import make_spec, _INGEST_ORDER
from tracekit.experiments.runner import run_scenario_traces
import tracekit.ingest.pipeline as ing
import tracekit.ingest.facts as mat
from tracekit.store.store import Store
scratch, fixed, n = Path(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3])
scenario = "cbr-variants"
""" + SIM_COPIES + """
batch = getattr(sweep, "FACTS_BATCH", 0)
facts = [0.0, 0.0]
def timed(real):
    def f(*a, **k):
        t, c = time.perf_counter(), time.process_time()
        try:
            return real(*a, **k)
        finally:
            facts[0] += time.perf_counter() - t; facts[1] += time.process_time() - c
    return f
ing.materialise_run = timed(ing.materialise_run)
if batch:
    mat.materialise_committed = timed(mat.materialise_committed)
st = Store(scratch / "store", create=True)
pending = []
done_sims = [0]
def flush():
    if pending:
        mat.materialise_committed(st, list(pending))
        pending.clear()
def one(i):
    for name in _INGEST_ORDER:
        r = ing.ingest_file(st, copies[i] / name, labels={"sim_id": f"sim{i}"}, keep_trace=True, source_name=name,
                            **({"facts": False} if batch else {}))
        if batch and r.run_id is not None:
            pending.append((r.run_id, r.kind))
    # a tracekit with sweep.FACTS_TAIL counts simulations for its batches, an older one runs
    if batch and (i + 1 - done_sims[0] if hasattr(sweep, "FACTS_TAIL") else len(pending)) >= batch:
        done_sims[0] = i + 1
        flush()
one(n)
flush()
done_sims[0] = 0
facts[:] = [0.0, 0.0]
t, c = time.perf_counter(), time.process_time()
for i in range(n):
    one(i)
flush()
wall, cpu = time.perf_counter() - t, time.process_time() - c
print(json.dumps({"wall": wall / n, "cpu": cpu / n, "facts_wall": facts[0] / n, "facts_cpu": facts[1] / n, "batch": batch,
                  "bytes": sum((traces / f).stat().st_size for f in _INGEST_ORDER)}))
"""


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", action="append", default=[],
                    help="NAME=PATH[:DIR] of a python with tracekit installed (default: this one), DIR put first "
                         "on its PYTHONPATH (a tree whose tracekit/ it imports instead); repeat to compare")
    ap.add_argument("--durations", default="2,default", help="comma-separated: seconds, or 'default'")
    ap.add_argument("--jobs", default="1,2")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warm-sims", type=int, default=24, help="simulations' worth of warm ingest (the floor)")
    ap.add_argument("--json", type=Path, help="write the raw figures here")
    ap.add_argument("--scratch", type=Path, default=Path(__file__).resolve().parent / "data",
                    help="where the stores are made (default benchmarks/data/, as run_benchmarks.py's). Not "
                         "/tmp by default: on the root file system of the machine measured (ext4 without a "
                         "journal) a file created in /tmp cost 0.4-1 ms of kernel CPU against ~15 us in a "
                         "fresh directory (benchmarks/README.md, \"The sweep\"), and a sweep creates ~26 files a simulation")
    a = ap.parse_args()
    pythons, envs = {}, {}
    for spec in a.python or [f"tracekit={sys.executable}"]:
        name, _, where = spec.partition("=")
        py, _, tree = where.partition(":")
        pythons[name] = str(Path(py).absolute())
        envs[name] = {**os.environ, "PYTHONPATH": str(Path(tree).resolve())} if tree else None
        compile_installation(pythons[name], envs[name])
    durations = [d.strip() for d in a.durations.split(",")]
    jobs = [int(j) for j in a.jobs.split(",")]
    ns_name = next(iter(pythons))
    ns_py, ns_env = pythons[ns_name], envs[ns_name]
    a.scratch.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="tk-bench-sweep-", dir=a.scratch))
    raw: dict = {"runs": [], "warm": [], "load": []}

    def fixed_of(d: str) -> dict:
        return {} if d == "default" else {"duration": d}

    def sweep(name: str, d: str, j: int) -> dict:
        store = Path(tempfile.mkdtemp(prefix="store-", dir=scratch))
        out = scratch / "out.json"
        # kept to the end of the run, as every directory below (benchproc.FS_PROBE)
        create_us = file_create_us(scratch)
        started = time.time()
        p = timed([pythons[name], "-c", SWEEP_DRIVER + PROMPT_EXIT, store, str(j), json.dumps(GRID), json.dumps(fixed_of(d)), SCENARIO],
                  stdout=out, env=envs[name])
        ended = time.time()
        r = json.loads(out.read_text())
        if r["done"] != r["n"]:
            raise SystemExit(f"sweep failed: {r}")
        timeline = {}
        if "first_ns_unix_s" in r:
            timeline = {"head": r["first_ns_unix_s"] - started, "imports": r["imported_unix_s"] - started,
                        "middle": r["last_ns_end_unix_s"] - r["first_ns_unix_s"], "tail": ended - r["last_ns_end_unix_s"],
                        "exit": ended - r["returned_unix_s"]}
        return {"wall": p.wall_s, "cpu": p.cpu_s, "file_create_us": create_us, **r, **timeline}

    def ns_only(d: str, j: int) -> dict:
        work = Path(tempfile.mkdtemp(prefix="ns-", dir=scratch))
        out = scratch / "out.json"
        p = timed([ns_py, "-c", NS_ONLY_DRIVER, work, str(j), json.dumps(GRID), json.dumps(fixed_of(d)), SCENARIO],
                  stdout=out, env=ns_env)
        return {"wall": p.wall_s, "cpu": p.cpu_s, **json.loads(out.read_text())}

    try:
        for rep in range(a.reps):
            for d in durations:
                for j in jobs:
                    raw["load"].append(os.getloadavg()[0])
                    r = ns_only(d, j)
                    raw["runs"].append({"rep": rep, "what": "ns-2 alone", "duration": d, "jobs": j, **r})
                    print(f"rep {rep + 1} duration {d} -j {j}: ns-2 alone {r['wall']:.2f} s", file=sys.stderr)
                    for name in pythons:
                        r = sweep(name, d, j)
                        raw["runs"].append({"rep": rep, "what": name, "duration": d, "jobs": j, **r})
                        print(f"rep {rep + 1} duration {d} -j {j}: {name} {r['wall']:.2f} s", file=sys.stderr)
        for d in durations:
            for name, py in pythons.items():
                w = Path(tempfile.mkdtemp(prefix="warm-", dir=scratch))
                p = timed([py, "-c", WARM_DRIVER, w, json.dumps(fixed_of(d)), str(a.warm_sims)], capture=True, env=envs[name])
                raw["warm"].append({"what": name, "duration": d, **json.loads(p.out)})
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if a.json:
        a.json.write_text(json.dumps(raw, indent=1))
    report(raw, pythons, durations, jobs, a.reps)


def report(raw: dict, pythons: dict, durations: list[str], jobs: list[int], reps: int) -> None:
    runs = raw["runs"]

    def of(what: str, d: str, j: int) -> list[dict]:
        return sorted((r for r in runs if r["what"] == what and r["duration"] == d and r["jobs"] == j), key=lambda r: r["rep"])

    load = raw["load"]
    for name in pythons:
        print(f"{name}: tracekit from {next(r['tracekit'] for r in runs if r['what'] == name)}")
    print(f"40 simulations of cbr-variants per sweep; median of {reps} interleaved repetitions; "
          f"1-min load at the starts {min(load):.1f}-{max(load):.1f}\n")
    print("| duration | what | -j | wall (s) | CPU (s) | outside ns-2, wall (paired: 1 - ns-2 alone wall / wall) | "
          "outside ns-2, CPU (1 - ns-2 alone CPU / CPU) | CPU beyond ns-2 alone per sim | that / ns-2 alone's CPU per sim | "
          "-j 2 / -j 1 runs/min (paired) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for d in durations:
        for what in ["ns-2 alone", *pythons]:
            for j in jobs:
                rs, ns = of(what, d, j), of("ns-2 alone", d, j)
                n = rs[0]["n"]
                outside = "" if what == "ns-2 alone" else \
                    f"{100 * med([1 - b['wall'] / r['wall'] for r, b in zip(rs, ns)]):.0f} %"
                beyond_s = (med([r['cpu'] for r in rs]) - med([b['cpu'] for b in ns])) / n
                beyond = "" if what == "ns-2 alone" else f"{1000 * beyond_s:.0f} ms"
                ratio = "" if what == "ns-2 alone" else f"{beyond_s / (med([b['cpu'] for b in ns]) / n):.2f}"
                outside_cpu = "" if what == "ns-2 alone" else \
                    f"{100 * (1 - med([b['cpu'] for b in ns]) / med([r['cpu'] for r in rs])):.0f} %"
                scale = ""
                if j == jobs[-1] and len(jobs) == 2:
                    r1 = of(what, d, jobs[0])
                    scale = f"{med([x['wall'] / y['wall'] for x, y in zip(r1, rs)]):.2f}"
                print(f"| {d} | {what} | {j} | {med([r['wall'] for r in rs]):.2f} | {med([r['cpu'] for r in rs]):.2f} "
                      f"| {outside} | {outside_cpu} | {beyond} | {ratio} | {scale} |")
    print("\nThe target's figure (run_benchmarks.py): the larger of 1 - (the sweep's ns-2 time) / (wall x jobs) "
          "(SimResult.ns_seconds: ns-2 as it ran beside the ingest) and 1 - (ns-2 alone's wall) / (the sweep's wall), "
          "each the median over the repetitions (paired per repetition for the second). The timeline: head = process "
          "start to the first ns-2 start (of which the imports of the driver's first line: tracekit.experiments.sweep), "
          "middle = first ns-2 start to the last ns-2 end, tail = last ns-2 end to process end (of which the interpreter's "
          "exit after run_sims returned); medians, and the share of the median wall.\n")
    print("| duration | what | -j | wall (s) | 1 - ns-2 time / (wall x jobs) | 1 - ns-2 alone wall / wall | target figure "
          "| head (s) | of which imports | middle (s) | tail (s) | of which exit | head / middle / tail (% of wall) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for d in durations:
        for what in pythons:
            for j in jobs:
                rs, ns = of(what, d, j), of("ns-2 alone", d, j)
                wall = med([r["wall"] for r in rs])
                by_ns = med([1 - r["ns_s"] / (r["wall"] * j) for r in rs])
                by_alone = med([1 - b["wall"] / r["wall"] for r, b in zip(rs, ns)])
                line = (f"| {d} | {what} | {j} | {wall:.2f} | {100 * by_ns:.1f} % | {100 * by_alone:.1f} % "
                        f"| **{100 * max(by_ns, by_alone):.1f} %** |")
                if all("head" in r for r in rs):
                    h, i, m, t, e = (med([r[k] for r in rs]) for k in ("head", "imports", "middle", "tail", "exit"))
                    line += (f" {h:.3f} | {i:.3f} | {m:.2f} | {t:.3f} | {e:.3f} "
                             f"| {100 * h / wall:.1f} / {100 * m / wall:.1f} / {100 * t / wall:.1f} |")
                else:
                    line += " | | | | | |"
                print(line)
    print("\nThe floor: ns-2 alone per simulation (CPU / 40, -j 1), and the least tracekit spends on one "
          "simulation: the ingest of its three traces in a warm process as run_sims does it (mean over the "
          "simulations; the stored facts at each ingest, or of `batch` simulations at once), of which the stored facts.\n")
    print("| duration | what | ns-2 alone CPU per sim | warm ingest of one sim: wall | CPU | of which facts (CPU) | facts batch | traces |")
    print("|---|---|---|---|---|---|---|---|")
    for w in raw["warm"]:
        ns = of("ns-2 alone", w["duration"], jobs[0])
        print(f"| {w['duration']} | {w['what']} | {1000 * med([b['cpu'] for b in ns]) / ns[0]['n']:.0f} ms | "
              f"{1000 * w['wall']:.0f} ms | {1000 * w['cpu']:.0f} ms | {1000 * w['facts_cpu']:.0f} ms | "
              f"{w.get('batch') or 1} | {w['bytes'] / 1e6:.2f} MB |")
    creates = [r["file_create_us"] for r in runs if "file_create_us" in r]
    if creates:
        print(f"\nMaking a file in the scratch directory, measured before each sweep ({len(creates)} times, "
              f"benchproc.file_create_us): {med(creates):.0f} us of CPU each (from {min(creates):.0f} to {max(creates):.0f}); "
              "a sweep makes ~26 files a simulation.")


if __name__ == "__main__":
    main()
