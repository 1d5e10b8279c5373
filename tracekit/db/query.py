"""DuckDB over the Parquet store: the `raw_*` views over the files, then every view in sql/.

Nothing is copied into a database file: each connection is in memory and reads the run
files where they lie (the raw_* views name the files found when connecting: a run added
later is seen by the next connection). `sql/` is read at run time, in layers (staging/, intermediate/,
metrics/, macros/); each file defines the one view or macro named by its file name and
declares what it uses on a `-- uses: a, b` header line, and the files are loaded in that
declared dependency order (a cycle or an unknown name is an error, not a retry).
"""
from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any, Sequence

import duckdb

from tracekit.db.catalogue import create_catalogue_table
from tracekit.store.columns import STUDY_FACTS, TABLE_NAMES, VIEW_FACTS
from tracekit.core.errors import TracekitError
from tracekit.db.sqlfiles import BASE_NAMES, COMPUTED_VIEWS, HIER_TABLES, HIER_VIEWS, LAYERS, RAW_VIEWS, SqlFile, _ordered, _quote, _raw_view_sql, computed_view_sql, definition_hash, empty_view_sql, fact_part_name, needed_names, sql_dir, sql_files
from tracekit.store.compacted import PACKET_TABLES, SMALL_TABLES, plan
from tracekit.store.store import Store

__all__ = ["BASE_NAMES", "LAYERS", "SqlFile", "_ordered", "needed_names", "sql_dir", "sql_files"]

def store_files(store: Store) -> dict[str, list[str]]:
    """Every Parquet file of the store's whole runs, by table ('runs' for the run records),
    sorted, compacted or not (tracekit verify's view of a store; the connections read through
    read_plan). A damaged run is left out whole, with a one-line warning on stderr naming it."""
    scan = store.scan()
    warn_damaged(scan.damaged)
    return scan.files


@dataclass
class ViewFiles:
    """What the raw_* views of one connection read (tracekit.store.compacted.plan), with the
    stored-facts bookkeeping done: `files` holds, per table, the per-run parts to read (fact
    tables: only parts of the current definition; hier_<table>: the parts of runs with
    hierarchical addresses), `compacted` the compacted file of each small table still
    current, `pending` per fact table the runs whose facts the views compute from events."""
    files: dict[str, list[str]]
    compacted: dict[str, str]
    exclude: list[str]
    only: list[str] | None
    pending: dict[str, list[str]]
    any_hier: bool
    tables: set[str]
    hier_only: frozenset[str] = frozenset()

    def complete_for(self, need: set[str]) -> bool:
        """Whether the compacted runs' per-run files of every table `need` reads are listed
        (of a table listed for the runs with hierarchical addresses only, for every run)."""
        return _per_run_tables(need) <= self.tables and not (self.hier_only & {t for t in HIER_TABLES if f"raw_{t}" in need})


def _per_run_tables(need: set[str]) -> set[str]:
    out = {t for t in TABLE_NAMES if f"raw_{t}" in need}
    return out | {t for t in HIER_TABLES if f"raw_hier_{t}" in need}


def _run_of(path: str) -> str:
    """The run id of a run's part, from its directory name (…/run_id=<id>/<file>)."""
    return path.rsplit(os.sep, 2)[-2][len("run_id="):]


_warned_generation: set[str] = set()


