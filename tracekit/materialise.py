"""The stored facts of one run, written at ingest: for a packet-trace run, its rows of
`flow_facts` and `packet_facts` (tracekit.columns.FACT_TABLES), computed by DuckDB from the
run's staged Parquet parts with the sql/ views that define them (`<table>_from_events`; the
views the queries read compute the same rows from the events of a run without them), and
written next to those parts as `<table>-<definition>.parquet` before the run is committed.

So the metric views read one row per flow and per data packet instead of scanning every
event, and the definitions stay in sql/: the materialisation is that SQL run once per run.
The flows first: the packets' definition reads the flows (which data events count), and
then reads the part just written.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from .columns import FACT_TABLES, RAW_COLUMNS, TABLE_NAMES
from .parsers import FORMATS
from .sqlfiles import (_quote, _raw_view_sql, computed_view_sql, definition_hash, fact_part_name, needed_names,
                       sql_files)

# DuckDB's threads for the step: both cores of the machines tracekit is measured on, at most
THREADS = min(2, os.cpu_count() or 1)
# what DuckDB may hold in memory for it (beyond that it spills to a directory in the
# staging directory): ingest's peak memory stays that of its chunked parse (issue 16: <= 1 GB)
MEMORY_LIMIT = "500MB"


def materialise_run(staging: Path, run_id: str, kind: str) -> list[Path]:
    """Write the fact parts of the run staged in `staging` (its `<table>-NNNNN.parquet`
    parts and run.parquet), whose id will be `run_id`; nothing for a run of a trace kind
    without packets. Returns the files written."""
    if not FORMATS[kind].is_packet_trace:
        return []
    import duckdb

    files = sql_files()
    need = set()
    for table in FACT_TABLES:
        need |= needed_names(files, {f"{table}_from_events"})
    # inside the staging directory, which its lock keeps from other processes' clean-up;
    # removed before the run is committed
    spill = staging / ".duckdb-spill"
    con = duckdb.connect(":memory:", config={"threads": THREADS, "memory_limit": MEMORY_LIMIT,
                                             "temp_directory": str(spill), "preserve_insertion_order": False})
    written: list[Path] = []
    try:
        # the views are created over empty raw_* views (cheap binds), then pointed at the files
        for name in ("runs", *TABLE_NAMES):
            con.execute(_raw_view_sql(name, RAW_COLUMNS[name], []))
        for table in FACT_TABLES:
            con.execute(computed_view_sql(table, []))          # nothing stored yet
        for f in files:
            if f.name in need:
                con.execute(f.text)
        for name in ("runs", *TABLE_NAMES):
            parts = [str(staging / "run.parquet")] if name == "runs" else sorted(
                str(p) for p in staging.glob(f"{name}-*.parquet"))
            if parts:
                con.execute(_raw_view_sql(name, RAW_COLUMNS[name], parts, run_id=run_id))
        for table in FACT_TABLES:
            out = staging / fact_part_name(table, definition_hash(files, table))
            cols = ", ".join(f'"{c}"' for c, _ in RAW_COLUMNS[table])
            con.execute(f"COPY (SELECT {cols} FROM {table}_from_events) TO {_quote(str(out))} "
                        "(FORMAT parquet, COMPRESSION zstd)")
            written.append(out)
            # what follows (the packets after the flows) reads this part, as a query would
            con.execute(_raw_view_sql(table, RAW_COLUMNS[table], [str(out)], run_id=run_id))
    finally:
        con.close()
        shutil.rmtree(spill, ignore_errors=True)
    return written
