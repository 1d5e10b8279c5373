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
import weakref
from dataclasses import dataclass
from typing import Any
from pathlib import Path

import duckdb

from .catalogue import create_catalogue_table
from .columns import FACT_TABLES
from .errors import TracekitError
from .sqlfiles import (BASE_NAMES, COMPUTED_VIEWS, HIER_TABLES, HIER_VIEWS, LAYERS, RAW_VIEWS, SqlFile, _ordered, _quote, _raw_view_sql, computed_view_sql,
                       definition_hash, empty_view_sql, fact_part_name, needed_names, sql_dir, sql_files)
from .store import Store

__all__ = ["BASE_NAMES", "LAYERS", "SqlFile", "_ordered", "needed_names", "sql_dir", "sql_files"]

def store_files(store: Store) -> dict[str, list[str]]:
    """Every Parquet file of the store's whole runs, by table ('runs' for the run records),
    sorted: one walk of runs/ per connection, so the views name their files instead of
    globbing them. A damaged run (tracekit.damage: run.parquet missing, a file cut off) is
    left out whole, with a one-line warning on stderr naming it."""
    scan = store.scan()
    warn_damaged(scan.damaged)
    return scan.files


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

    The stored facts (tracekit.columns.FACT_TABLES): <table>_computed is the view
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
    facts = [t for t in FACT_TABLES if COMPUTED_VIEWS[t] in need]
    pending: dict[str, list[str]] = {t: [] for t in facts}
    parts: dict[str, list[str]] | None = None
    any_hier = True
    if any(f"raw_{name}" in need for name, _ in tables):
        parts = store_files(store)
        if run_ids is not None:
            keep = {f"run_id={r}" for r in run_ids}
            parts = {k: [p for p in v if Path(p).parent.name in keep] for k, v in parts.items()}
        hier_dirs = {Path(p).parent for p in parts.get("node_addrs", [])}
        any_hier = bool(hier_dirs)
        for t in HIER_TABLES:
            parts[f"hier_{t}"] = [p for p in parts.get(t, []) if Path(p).parent in hier_dirs]
        parts, all_pending = current_facts(parts)
        pending = {t: all_pending[t] for t in facts}
        for t in facts:
            if pending[t] and f"{t}_from_events" not in need:
                need |= needed_names(all_files, {f"{t}_from_events"})
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
    if parts is None:
        # the query reads no run (SELECT 1, the catalogue): the walk of runs/ and its damage
        # check (which names a damaged run on stderr) wait for a query that reads the store
        return [f.name for f in files]
    for name, columns in tables:
        if parts.get(name):
            _create(con, _raw_view_sql(name, columns, parts[name]), defer)
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