def read_plan(store: Store, need: set[str], run_ids=None) -> ViewFiles:
    """The files a connection whose views use the names `need` reads, over the runs run_ids
    (None: every run): one readdir of runs/, the compacted generation, and each run not
    compacted listed and checked (its damage warned about once, tracekit.store.damage)."""
    tables = _per_run_tables(need)
    hier_only = frozenset(t for t in HIER_TABLES if f"raw_hier_{t}" in need and f"raw_{t}" not in need)
    r = plan(store.root, store.runs_dir, tables, list(run_ids) if run_ids is not None else None, hier_only)
    if r.problem and r.problem not in _warned_generation:
        _warned_generation.add(r.problem)
        print(f"tracekit: warning: compacted files not used ({r.problem}); every run is read from its own files — "
              "tracekit compact writes a whole generation", file=sys.stderr)
    warn_damaged(r.damaged)
    files = r.files
    hier = {_run_of(p) for p in files.get("node_addrs", [])} | set(r.has.get("node_addrs", []))
    for t in HIER_TABLES:
        files[f"hier_{t}"] = [p for p in files.get(t, []) if _run_of(p) in hier]
    live = set(r.run_ids)
    with_events = {_run_of(p) for t in PACKET_TABLES for p in files.get(t, [])}
    with_events = (with_events | {x for t in PACKET_TABLES for x in r.has.get(t, [])}) - hier
    defs = sql_files()
    compacted = dict(r.compacted)
    pending: dict[str, list[str]] = {}
    for table in VIEW_FACTS:
        digest = definition_hash(defs, table)
        part = os.sep + fact_part_name(table, digest)
        files[table] = [p for p in files.get(table, []) if p.endswith(part)]
        stored = {_run_of(p) for p in files[table]}
        if table in compacted:
            if r.fact_hashes.get(table) == digest:
                stored |= set(r.has.get(table, []))
            else:       # compacted under another definition of sql/: computed, as a run's stale part is
                del compacted[table]
        if table in STUDY_FACTS:    # only ever compacted: every other packet-trace run computes them
            pending[table] = sorted(((with_events | hier) & live) - stored)
        else:   # a per-packet fact table not read here: which runs lack its parts is not looked up
            pending[table] = sorted((with_events & live) - stored) if table in SMALL_TABLES or table in tables else []
    return ViewFiles(files, compacted, r.exclude, r.only, pending, bool(hier & live), tables, hier_only)


_warned: set[tuple[str, str]] = set()


def warn_damaged(damaged) -> None:
    """One line on stderr per damaged run, once per process (a dashboard reconnects often)."""
    for d in damaged:
        key = (str(d.run_id), d.file)
        if key in _warned:
            continue
        _warned.add(key)
        print(f"tracekit: warning: {d.describe()}; skipped — tracekit verify / tracekit rm --damaged",
              file=sys.stderr)


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


def referenced_names(query: str) -> set[str]:
    """Every word of `query` outside its comments, lower-cased (identifiers unquoted, and the
    words inside string constants too): a superset of the views and macros it can name."""
    toks = duckdb.tokenize(query)
    words: set[str] = set()
    for i, (start, kind) in enumerate(toks):
        if kind in (duckdb.token_type.comment, duckdb.token_type.numeric_const, duckdb.token_type.operator):
            continue
        end = toks[i + 1][0] if i + 1 < len(toks) else len(query)
        words.update(w.lower() for w in _WORD.findall(query[start:end]))
    return words


