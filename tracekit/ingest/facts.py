"""The stored facts of one run, written at ingest: for a packet-trace run, its rows of
`flow_facts` and `packet_facts` (tracekit.store.columns.FACT_TABLES), computed by DuckDB from the
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
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from tracekit.store.columns import FACT_TABLES, RAW_COLUMNS, TABLE_NAMES
from tracekit.formats.parsers import FORMATS
from tracekit.store.store import Store
from tracekit.db.sqlfiles import RAW_VIEWS, _quote, _raw_view_sql, computed_view_sql, definition_hash, fact_part_name, needed_names, sql_files
from typing import TYPE_CHECKING

if TYPE_CHECKING:     # for annotations: DuckDB is imported where it is used, not when this module is
    import duckdb

# DuckDB's threads for the step: both cores of the machines tracekit is measured on, at most
THREADS = min(2, os.cpu_count() or 1)
# what DuckDB may hold in memory for it (beyond that it spills to a directory in the
# staging directory): ingest's peak memory stays that of its chunked parse (issue 16: <= 1 GB)
MEMORY_LIMIT = "500MB"
# a run whose staged parts are at most this big (a sweep's short runs) is computed on a
# connection kept from an earlier run, its views defined already (defining them costs more
# than computing such a run), that does not spill: at this size it never needs to; if it
# did, the run is computed again on a connection of its own that spills, as a big run is
SMALL_RUN_BYTES = 16 << 20


def materialise_run(store: Store, staging: Path, run_id: str, kind: str) -> list[Path]:
    """Write the fact parts of the run staged in `staging` (its `<table>-NNNNN.parquet`
    parts and run.parquet), whose id will be `run_id`; nothing for a run of a trace kind
    without packets. Returns the files written.

    When the store holds that run already (the same trace ingested again: the commit will
    find it a duplicate), nothing is computed if it has its parts; if it lacks them (ingested
    before they existed, or under another definition), they are computed here and moved
    into it, each by one rename (a reader sees a part whole or not at all)."""
    if not has_facts(kind):
        return []
    files = sql_files()
    names = {t: fact_part_name(t, definition_hash(files, t)) for t in FACT_TABLES}
    present = store.run_dir(run_id)
    if not store.has_whole_run(run_id):
        return _compute(staging, run_id, files, names)
    missing = [t for t in FACT_TABLES if not (present / names[t]).exists()]
    if not missing:
        return []
    computed = _compute(staging, run_id, files, names)
    moved = []
    for out in computed:
        table = out.name.rsplit("-", 1)[0]
        if table in missing:
            try:
                os.rename(out, present / out.name)
                moved.append(present / out.name)
            except OSError:     # the run was removed meanwhile: the commit decides what is kept
                pass
    return moved


def staged_bytes(staging: Path) -> int:
    """The size of the Parquet files staged in `staging` (SMALL_RUN_BYTES is against it)."""
    return sum(p.stat().st_size for p in staging.glob("*.parquet"))


def has_facts(kind: str) -> bool:
    """Whether runs of trace kind `kind` get stored facts."""
    return FORMATS[kind].is_packet_trace and FORMATS[kind].has_facts


def _compute(staging: Path, run_id: str, files, names: dict[str, str]) -> list[Path]:
    import duckdb

    if staged_bytes(staging) <= SMALL_RUN_BYTES:
        key = tuple(names[t] for t in FACT_TABLES)
        kept = _KEPT.take(key, files)
        try:
            written = _compute_on(kept, staging, run_id, names)
        except duckdb.OutOfMemoryException:     # the usual way, below
            _KEPT.drop(kept)
            for t in FACT_TABLES:
                (staging / names[t]).unlink(missing_ok=True)
        except BaseException:
            _KEPT.drop(kept)
            raise
        else:
            _KEPT.give_back(kept)
            return written
    # spilling inside the staging directory, removed before the run is committed
    with _spilling(staging, files) as con:
        return _compute_on(con, staging, run_id, names)


@contextmanager
def _spilling(work: Path, files) -> Iterator[_Connection]:
    """A connection of its own with the views defined, that spills beyond MEMORY_LIMIT to a
    directory inside `work` (a staging directory, which its lock keeps from other processes'
    clean-up), closed and its spill removed at the end."""
    import duckdb

    spill = work / ".duckdb-spill"
    con = _Connection(duckdb.connect(":memory:", config={**_CONFIG, "temp_directory": str(spill)}), files)
    try:
        yield con
    finally:
        con.close()
        shutil.rmtree(spill, ignore_errors=True)


def _compute_on(con: _Connection, staging: Path, run_id: str, names: dict[str, str]) -> list[Path]:
    """The fact parts of the run staged in `staging`, on a connection with the views defined."""
    for name, columns in RAW_VIEWS:     # raw_hier_* stay empty: a run with facts is not one
        parts: list[str] = []
        if name == "runs":
            parts = [str(staging / "run.parquet")]
        elif name in TABLE_NAMES:
            parts = sorted(str(p) for p in staging.glob(f"{name}-*.parquet"))
        con.point(name, _raw_view_sql(name, columns, parts, run_id=run_id) if parts else _raw_view_sql(name, columns, []))
    written: list[Path] = []
    for table in FACT_TABLES:
        out = staging / names[table]
        cols = ", ".join(f'"{c}"' for c, _ in RAW_COLUMNS[table])
        con.con.execute(f"COPY (SELECT {cols} FROM {table}_from_events) TO {_quote(str(out))} ({_COPY_OPTIONS})")
        written.append(out)
        # what follows (the packets after the flows) reads this part, as a query would
        con.point(table, _raw_view_sql(table, RAW_COLUMNS[table], [str(out)], run_id=run_id))
    return written


def materialise_committed(store: Store, runs: list[tuple[str, str]], staging_within: Path | None = None,
                          threads: int | None = None) -> int:
    """The fact parts of committed runs (run_id, trace kind) that lack them: a sweep's runs,
    ingested without them (`ingest_file(facts=False)`) and committed, so that the facts of
    several simulations are computed by one query per fact table (the planning of a query is
    most of its cost on a short simulation's run). Each part is moved into its run's
    directory by one rename, as when a run is ingested again (materialise_run): until then,
    and for good if this never runs (a sweep killed meanwhile), the views compute the run's
    facts from its events, the same rows. Returns the number of runs given parts.
    `staging_within`: a staging directory the caller holds, to compute them in (Store.new_staging).
    `threads`: DuckDB's threads for the queries, if not THREADS (a sweep whose ns-2 processes
    leave fewer cores free: more threads than that would take the cores from ns-2)."""
    import duckdb

    files = sql_files()
    names = {t: fact_part_name(t, definition_hash(files, t)) for t in FACT_TABLES}
    todo = [r for r, kind in runs if has_facts(kind)
            and store.has_whole_run(r) and any(not (store.run_dir(r) / names[t]).exists() for t in FACT_TABLES)]
    if not todo:
        return 0
    work = store.new_staging(tag="facts", within=staging_within)
    try:
        kept = _KEPT.take(tuple(names[t] for t in FACT_TABLES), files)
        try:
            if threads is not None and threads != THREADS:
                kept.con.execute(f"SET threads = {max(1, int(threads))}")
                try:
                    parts = _compute_runs(kept, store, work, todo, names)
                finally:
                    kept.con.execute(f"SET threads = {THREADS}")      # as a kept connection is
            else:
                parts = _compute_runs(kept, store, work, todo, names)
        except duckdb.OutOfMemoryException:        # one run at a time, on a connection that spills
            _KEPT.drop(kept)
            parts = {}
            for r in todo:
                with _spilling(work, files) as con:
                    parts.update(_compute_runs(con, store, work / f"one-{r}", [r], names))
        except BaseException:
            _KEPT.drop(kept)
            raise
        else:
            _KEPT.give_back(kept)
        done = 0
        for r, made in parts.items():
            present = store.run_dir(r)
            for table, part in made.items():
                if not (present / names[table]).exists():
                    try:
                        os.rename(part, present / names[table])
                    except OSError:     # the run was removed meanwhile
                        pass
            done += 1
        return done
    finally:
        store.discard(work)


def _compute_runs(con: _Connection, store: Store, work: Path, run_ids: list[str],
                  names: dict[str, str]) -> dict[str, dict[str, Path]]:
    """The fact parts of the committed runs `run_ids` (one query per fact table, written
    partitioned by run under `work`, every table's parts of a run in one directory: each
    directory made and removed costs CPU on ext4):
    run_id -> table -> its part."""
    for name, columns in RAW_VIEWS:     # the facts first empty, as for a run in staging
        parts: list[str] = []
        if name == "runs":
            parts = [str(store.run_dir(r) / "run.parquet") for r in run_ids]
        elif name in TABLE_NAMES and name not in FACT_TABLES:
            parts = [str(p) for r in run_ids for p in sorted(store.run_dir(r).glob(f"{name}-*.parquet"))]
        con.point(name, _raw_view_sql(name, columns, parts))     # run_id from the run_id=<id> directories
    out: dict[str, dict[str, Path]] = {r: {} for r in run_ids}
    to = work / "parts"                 # run_id=<id>/<table>_<i>.parquet
    for table in FACT_TABLES:
        cols = ", ".join(f'"{c}"' for c, _ in RAW_COLUMNS[table])
        if len(run_ids) == 1:           # one file, written as for a run in staging
            d = to / f"run_id={run_ids[0]}"
            d.mkdir(parents=True, exist_ok=True)
            con.con.execute(f"COPY (SELECT {cols} FROM {table}_from_events) TO {_quote(str(d / f'{table}_0.parquet'))} "
                            f"({_COPY_OPTIONS})")
        else:
            # into the run directories of the tables before (OVERWRITE_OR_IGNORE: their files kept)
            con.con.execute(f"COPY (SELECT {cols}, run_id FROM {table}_from_events) TO {_quote(str(to))} "
                            f"({_COPY_OPTIONS}, PARTITION_BY (run_id), FILENAME_PATTERN '{table}_{{i}}', OVERWRITE_OR_IGNORE)")
        for r in run_ids:
            d = to / f"run_id={r}"
            made = sorted(p for p in d.glob(f"{table}_*.parquet") if p.name[len(table) + 1:-len(".parquet")].isdigit())
            if len(made) > 1:           # a run's rows in more than one file: each run alone
                return {x: _compute_runs(con, store, work / f"one-{x}", [x], names)[x] for x in run_ids}
            if not made:                # no rows: an empty part, as a run alone gets
                d.mkdir(parents=True, exist_ok=True)
                made = [d / f"{table}_0.parquet"]
                con.con.execute(f"COPY (SELECT {cols} FROM {table}_from_events WHERE false) TO {_quote(str(made[0]))} ({_COPY_OPTIONS})")
            out[r][table] = made[0]
        # what follows (the packets after the flows) reads these parts, as a query would
        con.point(table, _raw_view_sql(table, RAW_COLUMNS[table], [str(out[r][table]) for r in run_ids]))
    return out


# how the fact parts are written: Parquet V2, zstd level 1 (cheap to write, small to read)
_COPY_OPTIONS = "FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, PARQUET_VERSION V2"
_CONFIG: dict[str, str | int | bool] = {"threads": THREADS, "memory_limit": MEMORY_LIMIT, "preserve_insertion_order": False}


class _Connection:
    """A DuckDB connection with the views of the facts' definitions: the raw_* views first
    empty (cheap binds; each run points them at its files), the computed facts empty
    (nothing is stored yet), then the sql/ files they use."""

    def __init__(self, con: duckdb.DuckDBPyConnection, files):
        self.con = con
        self.key: tuple = ()                  # the definitions' hashes (_Kept)
        self.raw: dict[str, str] = {}         # raw_* view -> the SQL it was last defined by
        need = set()
        for table in FACT_TABLES:
            need |= needed_names(files, {f"{table}_from_events"})
        for name, columns in RAW_VIEWS:
            self.point(name, _raw_view_sql(name, columns, []))
        for table in FACT_TABLES:
            con.execute(computed_view_sql(table, []))
        for f in files:
            if f.name in need:
                con.execute(f.text)

    def point(self, name: str, sql: str) -> None:
        """(Re)define raw_<name> by `sql`, unless it is that already."""
        if self.raw.get(name) != sql:
            self.con.execute(sql)
            self.raw[name] = sql

    def close(self) -> None:
        self.con.close()


class _Kept:
    """Connections kept between runs for small ones (SMALL_RUN_BYTES: a sweep's), without
    spilling: one per ingest running at once, at most MAX idle, each for the definitions
    (`key`: their hashes) it was made with; a forked child makes its own."""

    MAX = 2

    def __init__(self) -> None:
        self.guard = threading.Lock()
        self.idle: list[_Connection] = []
        self.pid = os.getpid()

    def take(self, key: tuple, files) -> _Connection:
        import duckdb

        with self.guard:
            if self.pid != os.getpid():      # a fork's copy: not ours to use or close
                self.idle, self.pid = [], os.getpid()
            for i, c in enumerate(self.idle):
                if c.key == key:
                    return self.idle.pop(i)
        c = _Connection(duckdb.connect(":memory:", config={**_CONFIG, "temp_directory": ""}), files)
        c.key = key
        return c

    def give_back(self, c: _Connection) -> None:
        with self.guard:
            if self.pid == os.getpid():
                self.idle.insert(0, c)
                extra = self.idle[self.MAX:]
                del self.idle[self.MAX:]
            else:
                extra = [c]
        for old in extra:
            self.drop(old)

    @staticmethod
    def drop(c: _Connection) -> None:
        try:
            c.close()
        except Exception:
            pass


_KEPT = _Kept()
