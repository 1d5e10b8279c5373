"""How much writing one chunk's events as Parquet costs, per writer setting: the choice behind
tracekit.ingest._write_options (issue 16). Each chunk of the trace (8 MiB) is parsed by the
wired parser, then written by each setting in turn; CPU ms per chunk (median over the
chunks, the process's CPU: polars writes on its own pool), and the total size of the parts against the trace's.

Usage: .venv/bin/python benchmarks/bench_parquet_write.py TRACE [--chunks 12]
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from tracekit.ingest import _conform, _pl_schema, _write_options
from tracekit.parsers import as_polars, get_parser
from tracekit.sources import TraceSource


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", type=Path)
    ap.add_argument("--chunks", type=int, default=12, help="the first N chunks (default 12, ~100 MB)")
    a = ap.parse_args()
    parser = get_parser("wired")
    tables, n_bytes = [], 0
    for k, c in enumerate(TraceSource.open(a.trace).chunks()):
        if k == a.chunks:
            break
        tables.append(_conform(parser.parse_chunk(c.data, c.first_line_no).tables["events"], "events"))
        n_bytes += len(c.data)
    frames = [as_polars(t).cast(_pl_schema("events")) for t in tables]  # type: ignore[arg-type]
    ours = _write_options(tables[0].schema)
    cases = {
        "polars zstd-1 (before issue 16)": lambda i, p: frames[i].write_parquet(p, compression="zstd", compression_level=1),
        "polars zstd-1, no statistics": lambda i, p: frames[i].write_parquet(p, compression="zstd", compression_level=1, statistics=False),
        "polars uncompressed": lambda i, p: frames[i].write_parquet(p, compression="uncompressed"),
        "pyarrow defaults + zstd-1": lambda i, p: pq.write_table(tables[i], p, compression="zstd", compression_level=1),
        "pyarrow, ingest's settings (_write_options)": lambda i, p: pq.write_table(tables[i], p, **ours),
        "pyarrow, ingest's settings, lz4": lambda i, p: pq.write_table(tables[i], p, **{**ours, "compression": "lz4", "compression_level": None}),
        "pyarrow, ingest's settings, uncompressed": lambda i, p: pq.write_table(tables[i], p, **{**ours, "compression": "none", "compression_level": None}),
        "pyarrow plain, uncompressed, no statistics": lambda i, p: pq.write_table(tables[i], p, compression="none", use_dictionary=False, write_statistics=False),
    }
    print(f"{a.trace}: {len(tables)} chunks, {n_bytes / 1e6:.0f} MB, {sum(t.num_rows for t in tables):,} events")
    print(f"{'setting':<46} {'CPU ms/chunk':>12} {'parts MB':>9} {'of trace':>9}")
    with tempfile.TemporaryDirectory(prefix="tk-pqw-") as d:
        for name, write in cases.items():
            ms, size = [], 0
            for i in range(len(tables)):
                p = Path(d) / f"{i}.parquet"
                t0 = time.process_time()
                write(i, p)
                ms.append((time.process_time() - t0) * 1e3)
                size += p.stat().st_size
            print(f"{name:<46} {statistics.median(ms):12.1f} {size / 1e6:9.1f} {size / n_bytes:9.1%}")
    print(f"(polars thread pool: {pl.thread_pool_size()}; CPU of the whole process, user + system)")


if __name__ == "__main__":
    main()