def define_views(con: duckdb.DuckDBPyConnection, store: Store, run_ids=None, for_query: str | None = None) -> list[str]:
    """Create raw_* and every sql/ view and macro on `con`, in dependency order; returns
    their names in that order. With run_ids, the raw_* views read only those runs' files.
    With for_query, only the names that query can use (any word of it that is a view, a
    macro, a raw_* view or metric_catalogue) and, transitively, what they use are created:
    DuckDB binds each view as it is created, the chain below it included, so the whole of
    sql/ costs far more than a typical query's few views; and a query that reads no raw_*
    view does not walk the store at all.

    The stored facts (tracekit.store.columns.VIEW_FACTS): <table>_computed is the view
    <table>_from_events over the runs without a stored part of the current definition, or,
    when every run has one, an empty relation: then the chain that computes them from the
    events is neither created nor bound (with for_query, it is created only when needed)."""
    all_files = sql_files()
    files = all_files
    tables = list(RAW_VIEWS)
    with_catalogue = True
    need = {f.name for f in all_files} | BASE_NAMES
    if for_query is not None:
        need = needed_names(all_files, referenced_names(for_query))
        with_catalogue = "metric_catalogue" in need
    facts = [t for t in VIEW_FACTS if COMPUTED_VIEWS[t] in need]
    pending: dict[str, list[str]] = {t: [] for t in facts}
    reading: ViewFiles | None = None
    any_hier = True
    if any(f"raw_{name}" in need for name, _ in tables):
        reading = read_plan(store, need, run_ids)
        pending = {t: reading.pending[t] for t in facts}
        if any(pending.values()):
            # facts to compute from events (sql/ changed since ingest or compaction): the
            # chain below <table>_from_events, over the events of those runs too, and the
            # facts that chain reads (run_metric_facts' reads the flows and packets)
            done: set[str] = set()
            while todo := [t for t in facts if reading.pending[t] and t not in done]:
                for t in todo:
                    done.add(t)
                    need |= needed_names(all_files, {f"{t}_from_events"})
                facts = [t for t in VIEW_FACTS if COMPUTED_VIEWS[t] in need]
                if not reading.complete_for(need):
                    reading = read_plan(store, need, run_ids)
            pending = {t: reading.pending[t] for t in facts}
        any_hier = reading.any_hier
    if for_query is not None:
        files = [f for f in all_files if f.name in need]
        tables = [(name, columns) for name, columns in tables if f"raw_{name}" in need]
    # DuckDB binds a view when it is created (checking it, fixing its columns) and again in
    # every query that reads it, over what the names it uses mean then. So the sql/ views are
    # created over empty raw_* views of the declared columns, which costs next to nothing, and
    # the raw_* views are then pointed at the files: binding over the files happens only in
    # the queries (for every raw_* reference in a view's expansion, each time).
    # For one query (for_query), the views are created unbound where DuckDB can (DEFER_BINDING,
    # DuckDB >= 2.0): the query binds them anyway, so binding each at its creation too was
    # paid twice. A connection for many queries (the dashboard, connect() without for_query)
    # binds each view as it is created, so an error in a sql/ file is reported naming it.
    defer = [for_query is not None]
    for name, columns in tables:
        _create(con, _raw_view_sql(name, columns, []), defer)
    for table in facts:
        _create(con, computed_view_sql(table, []), defer)
    if with_catalogue:
        create_catalogue_table(con)
    for f in files:
        try:
            _create(con, f.text, defer)
        except duckdb.Error as e:
            raise TracekitError(f"{f.rel}: {str(e).splitlines()[0]}") from None
    if reading is None:
        # the query reads no run (SELECT 1, the catalogue): the walk of runs/ and its damage
        # check (which names a damaged run on stderr) wait for a query that reads the store
        return [f.name for f in files]
    for name, columns in tables:
        if reading.files.get(name) or name in reading.compacted:
            _create(con, _raw_view_sql(name, columns, reading.files.get(name, []), compacted=reading.compacted.get(name),
                                       exclude=reading.exclude, only=reading.only), defer)
    for table in facts:
        if pending[table]:
            _create(con, computed_view_sql(table, pending[table]), defer)
    if not any_hier:    # the chains over the runs with hierarchical addresses: none here
        for name in HIER_VIEWS:
            if name in need:
                _create(con, empty_view_sql(name, HIER_VIEWS[name]), defer)
    return [f.name for f in files]


_VIEW = re.compile(r"^(CREATE OR REPLACE VIEW [A-Za-z_][A-Za-z0-9_]*) AS\b", re.MULTILINE)


def _create(con: duckdb.DuckDBPyConnection, sql: str, defer: list[bool]) -> None:
    """Run the CREATE statement `sql`; while defer[0], a view is created WITH
    (DEFER_BINDING); where this DuckDB does not know that option (a parser error), defer[0]
    becomes False and the statement runs as written."""
    if defer[0]:
        deferred, n = _VIEW.subn(r"\1 WITH (DEFER_BINDING) AS", sql, count=1)
        if n:
            try:
                con.execute(deferred)
                return
            except duckdb.ParserException:
                defer[0] = False
    con.execute(sql)


