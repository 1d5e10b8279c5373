"""The stored-facts step of ingest alone (tracekit.ingest.facts: DuckDB runs the sql/ views
flow_facts_from_events and packet_facts_from_events over a run's staged Parquet and writes
the parts), beside its read floor.

Usage: .venv/bin/python benchmarks/bench_facts.py RUN_DIR [--reps 3]
RUN_DIR: a wired or wireless run of a store (runs/run_id=<id>), whose events parts and run.parquet are
copied to a scratch staging directory. Per repetition (the trace's parts in the page cache):
  facts step   materialise's computation and writing of both parts (what ingest runs)
  read floor   one DuckDB scan of the events columns the facts read (every value decoded,
               nothing grouped or written): what any SQL over the stored events costs at least
  <table>      within the facts step, the statement that writes that table's part
Prints wall and CPU seconds (this process's, both DuckDB threads), best and median, then the
most the step spilled to disk (its DuckDB temp directory, sampled every 50 ms) and this
process's peak RSS. --memory-limit replaces the step's DuckDB memory limit
(tracekit.ingest.facts.MEMORY_LIMIT) to see what spilling costs. Uses the tracekit the running
Python imports, so two checkouts' .venv/bin/python compare two versions (run them in turns).
"""
from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

import duckdb

from tracekit.ingest import facts as materialise
from tracekit.store.columns import FACT_TABLES
from tracekit.db.sqlfiles import definition_hash, fact_part_name, sql_files

# the events' columns the facts read: wired, and (WL_READ) wireless
WL_READ = ("line_no", "layer", "event", "time", "node", "ptype", "size", "fid", "src_node", "src_port",
           "dst_node", "dst_port", "seq", "pkt_id")
READ = ("line_no", "event", "time", "from_node", "to_node", "ptype", "size", "fid", "src_node", "src_port",
        "dst_node", "dst_port", "seq", "pkt_id", "tcp_hlen")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--memory-limit", help="e.g. 800MB (default: materialise.MEMORY_LIMIT)")
    a = ap.parse_args()
    if a.memory_limit:
        materialise._CONFIG["memory_limit"] = a.memory_limit
    run_id = a.run_dir.name.split("=", 1)[1]
    files = sql_files()
    names = {t: fact_part_name(t, definition_hash(files, t)) for t in FACT_TABLES}
    with tempfile.TemporaryDirectory(prefix="tk-bench-facts-") as tmp:
        stage = Path(tmp)
        wireless = any(a.run_dir.glob("wireless_events-*.parquet"))
        pattern = "wireless_events-*.parquet" if wireless else "events-*.parquet"
        for p in [*a.run_dir.glob(pattern), a.run_dir / "run.parquet"]:
            shutil.copy(p, stage / p.name)
        listed = "[" + ", ".join(f"'{p}'" for p in sorted(stage.glob(pattern))) + "]"
        res: dict[str, list[tuple[float, float]]] = {"facts step": [], "read floor": []}
        res.update({t: [] for t in FACT_TABLES})
        spilled = [0]
        for _ in range(a.reps):
            for t in FACT_TABLES:
                (stage / names[t]).unlink(missing_ok=True)
            with _Statements(res), _Spill(stage / ".duckdb-spill", spilled):
                t0, c0 = time.perf_counter(), time.process_time()
                materialise._compute(stage, run_id, files, names)
                res["facts step"].append((time.perf_counter() - t0, time.process_time() - c0))
            con = duckdb.connect(config={"threads": materialise.THREADS})
            t0, c0 = time.perf_counter(), time.process_time()
            con.execute("SELECT " + ", ".join(f"max({c})" for c in (WL_READ if wireless else READ)) + f" FROM read_parquet({listed})").fetchall()
            res["read floor"].append((time.perf_counter() - t0, time.process_time() - c0))
            con.close()
    print(f"{a.reps} repetitions; DuckDB threads {materialise.THREADS}, memory limit "
          f"{materialise._CONFIG['memory_limit']}; parts {names}")
    print(f"{'case':12s} {'wall best':>9s} {'wall med':>9s} {'cpu best':>9s} {'cpu med':>9s}")
    for k, v in res.items():
        w, c = [x[0] for x in v], [x[1] for x in v]
        print(f"{k:12s} {min(w):9.3f} {statistics.median(w):9.3f} {min(c):9.3f} {statistics.median(c):9.3f}")
    print(f"spilled at most {spilled[0] / 1e6:.0f} MB; peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


class _Statements:
    """Times each COPY that writes a fact part (by wrapping the step's connections)."""

    def __init__(self, res):
        self.res = res

    def __enter__(self):
        self.orig = orig = materialise._Connection.__init__
        res = self.res

        class Timed:
            def __init__(self, con):
                self.con = con

            def execute(self, sql, *args):
                t0, c0 = time.perf_counter(), time.process_time()
                out = self.con.execute(sql, *args)
                for t in FACT_TABLES:
                    if sql.startswith("COPY") and f"FROM {t}_from_events" in sql:
                        res[t].append((time.perf_counter() - t0, time.process_time() - c0))
                return out

            def close(self):
                self.con.close()

        def init(c, con, files):
            orig(c, Timed(con), files)

        materialise._Connection.__init__ = init     # type: ignore[method-assign]

    def __exit__(self, *exc):
        materialise._Connection.__init__ = self.orig     # type: ignore[method-assign]


class _Spill:
    """The most bytes in the step's spill directory, sampled on a thread."""

    def __init__(self, directory: Path, most: list[int]):
        self.directory, self.most, self.done = directory, most, threading.Event()

    def _watch(self):
        while not self.done.wait(0.05):
            try:
                self.most[0] = max(self.most[0], sum(f.stat().st_size for f in self.directory.iterdir()))
            except OSError:
                pass

    def __enter__(self):
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()


if __name__ == "__main__":
    main()
