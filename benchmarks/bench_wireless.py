"""Wireless ingest speed and memory against one gawk pass over the same trace, side by side.

Usage: .venv/bin/python benchmarks/bench_wireless.py [--size-mb 400] [--reps 3] [--formats old,new]
                                                     [--trace FILE ...] [--json OUT]
Generates, per format, a wireless trace of about --size-mb with real ns-2
(benchmarks/wireless_bigtrace.tcl: a 50-node random-waypoint MANET, AODV, 12 CBR flows; the
old CMU format and the new -t format) into benchmarks/data/ (reused if there) unless --trace
is given, then measures, median of --reps, each case a whole process, the cases of one
repetition run one after the other (interleaved):
  - a gawk pass computing per-flow AGT sent/received packet counts, reading either format
    (old: fields by position; new: the -Nl/-Is/-Id/-If values at their fixed positions);
  - `tracekit ingest` into a fresh store (wall, CPU, peak RSS);
  - `tracekit sql "SELECT * FROM wireless_flow_stats"` on a store holding that trace, and
    `tracekit sql "SELECT 1"` (start-up alone) for scale.
It checks that gawk's per-flow counts equal wireless_flow_stats' sent_pkts / recv_pkts (both
sides compute the same thing) and prints the figures; --json writes them.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from benchproc import TK, compile_installation, timed  # noqa: E402
# MB of trace per simulated second written by wireless_bigtrace.tcl with its defaults
MB_PER_SIM_S = {"old": 0.707, "new": 1.5625}

# per-flow AGT sent/received packet counts, one pass, both formats. Old format: `$4` layer,
# `$14`/`$15` `[src:port` / `dst:port` (no fid in that format). New format (use-newtrace):
# `$19` the -Nl value, `$31` -Is, `$33` -Id, `$39` -If (fixed positions on AGT lines).
GAWK_FLOWS = r'''
$2 == "-t" { if ($19 != "AGT" || $35 == "ack") next; k = $31 " " $33 " " $39 }
$2 != "-t" { if ($4 != "AGT" || $7 == "ack") next; s = substr($14, 2); sub(/:/, ".", s); d = $15; sub(/:/, ".", d); k = s " " d " -" }
$1 == "s" { sent[k]++ }
$1 == "r" { recv[k]++ }
END { for (k in sent) print k, sent[k], recv[k] + 0 }
'''


def make_trace(fmt: str, size_mb: float, data_dir: Path = HERE / "data") -> Path:
    dur = max(10, round(size_mb / MB_PER_SIM_S[fmt]))
    trace = data_dir / f"wireless-{fmt}-{dur}s.tr"
    if not trace.exists():
        trace.parent.mkdir(parents=True, exist_ok=True)
        tmp = trace.with_suffix(".tmp")
        print(f"generating {trace} with ns-2 ({dur} simulated seconds)...", file=sys.stderr)
        t0 = time.perf_counter()
        subprocess.run(["ns", str(HERE / "wireless_bigtrace.tcl"), str(dur), fmt, str(tmp)], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        tmp.rename(trace)
        print(f"  ns-2 took {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return trace


def med(xs: list, key: str) -> float:
    return statistics.median(getattr(x, key) for x in xs)


def bench(trace: Path, reps: int) -> dict:
    size_mb = trace.stat().st_size / 1e6
    with open(trace, "rb") as f:                       # warm the page cache for both
        n_lines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 24), b""))
    gawk = ["gawk", GAWK_FLOWS, str(trace)]
    awk, ingest, sql, sql1 = [], [], [], []
    keep = Path(tempfile.mkdtemp(prefix="tk-wl-bench-"))
    try:
        for rep in range(reps):
            awk.append(timed(gawk, capture=True))
            store = keep / f"store{rep}"
            ingest.append(timed([*TK, "ingest", str(trace), "--data", str(store)]))
            if rep:
                shutil.rmtree(store)            # keep the first store for the queries
            sql.append(timed([*TK, "sql", "SELECT * FROM wireless_flow_stats", "--format", "csv",
                              "--data", str(keep / "store0")]))
            sql1.append(timed([*TK, "sql", "SELECT 1", "--data", str(keep / "store0")]))
        # both sides compute the same thing: gawk's counts against wireless_flow_stats
        got = {}
        for line in awk[0].out.decode().splitlines():
            src, dst, fid, s, r = line.split()
            got[(src, dst, None if fid == "-" else int(fid))] = (int(s), int(r))
        from tracekit.db.query import connect      # the installed tracekit (benchmarks/ is sys.path[0])

        con = connect(keep / "store0")
        rows = con.execute("SELECT src_node, src_port, dst_node, dst_port, fid, sent_pkts, recv_pkts "
                           "FROM wireless_flow_stats").fetchall()
        n_events = con.execute("SELECT n_events FROM runs").fetchall()[0][0]
        t0 = time.perf_counter()
        con.sql("SELECT * FROM wireless_flow_stats").to_arrow_table()
        inproc = time.perf_counter() - t0
        con.close()
        tk = {(f"{a}.{b}", f"{c}.{d}", fid): (s, r) for a, b, c, d, fid, s, r in rows}
        agree = tk == got
    finally:
        shutil.rmtree(keep, ignore_errors=True)
    ti, ta = med(ingest, "wall_s"), med(awk, "wall_s")
    return {
        "trace": str(trace), "size_mb": size_mb, "lines": n_lines, "n_events": n_events, "flows": len(rows),
        "gawk_s": ta, "gawk_cpu_s": med(awk, "cpu_s"), "gawk_reps": [x.wall_s for x in awk],
        "ingest_s": ti, "ingest_cpu_s": med(ingest, "cpu_s"), "ingest_reps": [x.wall_s for x in ingest],
        "ingest_rss_mb": max(x.rss_mb for x in ingest),
        "ratio": ti / ta, "ratio_paired": statistics.median(i.wall_s / a.wall_s for i, a in zip(ingest, awk)),
        "sql_flow_stats_s": med(sql, "wall_s"), "sql_flow_stats_reps": [x.wall_s for x in sql],
        "sql_flow_stats_rss_mb": max(x.rss_mb for x in sql),
        "sql_select1_s": med(sql1, "wall_s"), "flow_stats_inproc_s": inproc,
        "gawk_equals_flow_stats": agree,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=float, default=400)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--formats", default="old,new")
    ap.add_argument("--trace", type=Path, action="append", help="use this trace (repeatable) instead of generating")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    compile_installation()       # (benchproc: else an edited module is compiled at every start)
    traces = a.trace or [make_trace(f, a.size_mb) for f in a.formats.split(",")]
    load = os.getloadavg()
    print(f"{os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; median of {a.reps}")
    results = []
    for trace in traces:
        r = bench(trace, a.reps)
        results.append(r)
        def reps(k, r=r): return " / ".join(f"{x:.2f}" for x in r[k])  # noqa: E704
        print(f"\n{trace.name}: {r['size_mb']:.0f} MB, {r['lines']:,} lines, {r['n_events']:,} events, {r['flows']} flows")
        print(f"  gawk per-flow AGT counts:  {r['gawk_s']:.2f} s ({r['size_mb'] / r['gawk_s']:.0f} MB/s, CPU {r['gawk_cpu_s']:.2f} s) [{reps('gawk_reps')}]")
        print(f"  tracekit ingest:           {r['ingest_s']:.2f} s ({r['size_mb'] / r['ingest_s']:.0f} MB/s, CPU {r['ingest_cpu_s']:.2f} s), "
              f"peak RSS {r['ingest_rss_mb']:.0f} MB [{reps('ingest_reps')}]")
        print(f"  ratio ingest / gawk:       {r['ratio']:.2f} (paired per rep {r['ratio_paired']:.2f})")
        print(f"  tracekit sql wireless_flow_stats: {r['sql_flow_stats_s']:.2f} s whole process [{reps('sql_flow_stats_reps')}], "
              f"peak RSS {r['sql_flow_stats_rss_mb']:.0f} MB; in process {r['flow_stats_inproc_s']:.2f} s; "
              f"`SELECT 1` {r['sql_select1_s']:.2f} s")
        print(f"  gawk counts == wireless_flow_stats sent/recv: {r['gawk_equals_flow_stats']}")
    if a.json:
        a.json.write_text(json.dumps({"load_avg": load, "reps": a.reps, "results": results}, indent=1))


if __name__ == "__main__":
    main()