# -- limits ------------------------------------------------------------------------------
# Every connection gets these before its configuration is locked (a query cannot SET them);
# each is overridable by an environment variable (or, for `tracekit sql`, an option).
ENV_MEMORY = "TRACEKIT_SQL_MEMORY_LIMIT"      # a DuckDB size: '4GiB', '500MB'
ENV_THREADS = "TRACEKIT_SQL_THREADS"
ENV_TEMP = "TRACEKIT_SQL_TEMP_LIMIT"          # how much a query may spill to its temp directory
ENV_TIMEOUT = "TRACEKIT_SQL_TIMEOUT"          # seconds for a typed query (0 = none)
MEMORY_FRACTION = 0.5                         # of the machine's RAM, by default
DEFAULT_TEMP_LIMIT = "10GiB"
DEFAULT_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Limits:
    """What one connection may use: memory (a DuckDB size), worker threads, and disk for
    spilling into its private temp directory (a DuckDB size)."""
    memory_limit: str
    threads: int
    temp_limit: str


def cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS tells it, else every core)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _ram_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def default_limits(memory_limit: str | None = None, threads: int | None = None,
                   temp_limit: str | None = None) -> Limits:
    """The given values, else the environment's (TRACEKIT_SQL_MEMORY_LIMIT, _THREADS,
    _TEMP_LIMIT), else half the RAM, every core, 10 GiB of spill. Threads are at most the
    cores (cores()): more only cost a thread each (DuckDB starts them all), and a script's
    count from a larger machine still runs here."""
    if memory_limit is None:
        memory_limit = os.environ.get(ENV_MEMORY) or None
    if memory_limit is None:
        ram = _ram_bytes()
        memory_limit = f"{max(1, int(ram * MEMORY_FRACTION) // 2**20)}MiB" if ram else "4GiB"
    if threads is None:
        env = os.environ.get(ENV_THREADS)
        try:
            threads = int(env) if env else cores()
        except ValueError:
            raise TracekitError(f"{ENV_THREADS} must be a whole number of threads, not {env!r}") from None
    if threads < 1:
        raise TracekitError(f"threads must be at least 1, not {threads}")
    threads = min(threads, cores())
    if temp_limit is None:
        temp_limit = os.environ.get(ENV_TEMP) or DEFAULT_TEMP_LIMIT
    return Limits(memory_limit, threads, temp_limit)


def default_timeout_s() -> float:
    """TRACEKIT_SQL_TIMEOUT, else 60 s (0 = no limit)."""
    env = os.environ.get(ENV_TIMEOUT)
    if not env:
        return DEFAULT_TIMEOUT_S
    try:
        t = float(env)
    except ValueError:
        raise TracekitError(f"{ENV_TIMEOUT} must be a number of seconds, not {env!r}") from None
    if not t >= 0 or t == float("inf"):
        raise TracekitError(f"{ENV_TIMEOUT} must be a finite number of seconds >= 0, not {env!r}")
    return t


def _set_limits(con: duckdb.DuckDBPyConnection, limits: Limits) -> None:
    for name, value in (("memory_limit", limits.memory_limit), ("threads", limits.threads),
                        ("max_temp_directory_size", limits.temp_limit)):
        try:
            con.execute(f"SET {name} = {_quote(str(value))}" if name != "threads" else f"SET threads = {int(value)}")
        except duckdb.Error as e:
            raise TracekitError(f"{name} {value!r}: {str(e).splitlines()[0]}") from None


def _private_temp_dir(con: duckdb.DuckDBPyConnection) -> str:
    """A fresh directory (mode 0700) for this connection's spill files, removed when the
    connection is closed (close()) or collected, or at exit. DuckDB adds its temp directory
    to the allowed directories, so it must be one no one else writes to or reads from."""
    tmp = tempfile.mkdtemp(prefix="tracekit-sql-")
    _REMOVERS[id(con)] = weakref.finalize(con, _remove_temp, tmp, id(con))
    return os.path.join(tmp, "spill")


_REMOVERS: dict[int, weakref.finalize] = {}


def _remove_temp(tmp: str, key: int) -> None:
    shutil.rmtree(tmp, ignore_errors=True)
    _REMOVERS.pop(key, None)


def remove_temp_dirs() -> None:
    """Remove every connection's private temp directory now (before an exit that skips the
    interpreter's own clean-up)."""
    for remover in list(_REMOVERS.values()):
        remover()


