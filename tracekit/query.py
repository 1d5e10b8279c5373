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
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import duckdb
import pyarrow as pa

from .catalogue import create_catalogue_table
from .errors import TracekitError
from .schema import RUNS, TABLES
from .store import Store

LAYERS = ("macros", "staging", "intermediate", "metrics")
# names the Python side defines before any sql/ file: the raw tables and the catalogue
BASE_NAMES = frozenset({"raw_runs", *(f"raw_{t}" for t in TABLES), "metric_catalogue"})
_USES = re.compile(r"^--\s*uses:(.*)$", re.MULTILINE)


def sql_dir() -> Path:
    """sql/ ships inside the installed package; in a source checkout it is at the top."""
    here = Path(__file__).resolve().parent
    for cand in (here / "sql", here.parent / "sql"):
        if cand.is_dir():
            return cand
    raise TracekitError("the sql/ views directory is missing from this installation")


@dataclass(frozen=True)
class SqlFile:
    """One sql/ file: the view or macro `name` it defines, and the names it declares using."""
    name: str
    path: Path
    layer: str
    uses: tuple[str, ...]
    text: str

    @property
    def rel(self) -> str:
        return f"sql/{self.layer}/{self.path.name}"

    @property
    def kind(self) -> str:
        """'view', 'macro' (scalar) or 'table_macro'."""
        if "CREATE OR REPLACE MACRO" in self.text:
            return "table_macro" if re.search(r"\)\s+AS\s+TABLE\b", self.text) else "macro"
        return "view"


def _parse(path: Path, layer: str) -> SqlFile:
    text = path.read_text()
    m = _USES.search(text)
    if m is None:
        raise TracekitError(f"sql/{layer}/{path.name}: no '-- uses:' header line (write '-- uses:' alone if it uses nothing)")
    uses = tuple(sorted({u.strip() for u in m.group(1).split(",") if u.strip()}))
    return SqlFile(path.stem, path, layer, uses, text)


@lru_cache(maxsize=8)
def _ordered(root: str, stamp: tuple) -> tuple[SqlFile, ...]:
    files: dict[str, SqlFile] = {}
    for layer in LAYERS:
        for p in sorted((Path(root) / layer).glob("*.sql")):
            f = _parse(p, layer)
            if f.name in files or f.name in BASE_NAMES:
                raise TracekitError(f"{f.rel}: the name {f.name!r} is defined twice")
            files[f.name] = f
    for f in files.values():
        for u in f.uses:
            if u not in files and u not in BASE_NAMES:
                raise TracekitError(f"{f.rel}: uses unknown view or macro {u!r}")
            if u == f.name:
                raise TracekitError(f"{f.rel}: uses itself")
    # depth-first topological order; files of one depth keep layer then name order
    order: list[SqlFile] = []
    state: dict[str, int] = {}           # 1 = on the current path, 2 = done

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == 2 or name in BASE_NAMES:
            return
        if state.get(name) == 1:
            cyc = path[path.index(name):] + [name]
            raise TracekitError(f"sql/: views depend on each other in a cycle: {' -> '.join(cyc)}")
        state[name] = 1
        for u in files[name].uses:
            visit(u, path + [name])
        state[name] = 2
        order.append(files[name])

    for name in files:
        visit(name, [])
    return tuple(order)


def sql_files() -> list[SqlFile]:
    """Every sql/ file, in an order where each comes after everything it declares it uses."""
    root = sql_dir()
    paths = sorted(root.glob("*/*.sql"))
    stamp = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in paths)
    return list(_ordered(str(root), stamp))


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


