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
from .store import Store
from .sqlfiles import (RAW_VIEWS, _quote, _raw_view_sql, computed_view_sql, definition_hash, fact_part_name, needed_names,
                       sql_files)

# DuckDB's threads for the step: both cores of the machines tracekit is measured on, at most
THREADS = min(2, os.cpu_count() or 1)
# what DuckDB may hold in memory for it (beyond that it spills to a directory in the
# staging directory): ingest's peak memory stays that of its chunked parse (issue 16: <= 1 GB)
MEMORY_LIMIT = "500MB"


def materialise_run(store: Store, staging: Path, run_id: str, kind: str) -> list[Path]:
    """Write the fact parts of the run staged in `staging` (its `<table>-NNNNN.parquet`
    parts and run.parquet), whose id will be `run_id`; nothing for a run of a trace kind
    without packets. Returns the files written.

    When the store holds that run already (the same trace ingested again: the commit will
    find it a duplicate), nothing is computed if it has its parts; if it lacks them (ingested
    before they existed, or under another definition), they are computed here and moved
    into it, each by one rename (a reader sees a part whole or not at all)."""
    if not (FORMATS[kind].is_packet_trace and FORMATS[kind].has_facts):
        return []
    files = sql_files()
    names = {t: fact_part_name(t, definition_hash(files, t)) for t in FACT_TABLES}
    present = store.run_dir(run_id)
    if not store.has_whole_run(run_id):
        return _compute(staging, run_id, files, names)
    missing = [t for t in FACT_TABLES if not (present / names[t]).exists()]
    if not missing:
        return []
    moved = []
    for out in _compute(staging, run_id, files, names):
        table = out.name.rsplit("-", 1)[0]
        if table in missing:
            try:
                os.rename(out, present / out.name)
                moved.append(present / out.name)
            except OSError:     # the run was removed meanwhile: the commit decides what is kept
                pass
    return moved


def _compute(staging: Path, run_id: str, files, names: dict[str, str]) -> list[Path]:
    import duckdb

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
        for name, columns in RAW_VIEWS:     # raw_hier_* stay empty: a run with facts is not one
            con.execute(_raw_view_sql(name, columns, []))
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
            out = staging / names[table]
            cols = ", ".join(f'"{c}"' for c, _ in RAW_COLUMNS[table])
            con.execute(f"COPY (SELECT {cols} FROM {table}_from_events) TO {_quote(str(out))} "
                        "(FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, PARQUET_VERSION V2)")
            written.append(out)
            # what follows (the packets after the flows) reads this part, as a query would
            con.execute(_raw_view_sql(table, RAW_COLUMNS[table], [str(out)], run_id=run_id))
    finally:
        con.close()
        shutil.rmtree(spill, ignore_errors=True)
    return written
