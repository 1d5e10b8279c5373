"""Study-scale stores: how the everyday commands grow with the number of runs (issue 38). Not a test.

Usage: python benchmarks/bench_study.py [--sizes 200,2000,20000] [--quick] [--reps 5]
           [--work DIR] [--ingest-all] [--results benchmarks/RESULTS.md]

Each store is built through the normal ingest path. First a real experiment, `tracekit
reproduce reno-vegas --quick` (6 simulations, 18 runs: what `run_metrics` for one experiment
and `reproduce --no-run` are measured on, the same runs at every size), and a short sweep,
`tracekit sweep cbr-variants --set duration=2` (20 simulations, 60 small traces). The rest of
each store is copies of the short sweep's traces, each made a distinct run (the run id is the
trace's content hash: each copy's tracekit-meta header gets its own seed, so it is also a
simulation of its own), ingested with one `tracekit ingest DIR --label study=copies` per batch.
Without --ingest-all, sizes above 2,000 are made by copying whole run directories of the
2,000-run store under new run ids (`run_id` rewritten inside every Parquet file), which the
output says. Built stores are cached under --work and reused.

Measured as whole processes (benchproc.timed: wall, CPU, peak RSS), median of --reps, the
cases of one repetition run one after the other: `sql "SELECT 1"` (the floor), `sql` count
and sum over flow_stats, `runs`, run_metrics of the experiment's runs (by a WHERE in the query,
and by `--where`), `reproduce reno-vegas --quick --no-run`, `reproduce --all --quick --no-run`,
one run's events count (both ways) and throughput_series, the dashboard's Compare page (first load,
then a control change: dash_page.py); and one `tracekit ingest`
of 300 small traces into a fresh store against one gawk pass over the same files. Each query
again after `tracekit compact` on a copy of the store when that command exists.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchproc import PY, TK, Failed, Proc, neutral_cwd, timed  # noqa: E402

HERE = Path(__file__).resolve().parent
START, END = "<!-- kept: study START -->", "<!-- kept: study END -->"
EXPERIMENT, SCENARIO = "reno-vegas", "reno-vs-vegas"
BATCH = 300
INGEST_TRACES = 300
GAWK = '$1=="r" && $5=="tcp" {b+=$6} END {print b+0}'

# (name, goal in s of wall, whether it is over per-run facts: its 20,000/200 ratio is judged)
GOALS = {"select1": (None, False), "sql_count": (1.0, True), "runs": (0.5, True),
         "run_metrics": (2.0, True), "run_metrics_where": (2.0, True), "reproduce": (5.0, True),
         "reproduce_all": (60.0, True), "events_one_run": (None, True), "events_one_run_where": (None, True),
         "throughput_one_run": (None, True),
         # the dashboard's Compare page: the first load of a store (a whole process: Streamlit's
         # AppTest, dash_page.py), then a control change (the Seeds box), timed inside it
         "dashboard_first": (None, True), "dashboard_change": (1.0, True)}
# cases measured inside another case's process (not commands of their own)
INNER = {"dashboard_change": "dashboard_first"}
RATIO_GOAL = 1.5
INGEST_GOAL_MS = 10.0


def tk(*args: str | os.PathLike) -> list:
    return [*TK, *args]


def run(cmd: list, **kw) -> str:
    return subprocess.run([str(c) for c in cmd], cwd=neutral_cwd(), check=True, capture_output=True, text=True, **kw).stdout


def n_runs(store: Path) -> int:
    d = store / "runs"
    return sum(1 for p in d.iterdir() if p.name.startswith("run_id=")) if d.exists() else 0


def base(work: Path) -> tuple[Path, list[Path]]:
    """The experiment's store and the short sweep's traces (decompressed), made once."""
    exp = work / "experiment"
    if not (exp / "reproduce").exists():
        run(["nice", "-n", "15", *tk("reproduce", EXPERIMENT, "--quick", "-j", "2", "--data", exp)])
    src = work / "sweep-traces"
    if not src.exists():
        short = work / "short-sweep"
        run(["nice", "-n", "15", *tk("sweep", "cbr-variants", "--set", "duration=2", "--grid", "variant=Tahoe,Reno,Newreno,Vegas",
                                     "--seeds", "1-5", "-j", "2", "--data", short)])
        tmp = work / "sweep-traces.tmp"
        tmp.mkdir(exist_ok=True)
        for z in sorted(short.glob("runs/run_id=*/trace.zst")):
            with open(tmp / f"{z.parent.name[7:]}.tr", "wb") as f:
                subprocess.run(["zstd", "-dc", str(z)], stdout=f, check=True)
        tmp.rename(src)
    return exp, sorted(src.glob("*.tr"))


def write_copies(traces: list[Path], out: Path, first: int, n: int) -> None:
    """n distinct copies of the traces, numbered from `first`: copy k has the seed
    1000 + 10 * (k // len(traces)) + its own (1-5) in its tracekit-meta header (the three
    traces of one simulation stay one simulation), and so its own content hash."""
    out.mkdir(parents=True, exist_ok=True)
    bodies = [t.read_bytes() for t in traces]
    for k in range(first, first + n):
        body = bodies[k % len(bodies)]
        head, rest = body.split(b"\n", 1)
        meta = json.loads(head[len(b"# tracekit-meta "):])
        meta["seed"] = 1000 + 10 * (k // len(bodies)) + int(meta["seed"])
        (out / f"copy-{k:06d}.tr").write_bytes(b"# tracekit-meta " + json.dumps(meta).encode() + b"\n" + rest)


def grow_by_ingest(store: Path, traces: list[Path], target: int, work: Path) -> None:
    """Ingest copies, one `tracekit ingest DIR` per batch of BATCH, until `target` runs."""
    have = n_runs(store)
    copies = have - n_runs(work / "experiment")
    while have < target:
        n = min(BATCH, target - have)
        d = work / "copies" / f"{copies:06d}"
        if not d.exists():
            write_copies(traces, d.with_suffix(".tmp"), copies, n)
            d.with_suffix(".tmp").rename(d)
        run(["nice", "-n", "15", *tk("ingest", d, "--label", "study=copies", "--data", store)])
        copies += n
        have = n_runs(store)
        print(f"  {store.name}: {have} runs", file=sys.stderr, flush=True)


CLONE_CODE = r"""
import sys, pathlib, pyarrow as pa, pyarrow.parquet as pq
src, dst, n = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), int(sys.argv[3])
dirs = sorted(p for p in (src / "runs").iterdir() if p.name.startswith("run_id="))
exp = set(sys.argv[4:])
dirs = [d for d in dirs if d.name[7:] not in exp]
k = 0
while k < n:
    d = dirs[k % len(dirs)]
    rid = f"c{k:07d}{d.name[7:][8:]}"[:16]
    out = dst / "runs" / f"run_id={rid}.tmp"
    out.mkdir(parents=True)
    for f in d.iterdir():
        if f.suffix == ".parquet":
            t = pq.read_table(f)
            if "run_id" in t.column_names:
                i = t.column_names.index("run_id")
                t = t.set_column(i, t.schema.field(i), pa.array([rid] * t.num_rows, t.schema.field(i).type))
            pq.write_table(t, out / f.name, compression="zstd")
        else:
            (out / f.name).write_bytes(f.read_bytes())
    out.rename(out.with_name(f"run_id={rid}"))
    k += 1
