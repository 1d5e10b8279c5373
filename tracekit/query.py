"""DuckDB over the Parquet store: the `raw_*` views over the files, then every view in sql/.

Nothing is copied into a database file: each connection is in memory and reads the run
files where they lie. `sql/` is read at run time; a file may use views defined by other
files, whatever their names, because files whose dependencies are missing are retried.
"""
from __future__ import annotations

import os
from pathlib import Path

import duckdb
import pyarrow as pa

from .catalogue import create_catalogue_table
from .errors import TracekitError
from .schema import RUNS, TABLES
from .store import Store


def sql_dir() -> Path:
    """sql/ ships inside the installed package; in a source checkout it is at the top."""
    here = Path(__file__).resolve().parent
    for cand in (here / "sql", here.parent / "sql"):
        if cand.is_dir():
            return cand
    raise TracekitError("the sql/ views directory is missing from this installation")


def _raw_view(con: duckdb.DuckDBPyConnection, store: Store, name: str, schema: pa.Schema) -> None:
    fname = "run.parquet" if name == "runs" else f"{name}-*.parquet"
    files = list(store.runs_dir.glob(f"run_id=*/{fname}")) if store.runs_dir.exists() else []
    if files:
        pattern = str(store.runs_dir / "run_id=*" / fname).replace("'", "''")
        con.execute(
            f"CREATE OR REPLACE VIEW raw_{name} AS SELECT * FROM read_parquet('{pattern}', "
            "hive_partitioning = true, hive_types = {'run_id': VARCHAR}, union_by_name = true)"
        )
    else:
        # no file yet: an empty relation of the same columns, in plain SQL (a registered
        # Arrow table would pull in pandas and be invisible to the connection's cursors)
        cols = ", ".join(f"CAST(NULL AS {_duck_type(f.type)}) AS {f.name}" for f in schema)
        con.execute(f"CREATE OR REPLACE VIEW raw_{name} AS SELECT {cols}, CAST(NULL AS VARCHAR) AS run_id WHERE false")


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


def define_views(con: duckdb.DuckDBPyConnection, store: Store) -> list[str]:
    """Create raw_* and every sql/ view on `con`; returns the sql/ view names."""
    _raw_view(con, store, "runs", RUNS)
    for name, schema in TABLES.items():
        _raw_view(con, store, name, schema)
    create_catalogue_table(con)
    pending = sorted(sql_dir().glob("*.sql"))
    names = []
    while pending:
        failed = []
        for f in pending:
            try:
                con.execute(f.read_text())
                names.append(f.stem)
            except duckdb.CatalogException as e:     # a view it uses is not defined yet
                failed.append((f, e))
            except duckdb.Error as e:
                raise TracekitError(f"sql/{f.name}: {str(e).splitlines()[0]}") from None
        if len(failed) == len(pending):
            f, e = failed[0]
            raise TracekitError(f"sql/{f.name}: {str(e).splitlines()[0]}")
        pending = [f for f, _ in failed]
    return names


def connect(data_dir: str | os.PathLike, read_only_sql: bool = True) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with every view defined over the store at data_dir.
    With read_only_sql, file access is then limited to the store directory."""
    store = Store(data_dir)
    con = duckdb.connect(":memory:")
    define_views(con, store)
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
