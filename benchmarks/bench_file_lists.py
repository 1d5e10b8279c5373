"""How DuckDB's cost of a raw_* view grows with the number of files it lists (issue 38). Not a test.

Usage: python benchmarks/bench_file_lists.py [--files 20000] [--work /tmp/tk-file-lists]

Writes N one-row-group Parquet files in hive directories (run_id=<id>/events-00000.parquet),
then times, in one process, creating a view over all of them and a query of one run (hive
pruning: one file read) with the files as one read_parquet list, as a UNION ALL of lists of
1,000 (tracekit.db.sqlfiles.LIST_CHUNK), and as a glob.
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq


def make(work: Path, n: int) -> list[str]:
    t = pa.table({"t": pa.array([0.1] * 50), "size": pa.array([1000] * 50, pa.int32())})
    files = []
    for i in range(n):
        d = work / "runs" / f"run_id=r{i:06d}"
        f = d / "events-00000.parquet"
        if not f.exists():
            d.mkdir(parents=True, exist_ok=True)
            pq.write_table(t, f)
        files.append(str(f))
    return files


def timed(con, sql: str) -> float:
    t0 = time.perf_counter()
    con.execute(sql).fetchall()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--work", type=Path, default=Path("/tmp/tk-file-lists"))
    a = ap.parse_args()
    files = make(a.work, a.files)
    hive = "hive_partitioning = true, hive_types = {'run_id': VARCHAR}"

    def lst(fs: list[str]) -> str:
        return "[" + ", ".join(f"'{f}'" for f in fs) + "]"

    forms = {"one list": f"SELECT * FROM read_parquet({lst(files)}, {hive})",
             "lists of 1,000": " UNION ALL ".join(f"SELECT * FROM read_parquet({lst(files[i:i + 1000])}, {hive})"
                                                  for i in range(0, len(files), 1000)),
             "glob": f"SELECT * FROM read_parquet('{a.work}/runs/run_id=*/events-*.parquet', {hive})"}
    print(f"| {a.files} files | create view | one run (pruned) | every run |")
    print("|---|---|---|---|")
    for name, sql in forms.items():
        con = duckdb.connect()
        create = timed(con, f"CREATE VIEW v AS {sql}")
        one = timed(con, "SELECT count(*) FROM v WHERE run_id = 'r000123'")
        every = timed(con, "SELECT count(*) FROM v")
        print(f"| {name} | {create:.2f} s | {one:.2f} s | {every:.2f} s |")
        con.close()
    print(f"\n(DuckDB {duckdb.__version__}, {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