"""


def build(size: int, work: Path, ingest_all: bool) -> tuple[Path, str]:
    """The store of `size` runs (cached) and how it was made."""
    exp, traces = base(work)
    store = work / f"store-{size}"
    how = "ingested"
    smaller = sorted((int(p.name[6:]), p) for p in work.glob("store-*") if p.name[6:].isdigit() and int(p.name[6:]) < size)
    if not store.exists():
        seed_from = smaller[-1][1] if smaller else exp
        shutil.copytree(seed_from, store.with_suffix(".tmp"), symlinks=True)
        store.with_suffix(".tmp").rename(store)
    if n_runs(store) < size:
        if size > 2000 and not ingest_all and smaller:
            two = smaller[-1][1]
            exp_ids = [p.name[7:] for p in (exp / "runs").iterdir()]
            run(["nice", "-n", "15", PY, "-c", CLONE_CODE, two, store, str(size - n_runs(store)), *exp_ids])
        else:
            grow_by_ingest(store, traces, size, work)
    if (store / "CLONED").exists() or (size > 2000 and not ingest_all):
        (store / "CLONED").touch()
        how = "cloned: run directories of the 2,000-run store copied under new run ids"
    return store, how


def compact_available() -> bool:
    return subprocess.run([*TK, "compact", "--help"], cwd=neutral_cwd(), capture_output=True).returncode == 0


def cases(store: Path, one_run: str) -> dict[str, list]:
    d: list[str | os.PathLike] = ["--data", store]
    return {
        "select1": tk("sql", "SELECT 1", *d),
        "sql_count": tk("sql", "SELECT count(*), sum(rx_bytes) FROM flow_stats", *d),
        "runs": tk("runs", *d),
        "run_metrics": tk("sql", f"SELECT * FROM run_metrics WHERE scenario = '{SCENARIO}'", *d),
        # the same rows, the views defined over the chosen runs only (tracekit sql --where)
        "run_metrics_where": tk("sql", "SELECT * FROM run_metrics", "--where", f"scenario={SCENARIO}", *d),
        "reproduce": tk("reproduce", EXPERIMENT, "--quick", "--no-run", *d),
        "reproduce_all": tk("reproduce", "--all", "--quick", "--no-run", *d),
        "events_one_run": tk("sql", f"SELECT count(*) FROM events WHERE run_id = '{one_run}'", *d),
        "events_one_run_where": tk("sql", "SELECT count(*) FROM events", "--where", f"run_id={one_run}", *d),
        "throughput_one_run": tk("sql", f"SELECT count(*), sum(kbps) FROM throughput_series(0.1) WHERE run_id = '{one_run}'", *d),
        "dashboard_first": [PY, HERE / "dash_page.py", store],
    }


def measure(stores: dict[str, Path], one_run: str, reps: int) -> dict[str, dict[str, dict]]:
    """{store key: {case: {wall, cpu, rss_mb, reps}}}, every case of every store once per
    repetition; a case that fails (the 60 s --timeout of tracekit sql) is not repeated and
    has wall None and its error."""
    plan = {k: cases(s, one_run) for k, s in stores.items()}
    raw: dict[str, dict[str, list]] = {k: {c: [] for c in [*v, *INNER]} for k, v in plan.items()}
    failed: dict[tuple[str, str], str] = {}
    for r in range(reps):
        for k, cs in plan.items():
            for c, cmd in cs.items():
                if (k, c) in failed:
                    continue
                try:
                    p = timed(cmd, capture=c in INNER.values())
                    raw[k][c].append(p)
                    for inner, outer in INNER.items():
                        if outer == c:
                            raw[k][inner].append(Proc(json.loads(p.out.decode().strip().splitlines()[-1])[f"{inner.split('_', 1)[1]}_s"], 0.0, 0, b""))
                except Failed as e:
                    failed[(k, c)] = str(e).strip().splitlines()[-1][:160] if str(e).strip() else "failed"
                    failed.update({(k, inner): failed[(k, c)] for inner, outer in INNER.items() if outer == c})
        print(f"  repetition {r + 1}/{reps}", file=sys.stderr, flush=True)
    out: dict[str, dict[str, dict]] = {}
    for k, v in raw.items():
        out[k] = {}
        for c, ps in v.items():
            if (k, c) in failed:
                out[k][c] = {"wall": None, "cpu": None, "rss_mb": None, "error": failed[(k, c)]}
                continue
            out[k][c] = {"wall": statistics.median(p.wall_s for p in ps), "cpu": statistics.median(p.cpu_s for p in ps),
                         "rss_mb": max(p.rss_mb for p in ps), "reps": [round(p.wall_s, 3) for p in ps]}
    return out


def measure_ingest(work: Path, traces: list[Path], reps: int) -> dict:
    """One `tracekit ingest DIR` of INGEST_TRACES small traces into a fresh store, against
    one gawk pass over the same files, interleaved. Fresh stores are left in place."""
    d = work / "ingest-300"
    if not d.exists():
        write_copies(traces, d.with_suffix(".tmp"), 900000, INGEST_TRACES)
        d.with_suffix(".tmp").rename(d)
    files = sorted(d.glob("*.tr"))
    ing, awk = [], []
    for _ in range(reps):
        fresh = work / "ingest-stores" / f"{time.time_ns()}"
        ing.append(timed(tk("ingest", d, "--data", fresh)))
        awk.append(timed(["gawk", GAWK, *files]))
    mi = statistics.median(p.cpu_s for p in ing)
    return {"traces": len(files), "mb": sum(f.stat().st_size for f in files) / 1e6,
            "ingest_wall": statistics.median(p.wall_s for p in ing), "ingest_cpu": mi,
            "ingest_cpu_ms_per_trace": mi / len(files) * 1e3, "ingest_rss_mb": max(p.rss_mb for p in ing),
            "gawk_wall": statistics.median(p.wall_s for p in awk), "gawk_cpu": statistics.median(p.cpu_s for p in awk),
            "ingest_reps": [round(p.wall_s, 3) for p in ing], "gawk_reps": [round(p.wall_s, 3) for p in awk]}


def _cell(m: dict, goal: float | None) -> str:
    if m["wall"] is None:
        return f"stopped ({m['error']})"
    met = "" if goal is None else (" met" if m["wall"] <= goal else " **not met**")
    if not m["rss_mb"]:     # timed inside another case's process: its wall time only
        return f"{m['wall']:.2f} s{met}"
    return f"{m['wall']:.2f} s ({m['cpu']:.2f} CPU, {m['rss_mb']:.0f} MB){met}"


def _table(measured: dict, sizes: list[int]) -> list[str]:
    L = ["| command | goal | " + " | ".join(f"{s} runs" for s in sizes) + " | largest / smallest | ratio goal |",
         "|---|---|" + "---|" * len(sizes) + "---|---|"]
    big, small = sizes[-1], sizes[0]
    for c, (goal, judged) in GOALS.items():
        cells = [_cell(measured[str(s)][c], goal) for s in sizes]
        hi, lo = measured[str(big)][c]["wall"], measured[str(small)][c]["wall"]
        if hi is None or lo is None:
            ratio_s, rg = "-", "-"
        else:
            ratio_s = f"{hi / lo:.1f} x"
            rg = f"<= {RATIO_GOAL}: " + ("met" if hi / lo <= RATIO_GOAL else "**not met**") if judged else "-"
        L.append(f"| `{c}` | {'-' if goal is None else f'<= {goal} s'} | " + " | ".join(cells) + f" | {ratio_s} | {rg} |")
    return L


def section(res: dict) -> str:
    L = [START, "", "## Study-scale stores (issue 38)", "",
         f"`benchmarks/bench_study.py` ({res['when']}, code {res['code']}, {res['reps']} repetitions, medians, "
         f"load average before {res['load']}). Stores: the `{EXPERIMENT} --quick` experiment (18 runs) plus distinct "
         "copies of a short `cbr-variants` sweep's traces (`--set duration=2`), ingested in batches of "
         f"{BATCH} with `tracekit ingest DIR`. `tracekit compact`: {res['compact']}.", ""]
    for s, how in res["how"].items():
        L.append(f"- {s} runs: {how} ({res['files'][s]} files)")
    if res.get("compacted"):
        L += ["", "After `tracekit compact` (what a sweep, or an ingest of 1,000 traces or more, now ends with; the "
              "compacted copies share the run files through hard links). The goals are judged here:", ""]
        L += _table(res["compacted"], res["sizes"])
    L += ["", "The same stores never compacted (each run's own files, as before issue 38):", ""]
    L += _table(res["measured"], res["plain_sizes"])
    ig = res["ingest"]
    L += ["", f"Small-trace ingest: one `tracekit ingest DIR` of {ig['traces']} traces ({ig['mb']:.1f} MB) into a fresh "
          f"store: {ig['ingest_wall']:.2f} s wall, {ig['ingest_cpu']:.2f} s CPU, **{ig['ingest_cpu_ms_per_trace']:.0f} ms CPU a "
          f"trace** (goal <= {INGEST_GOAL_MS:.0f} ms: {'met' if ig['ingest_cpu_ms_per_trace'] <= INGEST_GOAL_MS else 'not met'}), "
          f"peak {ig['ingest_rss_mb']:.0f} MB; one gawk pass over the same files {ig['gawk_wall']:.2f} s wall "
          f"({ig['gawk_cpu']:.2f} s CPU): {ig['ingest_wall'] / ig['gawk_wall']:.0f} x.", "",
          "Each repetition's wall times are in the JSON beside the stores (`--work`/results.json).", "", END]
    return "\n".join(L)


def write_kept(results: Path, text: str, start: str = START, end: str = END) -> None:
    """Put `text` (which begins with `start` and ends with `end`) in place of the section
    between those markers in `results`, or at its end when it has none."""
    old = results.read_text() if results.exists() else ""
    if start in old and end in old:
        old = old[:old.index(start)] + text + old[old.index(end) + len(end):]
    else:
        old = old.rstrip("\n") + "\n\n" + text + "\n"
    results.write_text(old)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="200,2000,20000", help="store sizes in runs, comma-separated")
    ap.add_argument("--quick", action="store_true", help="only 200 and 2,000 runs")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--work", type=Path, default=Path("/tmp/tk-study-bench"), help="where the built stores are cached")
    ap.add_argument("--plain-sizes", help="the sizes also measured never compacted (default: every size)")
    ap.add_argument("--ingest-all", action="store_true", help="ingest every run of every size (no cloned run directories)")
    ap.add_argument("--results", type=Path, help="write the section into this RESULTS.md")
    a = ap.parse_args()
    sizes = [200, 2000] if a.quick else sorted(int(s) for s in a.sizes.split(","))
    a.work.mkdir(parents=True, exist_ok=True)
    stores, how = {}, {}
    for s in sizes:
        print(f"building the {s}-run store", file=sys.stderr, flush=True)
        stores[str(s)], how[s] = build(s, a.work, a.ingest_all)
    exp, traces = base(a.work)
    one_run = json.loads(run(tk("sql", f"SELECT run_id FROM runs WHERE trace_kind = 'wired' AND scenario = '{SCENARIO}' ORDER BY run_id LIMIT 1",
                               "--format", "json", "--data", exp)))[0]["run_id"]
    res: dict = {"sizes": sizes, "reps": a.reps, "how": how, "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                 "code": subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip(),
                 "load": " ".join(f"{x:.1f}" for x in os.getloadavg()),
                 "files": {s: sum(len(f) for _, _, f in os.walk(stores[str(s)])) for s in sizes}}
    has_compact = compact_available()
    plain = [int(x) for x in a.plain_sizes.split(",")] if a.plain_sizes else sizes
    res["plain_sizes"] = plain
    res["measured"] = measure({str(s): stores[str(s)] for s in plain}, one_run, a.reps)
    if has_compact:
        comp = {}
        for s in sizes:
            c = a.work / f"compacted-{s}"
            if not c.exists():
                # hard links: the run files are never written again, compaction writes beside them
                shutil.rmtree(c.with_suffix(".tmp"), ignore_errors=True)
                run(["cp", "-al", stores[str(s)], c.with_suffix(".tmp")])
                run(["nice", "-n", "15", *tk("compact", "--data", c.with_suffix(".tmp"))])
                c.with_suffix(".tmp").rename(c)
            comp[str(s)] = c
        res["compact"] = "measured (below)"
        res["compacted"] = measure(comp, one_run, a.reps)
    else:
        res["compact"] = "not available (`tracekit compact --help` fails: the command is not in this code)"
    res["ingest"] = measure_ingest(a.work, traces, a.reps)
    (a.work / "results.json").write_text(json.dumps(res, indent=1, default=str))
    text = section(res)
    print(text)
    if a.results is not None:
        write_kept(a.results, text, START, END)


if __name__ == "__main__":
    main()