def close(con: duckdb.DuckDBPyConnection) -> None:
    """Close a connect()ed connection and remove its temp directory now."""
    con.close()
    remover = _REMOVERS.get(id(con))
    held = remover.peek() if remover is not None else None
    if remover is not None and held is not None and held[0] is con:
        remover()


def connect(data_dir: str | os.PathLike, read_only_sql: bool = True,
            limits: Limits | None = None, run_ids=None, for_query: str | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with every view defined over the store at data_dir
    (over only the runs run_ids, when given: the views then cost what those runs cost),
    the memory, thread and spill limits set (default_limits()) and a private temp directory.
    With read_only_sql, file access is then limited to the store directory, and the
    configuration is locked. With for_query, only the views that query can use are defined
    (define_views): a connection for one query starts faster."""
    store = Store(data_dir)
    con = duckdb.connect(":memory:")
    con.execute(f"SET temp_directory = {_quote(_private_temp_dir(con))}")
    _set_limits(con, limits or default_limits())
    # a query reads the footer of each part once per raw_* reference in its expansion (a
    # run_metrics query has dozens); the parts never change once written, so keep them
    con.execute("SET parquet_metadata_cache = true")
    define_views(con, store, run_ids, for_query)
    if read_only_sql:
        root = str(store.root.resolve())
        con.execute(f"SET allowed_directories = [{_quote(root)}]")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    return con


# the names a query that chooses runs by their records can use (for_query reads the words):
# a connection over these alone lists no run's per-packet files
_RUN_RECORD_NAMES = "runs run_configs is_packet_trace"


def connect_run_records(data_dir: str | os.PathLike) -> duckdb.DuckDBPyConnection:
    """A connection with only the views over the run records (runs, run_configs) and the
    macros they use: for choosing runs before connect(run_ids=...) over the chosen ones, so
    that a command costs what its runs cost, not what the store holds."""
    return connect(data_dir, for_query=_RUN_RECORD_NAMES)


def chosen_runs(data_dir: str | os.PathLike, query: str, params: Sequence = ()) -> list[str]:
    """The run ids `query` (a SELECT run_id over the run records) returns, on a connection
    over the run records alone (connect_run_records), closed after."""
    con = connect_run_records(data_dir)
    try:
        return [r for (r,) in con.execute(query, list(params)).fetchall()]
    finally:
        con.close()


_ALLOWED = {"SELECT", "EXPLAIN"}
_ANALYZE = {"ANALYZE", "ANALYSE"}


def _tokens(query: str) -> list[tuple[int, str]]:
    """The query's tokens as text, comments left out."""
    toks = duckdb.tokenize(query)
    out: list[tuple[int, str]] = []
    for i, (start, kind) in enumerate(toks):
        if kind == duckdb.token_type.comment:
            continue
        end = toks[i + 1][0] if i + 1 < len(toks) else len(query)
        out.append((start, query[start:end].strip()))
    return out


def _check_explain(con: duckdb.DuckDBPyConnection, query: str) -> None:
    """EXPLAIN is allowed only of one plain SELECT and never with ANALYZE (which runs the
    statement: EXPLAIN ANALYZE COPY/UPDATE/DROP VIEW would write). What follows EXPLAIN and
    its options must parse, on its own, as exactly one SELECT."""
    toks = _tokens(query)
    if not toks or toks[0][1].upper() != "EXPLAIN":
        raise TracekitError("SQL: an EXPLAIN statement must start with EXPLAIN")
    i = 1
    if i < len(toks) and toks[i][1].upper() in _ANALYZE:
        raise TracekitError("SQL: EXPLAIN ANALYZE runs the statement; it is refused here (EXPLAIN alone shows the plan)")
    if i < len(toks) and toks[i][1].startswith("("):
        depth = 0
        while i < len(toks):
            t = toks[i][1]
            if t.upper().strip("(), ") in _ANALYZE:
                raise TracekitError("SQL: EXPLAIN (ANALYZE) runs the statement; it is refused here (EXPLAIN alone shows the plan)")
            depth += t.count("(") - t.count(")")
            i += 1
            if depth <= 0:
                break
    if i >= len(toks):
        raise TracekitError("SQL: EXPLAIN of nothing")
    inner = query[toks[i][0]:]
    try:
        statements = con.extract_statements(inner)
    except duckdb.Error as e:
        raise TracekitError(f"SQL: {str(e).splitlines()[0]}") from None
    if len(statements) != 1 or statements[0].type.name != "SELECT":
        kind = statements[0].type.name if statements else "empty"
        raise TracekitError(f"SQL: EXPLAIN only of a query (got EXPLAIN of a {kind} statement); the store is read-only here")


def check_query(con: duckdb.DuckDBPyConnection, query: str) -> None:
    """Refuse anything but one read-only statement (SELECT, WITH ... SELECT, EXPLAIN of one)."""
    try:
        statements = con.extract_statements(query)
    except duckdb.Error as e:
        raise TracekitError(f"SQL: {str(e).splitlines()[0]}") from None
    if not statements:
        raise TracekitError("SQL: empty query")
    if len(statements) > 1:
        raise TracekitError("SQL: one statement at a time")
    kind = statements[0].type.name
    if kind not in _ALLOWED:
        raise TracekitError(f"SQL: only queries are allowed (got a {kind} statement); the store is read-only here")
    if kind == "EXPLAIN":
        _check_explain(con, query)


def run_query(con: duckdb.DuckDBPyConnection, query: str):
    """Run one read-only statement (SELECT, WITH ... SELECT, EXPLAIN of one); returns a
    DuckDB relation. Anything that would write is refused before it runs."""
    check_query(con, query)
    try:
        return con.sql(query)
    except duckdb.Error as e:
        raise TracekitError(f"SQL: {str(e).splitlines()[0]}") from None


def stream_query(con: duckdb.DuckDBPyConnection, query: str) -> duckdb.DuckDBPyConnection:
    """Run one read-only statement as run_query does, its rows left in DuckDB to be taken a
    batch at a time (con.fetchmany: the result streams instead of being held whole); returns
    con. DuckDB's own errors go up as they are (QueryRun names a limit from them)."""
    check_query(con, query)
    con.execute(query)
    return con


def rss_bytes() -> int | None:
    """This process's resident memory now (Linux's /proc), else None."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?)\s*([kmgtp]?i?b|bytes?)\s*$", re.IGNORECASE)


def size_bytes(text: str) -> int | None:
    """A size as DuckDB writes one ('47.6 MiB', '3.0 GiB', '0 bytes'), in bytes; None if it is not one."""
    m = _SIZE.match(text or "")
    if m is None:
        return None
    unit = m.group(2).lower()
    base = 1 if unit.startswith("byte") or unit == "b" else 1024 if "i" in unit else 1000
    power = 0 if base == 1 else "kmgtp".index(unit[0]) + 1
    return int(float(m.group(1)) * base ** power)


def _memory_error(limits: Limits, hints: dict[str, str]) -> TracekitError:
    return TracekitError(f"query stopped: it needed more than the memory limit of {limits.memory_limit} "
                         f"({hints.get('memory', ENV_MEMORY)})")


def _limit_error(e: duckdb.Error, limits: Limits, hints: dict[str, str]) -> TracekitError:
    msg = str(e)
    if "max_temp_directory_size" in msg:
        return TracekitError(f"query stopped: it needed more than the spill limit of {limits.temp_limit} "
                             f"({hints.get('temp', ENV_TEMP)})")
    return _memory_error(limits, hints)


# Rows a streamed result is taken in (QueryRun's Rows): about this many bytes of Python values
# at a time, whatever the width of a row.
BATCH_BYTES = 4 * 2**20
BATCH_MAX_ROWS = 10_000
# What a process of its own (QueryRun.supervise) may hold past its start and the memory limit:
# the interpreter's own objects, a batch being written, and what DuckDB holds past its own
# count (allocations it does not track, its allocator's slack), which grows with the limit.
RSS_HEADROOM_BYTES = 64 * 2**20
RSS_HEADROOM_FRACTION = 0.25


def rss_cap_bytes(memory_limit_bytes: int) -> int:
    """How far a process of its own may grow while it runs a query under this memory limit."""
    return memory_limit_bytes + RSS_HEADROOM_BYTES + int(memory_limit_bytes * RSS_HEADROOM_FRACTION)


class Rows:
    """A streamed result as QueryRun's fetch gets it (stream=True): its columns, and
    batches() of its rows, each of about BATCH_BYTES, taken from DuckDB as they are asked
    for. The run's stop (time, memory, cancel) is checked between batches, so converting and
    writing the rows is inside the limits too, not only DuckDB's execution."""

    def __init__(self, con: duckdb.DuckDBPyConnection, run: "QueryRun"):
        self._con, self._run = con, run
        self.columns = [d[0] for d in con.description or []]

    def batches(self):
        n = 64
        while True:
            if self._run._why is not None:
                raise duckdb.InterruptException("stopped between batches")
            batch = self._con.fetchmany(n)
            if not batch:
                return
            yield batch
            row_bytes = max(1, sum(sys.getsizeof(v) for v in batch[-1]))
            n = max(1, min(BATCH_MAX_ROWS, BATCH_BYTES // row_bytes))


class QueryRun:
    """One typed query on its own short-lived connection (connect(): the views, the limits,
    a private temp directory), stopped after timeout_s (0 = never) or by cancel() from any
    thread. With only_needed_views, just the views the query can name are defined (connect's
    for_query). fetch(relation) turns the result into what the caller wants; with stream,
    fetch(Rows) gets it a batch at a time instead (to write it out as it comes). setup(con)
    may add read-only names (registered Arrow tables) before the query. run() blocks and
    returns fetch's value, or raises TracekitError with one line saying why it stopped.

    DuckDB sees a stop only between its units of work, not inside one (one repeat('x', 10**9)
    runs to its end): a run stopped and still going GRACE_S later is given up by wait() (its
    error says which limit; its thread ends when DuckDB does, its result unused)."""

    GRACE_S = 2.0

    def __init__(self, data_dir: str | os.PathLike, query: str, fetch, timeout_s: float = DEFAULT_TIMEOUT_S,
                 limits: Limits | None = None, setup=None, hints: dict[str, str] | None = None,
                 only_needed_views: bool = False, stream: bool = False, run_ids: Sequence[str] | None = None):
        self.data_dir, self.query, self.fetch, self.setup = data_dir, query, fetch, setup
        self.run_ids = run_ids
        self.only_needed_views, self.stream = only_needed_views, stream
        self.timeout_s = timeout_s
        self.limits = limits or default_limits()
        self.hints = hints or {}
        self._con: duckdb.DuckDBPyConnection | None = None
        self._guard = threading.Lock()
        self._why: str | None = None            # 'timeout', 'memory' or 'cancel', once stopped
        self._stopped_at: float | None = None
        self._abandoned = False                 # given up by wait(): what the thread ends with is unused
        self._memory_bytes: int | None = None   # the memory limit, as the connection has it
        self._rss_start: int | None = None
        self._thread: threading.Thread | None = None
        self.result: Any = None
        self.error: TracekitError | None = None
        self.exception: BaseException | None = None   # set with error when it was not a TracekitError

    def _stop(self, why: str) -> None:
        with self._guard:
            if self._why is None:
                self._why = why
                self._stopped_at = time.monotonic()
            if self._con is not None:
                self._con.interrupt()

    def cancel(self) -> None:
        self._stop("cancel")

    def run(self):
        timer = None
        if self.timeout_s and self.timeout_s > 0:
            timer = threading.Timer(self.timeout_s, self._stop, ("timeout",))
            timer.daemon = True
            timer.start()
        con = None
        try:
            # the store's own files failing to open are not the query's error: they go up
            # as they are (the CLI's boundary names them: DuckDB, OSError, ...)
            con = connect(self.data_dir, limits=self.limits, run_ids=self.run_ids,
                          for_query=self.query if self.only_needed_views else None)
        except BaseException:
            if timer is not None:
                timer.cancel()
            raise
        try:
            self._memory_bytes = size_bytes(str(con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]))
            with self._guard:
                self._con = con
                stopped = self._why is not None
            if stopped:
                raise duckdb.InterruptException("interrupted before it started")
            if self.setup is not None:
                self.setup(con)
            if self.stream:
                return self.fetch(Rows(stream_query(con, self.query), self))
            rel = run_query(con, self.query)
            return self.fetch(rel)
        except duckdb.InterruptException:
            raise self._stopped_error() from None
        except duckdb.OutOfMemoryException as e:
            raise _limit_error(e, self.limits, self.hints) from None
        except TracekitError as e:
            if self._why is not None and "nterrupt" in str(e):
                raise self._stopped_error() from None
            raise
        except duckdb.Error as e:
            raise TracekitError(f"SQL: {str(e).splitlines()[0]}") from None
        finally:
            if timer is not None:
                timer.cancel()
            with self._guard:
                self._con = None
            if con is not None:
                close(con)

    def _stopped_error(self) -> TracekitError:
        if self._why == "timeout":
            return TracekitError(f"query stopped after {self.timeout_s:g} s ({self.hints.get('timeout', ENV_TIMEOUT)})")
        if self._why == "memory":
            return _memory_error(self.limits, self.hints)
        return TracekitError("query cancelled")

    # -- in a thread (the dashboard, tracekit sql) ----------------------------------------
    def start(self) -> "QueryRun":
        self._rss_start = rss_bytes()

        def work():
            try:
                result = self.run()
                with self._guard:
                    if not self._abandoned:
                        self.result = result
            except TracekitError as e:
                with self._guard:
                    if not self._abandoned:
                        self.error = e
            except KeyboardInterrupt:  # DuckDB raises Ctrl-C in the thread running the query
                with self._guard:
                    self._why = self._why or "cancel"
                    if not self._abandoned:
                        self.error = self._stopped_error()
            except Exception as e:  # anything else still ends the run with one line
                with self._guard:
                    if not self._abandoned:
                        self.exception = e      # as it was raised, for a caller that reports it itself
                        self.error = TracekitError(f"SQL: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
        self._thread = threading.Thread(target=work, name="tracekit-query", daemon=True)
        self._thread.start()
        return self

    def wait(self, seconds: float) -> bool:
        """Wait up to `seconds` for a started run; whether it has ended, or has been given
        up (stopped GRACE_S ago and still in DuckDB: then its error says why it stopped)."""
        assert self._thread is not None
        self._thread.join(seconds)
        if not self._thread.is_alive():
            return True
        with self._guard:
            if self._abandoned:
                return True
            if self._stopped_at is None or time.monotonic() - self._stopped_at < self.GRACE_S:
                return False
        self._give_up()
        return True

    def _give_up(self) -> None:
        with self._guard:
            if not self._abandoned:
                self._abandoned = True
                self.result, self.exception = None, None
                self.error = self._stopped_error()

    @property
    def given_up(self) -> bool:
        """Whether wait() or supervise() gave the run up while its thread was still in DuckDB."""
        return self._abandoned

    def supervise(self, poll_s: float = 0.05) -> None:
        """Wait for a started run in a process that runs nothing else (tracekit sql), holding
        its memory limit where DuckDB does not count what it allocates (a huge string being
        built, the rows converted for Python): the process's resident memory growing past
        rss_cap_bytes() of the memory limit since start() stops the run and gives it
        up at once. Returns when the run has ended or is given up (given_up): a caller
        giving up leaves the process without waiting for DuckDB's busy thread."""
        while not self.wait(poll_s):
            rss, start, limit = rss_bytes(), self._rss_start, self._memory_bytes
            if rss is None or start is None or limit is None:
                continue
            if rss - start > rss_cap_bytes(limit):
                self._stop("memory")
                with self._guard:
                    if self._why == "memory":
                        # the thread may be where DuckDB never looks (inside one huge value)
                        # and growing still: not waiting out a grace here
                        self._stopped_at = time.monotonic() - self.GRACE_S