def _quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _raw_view_sql(name: str, schema: pa.Schema, files: list[str]) -> str:
    """raw_<name>: the declared columns of the table (schema) read from `files`, and run_id
    from their run_id=<id> directory; without files, an empty relation of the same columns.

    The columns come from the declared schema, not from the files: every part of a store is
    written with its table's declared columns (ingest casts each chunk to them, and a store of
    another schema version is refused), so when a query binds the view DuckDB reads just the
    first file's footer, and the rest match by column name (a file without a declared column
    fails the query that reads it, naming the file). With `union_by_name` every bind read every
    file's footer, which made the views over a few hundred runs take minutes to define."""
    if files:
        cols = ", ".join(f'"{f.name}"' for f in schema)
        listed = "[" + ", ".join(_quote(p) for p in files) + "]"
        return (f"CREATE OR REPLACE VIEW raw_{name} AS SELECT {cols}, run_id FROM read_parquet({listed}, "
                "hive_partitioning = true, hive_types = {'run_id': VARCHAR})")
    # in plain SQL (a registered Arrow table would pull in pandas and be invisible to the
    # connection's cursors)
    cols = ", ".join(f'CAST(NULL AS {_duck_type(f.type)}) AS "{f.name}"' for f in schema)
    return f"CREATE OR REPLACE VIEW raw_{name} AS SELECT {cols}, CAST(NULL AS VARCHAR) AS run_id WHERE false"


def _duck_type(t: pa.DataType) -> str:
    """The DuckDB type of a stored Arrow column type (the few the schema uses)."""
    if pa.types.is_dictionary(t) or pa.types.is_string(t) or pa.types.is_large_string(t):
        return "VARCHAR"
    if pa.types.is_timestamp(t):
        return "TIMESTAMPTZ" if t.tz else "TIMESTAMP"
    if pa.types.is_list(t):
        return f"{_duck_type(t.value_type)}[]"
    if pa.types.is_struct(t):
        return "STRUCT(" + ", ".join(f"{t.field(i).name} {_duck_type(t.field(i).type)}" for i in range(t.num_fields)) + ")"
    simple = {pa.int32(): "INTEGER", pa.int64(): "BIGINT", pa.float64(): "DOUBLE", pa.bool_(): "BOOLEAN"}
    if t in simple:
        return simple[t]
    raise TypeError(f"no DuckDB type for {t}")


def define_views(con: duckdb.DuckDBPyConnection, store: Store, run_ids=None) -> list[str]:
    """Create raw_* and every sql/ view and macro on `con`, in dependency order; returns
    their names in that order. With run_ids, the raw_* views read only those runs' files."""
    files = sql_files()
    tables = [("runs", RUNS), *TABLES.items()]
    # DuckDB binds a view when it is created (checking it, fixing its columns) and again in
    # every query that reads it, over what the names it uses mean then. So the sql/ views are
    # created over empty raw_* views of the declared columns, which costs next to nothing, and
    # the raw_* views are then pointed at the files: binding over the files happens only in
    # the queries (for every raw_* reference in a view's expansion, each time).
    for name, schema in tables:
        con.execute(_raw_view_sql(name, schema, []))
    create_catalogue_table(con)
    for f in files:
        try:
            con.execute(f.text)
        except duckdb.Error as e:
            raise TracekitError(f"{f.rel}: {str(e).splitlines()[0]}") from None
    parts = store_files(store)
    if run_ids is not None:
        keep = {f"run_id={r}" for r in run_ids}
        parts = {k: [p for p in v if Path(p).parent.name in keep] for k, v in parts.items()}
    for name, schema in tables:
        if parts.get(name):
            con.execute(_raw_view_sql(name, schema, parts[name]))
    return [f.name for f in files]


def connect(data_dir: str | os.PathLike, read_only_sql: bool = True, run_ids=None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with every view defined over the store at data_dir
    (over only the runs run_ids, when given: the views then cost what those runs cost).
    With read_only_sql, file access is then limited to the store directory."""
    store = Store(data_dir)
    con = duckdb.connect(":memory:")
    # a query reads the footer of each part once per raw_* reference in its expansion (a
    # run_metrics query has dozens); the parts never change once written, so keep them
    con.execute("SET parquet_metadata_cache = true")
    define_views(con, store, run_ids)
    if read_only_sql:
        root = str(store.root.resolve())
        con.execute(f"SET allowed_directories = ['{root.replace(chr(39), chr(39) * 2)}']")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    return con


_ALLOWED = {"SELECT", "EXPLAIN"}


def run_query(con: duckdb.DuckDBPyConnection, query: str):
    """Run one read-only statement (SELECT, WITH ... SELECT, EXPLAIN); returns a DuckDB
    relation. Anything that would write is refused before it runs."""
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
    try:
        return con.sql(query)
    except duckdb.Error as e:
        raise TracekitError(f"SQL: {str(e).splitlines()[0]}") from None
