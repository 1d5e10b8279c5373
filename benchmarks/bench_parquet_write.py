"""How much writing one chunk's events as Parquet costs, per writer setting: the choice behind
tracekit.ingest.pipeline._write_options (issue 16). Each chunk of the trace (8 MiB) is parsed by the
wired parser (--kind wireless: the wireless one, its wireless_events), then written by each
setting in turn; CPU ms per chunk (median over the chunks, the process's CPU: polars writes
on its own pool; the best of --reps passes), and the total size of the parts against the trace's.

Usage: .venv/bin/python benchmarks/bench_parquet_write.py TRACE [--chunks 12] [--kind wired|wireless] [--reps 3]
"""
from __future__ import annotations

import argparse
import math
import statistics
import tempfile
import time
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from tracekit.ingest.pipeline import _conform, _pl_schema, _write_options
from tracekit.formats.parsers import as_polars, get_parser
from tracekit.formats.sources import TraceSource

DATA = Path(__file__).resolve().parent / "data"      # traces and scratch files, as every benchmark's


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", type=Path)
    ap.add_argument("--chunks", type=int, default=12, help="the first N chunks (default 12, ~100 MB)")
    ap.add_argument("--kind", choices=("wired", "wireless"), default="wired")
    ap.add_argument("--reps", type=int, default=3, help="passes over the chunks per setting (the best is shown)")
    a = ap.parse_args()
    parser = get_parser(a.kind)
    table = "events" if a.kind == "wired" else "wireless_events"
    tables, n_bytes = [], 0
    for k, c in enumerate(TraceSource.open(a.trace).chunks()):
        if k == a.chunks:
            break
        tables.append(_conform(parser.parse_chunk(c.data, c.first_line_no).tables[table], table))
        n_bytes += len(c.data)
    frames = [as_polars(t).cast(_pl_schema(table)) for t in tables]  # type: ignore[arg-type]
    ours = _write_options(tables[0].schema)
    numeric = [f.name for f in tables[0].schema if pa.types.is_integer(f.type) or pa.types.is_floating(f.type)]
    int32 = [f.name for f in tables[0].schema if pa.types.is_int32(f.type)]
    cases = {
        "polars zstd-1 (before issue 16)": lambda i, p: frames[i].write_parquet(p, compression="zstd", compression_level=1),
        "polars zstd-1, no statistics": lambda i, p: frames[i].write_parquet(p, compression="zstd", compression_level=1, statistics=False),
        "polars uncompressed": lambda i, p: frames[i].write_parquet(p, compression="uncompressed"),
        "pyarrow defaults + zstd-1": lambda i, p: pq.write_table(tables[i], p, compression="zstd", compression_level=1),
        "pyarrow, ingest's settings (_write_options)": lambda i, p: pq.write_table(tables[i], p, **ours),
        "pyarrow, ingest's settings with the int32 columns dictionary-encoded (before 2026-11-29)": lambda i, p: pq.write_table(
            tables[i], p, **{**ours, "use_dictionary": ours["use_dictionary"] + int32,
                             "column_encoding": {k: v for k, v in ours["column_encoding"].items() if k not in int32}}),
        "pyarrow, ingest's settings, zstd-1": lambda i, p: pq.write_table(tables[i], p, **{**ours, "compression": "zstd", "compression_level": 1}),
        "pyarrow, ingest's settings, statistics on every number": lambda i, p: pq.write_table(tables[i], p, **{**ours, "write_statistics": numeric}),
        "pyarrow, ingest's settings, zstd-1, every number's statistics": lambda i, p: pq.write_table(
            tables[i], p, **{**ours, "compression": "zstd", "compression_level": 1, "write_statistics": numeric}),
        "pyarrow, ingest's settings, uncompressed": lambda i, p: pq.write_table(tables[i], p, **{**ours, "compression": "none", "compression_level": None}),
        "pyarrow plain, uncompressed, no statistics": lambda i, p: pq.write_table(tables[i], p, compression="none", use_dictionary=False, write_statistics=False),
    }
    print(f"{a.trace}: {len(tables)} chunks, {n_bytes / 1e6:.0f} MB, {sum(t.num_rows for t in tables):,} events")
    print(f"{'setting':<62} {'CPU ms/chunk':>12} {'parts MB':>9} {'of trace':>9}")
    # (not /tmp: on the machines here a file made there can cost ~1 ms of kernel CPU, README)
    DATA.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tk-pqw-", dir=DATA) as d:
        for name, write in cases.items():
            best = math.inf
            for rep in range(a.reps):
                ms, size = [], 0
                for i in range(len(tables)):
                    p = Path(d) / f"{name.replace(' ', '_').replace(',', '')}-{rep}-{i}.parquet"  # (a fresh name each)
                    t0 = time.process_time()
                    write(i, p)
                    ms.append((time.process_time() - t0) * 1e3)
                    size += p.stat().st_size
                best = min(best, statistics.median(ms))
            print(f"{name:<62} {best:12.2f} {size / 1e6:9.1f} {size / n_bytes:9.1%}")
    print(f"(polars thread pool: {pl.thread_pool_size()}; CPU of the whole process, user + system)")


if __name__ == "__main__":
    main()