def current_facts(parts: dict[str, list[str]]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Of a store's parts by table (store_files), those to read: the fact tables' parts only
    when written under the current definition (sqlfiles.definition_hash); and per fact table,
    the packet-trace runs (those with events or wireless_events parts) without such a part,
    whose facts the views compute from their events. Runs with hierarchical addresses (with
    node_addrs parts) have no facts: their packets are hier_packets'."""
    files = sql_files()
    hier = {Path(p).parent.name for p in parts.get("node_addrs", [])}
    with_events = {Path(p).parent.name for t in ("events", "wireless_events") for p in parts.get(t, [])} - hier
    out = dict(parts)
    pending = {}
    for table in FACT_TABLES:
        name = fact_part_name(table, definition_hash(files, table))
        out[table] = [p for p in parts.get(table, []) if Path(p).name == name]
        stored = {Path(p).parent.name for p in out[table]}
        pending[table] = sorted(r[len("run_id="):] for r in with_events - stored)
    return out, pending


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


def _ram_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def default_limits(memory_limit: str | None = None, threads: int | None = None,
                   temp_limit: str | None = None) -> Limits:
    """The given values, else the environment's (TRACEKIT_SQL_MEMORY_LIMIT, _THREADS,
    _TEMP_LIMIT), else half the RAM, every core, 10 GiB of spill."""
    if memory_limit is None:
        memory_limit = os.environ.get(ENV_MEMORY) or None
    if memory_limit is None:
        ram = _ram_bytes()
        memory_limit = f"{max(1, int(ram * MEMORY_FRACTION) // 2**20)}MiB" if ram else "4GiB"
    if threads is None:
        env = os.environ.get(ENV_THREADS)
        try:
            threads = int(env) if env else (os.cpu_count() or 1)
        except ValueError:
            raise TracekitError(f"{ENV_THREADS} must be a whole number of threads, not {env!r}") from None
    if threads < 1:
        raise TracekitError(f"threads must be at least 1, not {threads}")
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


def _limit_error(e: duckdb.Error, limits: Limits, hints: dict[str, str]) -> TracekitError:
    msg = str(e)
    if "max_temp_directory_size" in msg:
        return TracekitError(f"query stopped: it needed more than the spill limit of {limits.temp_limit} "
                             f"({hints.get('temp', ENV_TEMP)})")
    return TracekitError(f"query stopped: it needed more than the memory limit of {limits.memory_limit} "
                         f"({hints.get('memory', ENV_MEMORY)})")


class QueryRun:
    """One typed query on its own short-lived connection (connect(): the views, the limits,
    a private temp directory), stopped after timeout_s (0 = never) or by cancel() from any
    thread. With only_needed_views, just the views the query can name are defined (connect's
for_query). fetch(relation) turns the result into what the caller wants; setup(con) may add
    read-only names (registered Arrow tables) before the query. run() blocks and returns
    fetch's value, or raises TracekitError with one line saying why it stopped."""

    def __init__(self, data_dir: str | os.PathLike, query: str, fetch, timeout_s: float = DEFAULT_TIMEOUT_S,
                 limits: Limits | None = None, setup=None, hints: dict[str, str] | None = None,
                 only_needed_views: bool = False):
        self.data_dir, self.query, self.fetch, self.setup = data_dir, query, fetch, setup
        self.only_needed_views = only_needed_views
        self.timeout_s = timeout_s
        self.limits = limits or default_limits()
        self.hints = hints or {}
        self._con: duckdb.DuckDBPyConnection | None = None
        self._guard = threading.Lock()
        self._why: str | None = None            # 'timeout' or 'cancel', once stopped
        self._thread: threading.Thread | None = None
        self.result: Any = None
        self.error: TracekitError | None = None
        self.exception: BaseException | None = None   # set with error when it was not a TracekitError

    def _stop(self, why: str) -> None:
        with self._guard:
            if self._why is None:
                self._why = why
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
            con = connect(self.data_dir, limits=self.limits,
                          for_query=self.query if self.only_needed_views else None)
        except BaseException:
            if timer is not None:
                timer.cancel()
            raise
        try:
            with self._guard:
                self._con = con
                stopped = self._why is not None
            if stopped:
                raise duckdb.InterruptException("interrupted before it started")
            if self.setup is not None:
                self.setup(con)
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
        return TracekitError("query cancelled")

    # -- in a thread (the dashboard) ----------------------------------------------------
    def start(self) -> "QueryRun":
        def work():
            try:
                self.result = self.run()
            except TracekitError as e:
                self.error = e
            except KeyboardInterrupt:  # DuckDB raises Ctrl-C in the thread running the query
                self._why = self._why or "cancel"
                self.error = self._stopped_error()
            except Exception as e:  # anything else still ends the run with one line
                self.exception = e      # as it was raised, for a caller that reports it itself
                self.error = TracekitError(f"SQL: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
        self._thread = threading.Thread(target=work, name="tracekit-query", daemon=True)
        self._thread.start()
        return self

    def wait(self, seconds: float) -> bool:
        """Wait up to `seconds` for a started run; whether it has ended."""
        assert self._thread is not None
        self._thread.join(seconds)
        return not self._thread.is_alive()
