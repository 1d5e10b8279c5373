"""The raw_* views over the store's Parquet parts (tracekit.db.query): they name each file and
declare their columns, so they must still read exactly what the files hold. The reference is
a plain DuckDB read of the same files by glob with union_by_name (how the views read the
store before), written out here."""
from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest

from tracekit.ingest.pipeline import ingest_paths
from tracekit.db.query import connect, run_query, store_files
from tracekit.store.schema import RUNS, TABLES
from tracekit.store.store import Store


# the run record's UTC timestamp as text (fetching a TIMESTAMPTZ would need pytz)
def _star(table: str) -> str:
    return "* REPLACE (CAST(ingested_at AS VARCHAR) AS ingested_at)" if table == "runs" else "*"


def _plain(store: Path, table: str, fname: str) -> list[tuple]:
    """Every row of the files runs/run_id=*/fname by a plain glob read, sorted."""
    pattern = str(store / "runs" / "run_id=*" / fname)
    con = duckdb.connect()
    return sorted(con.execute(
        f"SELECT {_star(table)} FROM read_parquet('{pattern}', hive_partitioning = true, "
        "hive_types = {'run_id': VARCHAR}, union_by_name = true)").fetchall(), key=repr)


@pytest.fixture(scope="module")
def runs_of_kinds(tmp_path_factory, ns_traces) -> Path:
    """A store with runs of several kinds, so that several raw tables have parts."""
    d = tmp_path_factory.mktemp("query") / "store"
    res = ingest_paths(d, [ns_traces[k] for k in ("wired_plain", "wired_annotate", "tcpvar", "qmon_samples", "red")])
    assert [r.status for r in res] == ["added"] * 5
    return d


def test_raw_views_hold_what_the_files_hold(runs_of_kinds):
    con = connect(runs_of_kinds)
    tables = {"runs": "run.parquet", **{t: f"{t}-*.parquet" for t in TABLES}}
    seen = 0
    for table, fname in tables.items():
        if not list(runs_of_kinds.glob(f"runs/run_id=*/{fname}")):
            assert con.execute(f"SELECT count(*) FROM raw_{table}").fetchall() == [(0,)]
            continue
        got = sorted(con.execute(f"SELECT {_star(table)} FROM raw_{table}").fetchall(), key=repr)
        assert got == _plain(runs_of_kinds, table, fname), table
        seen += 1
    assert seen >= 6          # runs, events, annotations, tcp_vars, queue_samples, red_vars


def test_raw_views_have_the_declared_columns_in_order(runs_of_kinds):
    con = connect(runs_of_kinds)
    for table, schema in [("runs", RUNS), *TABLES.items()]:
        names = [r[0] for r in con.execute(f"DESCRIBE raw_{table}").fetchall()]
        assert names == [*schema.names, "run_id"], table


def test_store_files_finds_every_part_once(runs_of_kinds):
    files = store_files(Store(runs_of_kinds))
    listed = sorted(p for ps in files.values() for p in ps)
    on_disk = sorted(str(p) for p in runs_of_kinds.glob("runs/run_id=*/*.parquet"))
    assert listed == on_disk
    assert len(files["runs"]) == 5
    assert all(Path(p).name.startswith("events-") for p in files["events"])


def test_a_run_added_after_connect_is_seen_by_the_next_connection(tmp_path, ns_traces):
    d = tmp_path / "store"
    ingest_paths(d, [ns_traces["wired_plain"]])
    assert connect(d).execute("SELECT count(*) FROM runs").fetchall() == [(1,)]
    ingest_paths(d, [ns_traces["tcpvar"]])
    assert connect(d).execute("SELECT count(*) FROM runs").fetchall() == [(2,)]


def test_parts_are_read_by_column_name(tmp_path, populated_store):
    """A part whose columns are in another order, with a column the schema does not know,
    reads into the declared columns by name."""
    d = populated_store
    (run_dir,) = list((d / "runs").glob("run_id=*"))
    first = sorted(run_dir.glob("events-*.parquet"))[0]
    before = sorted(connect(d).execute("SELECT * FROM raw_events").fetchall(), key=repr)
    frame = pl.read_parquet(first)
    shuffled = frame.select(list(reversed(frame.columns))).with_columns(pl.lit(7).alias("future_column"))
    shuffled.write_parquet(first)
    after = sorted(connect(d).execute("SELECT * FROM raw_events").fetchall(), key=repr)
    assert after == before


def test_a_part_without_a_declared_column_is_an_error_naming_it(tmp_path, populated_store):
    """The store never holds one (every part is written with the declared columns, and a
    store of another schema version is refused); if it did, the query says which file."""
    d = populated_store
    (run_dir,) = list((d / "runs").glob("run_id=*"))
    parts = sorted(run_dir.glob("events-*.parquet"))
    broken = run_dir / "events-99999.parquet"
    shutil.copy(parts[0], broken)
    pl.read_parquet(broken).drop("pkt_id").write_parquet(broken)
    con = connect(d)
    with pytest.raises(duckdb.Error, match="events-99999.parquet"):
        run_query(con, "SELECT sum(pkt_id) FROM events").fetchall()


# -- each typed query: its own connection, a private temp directory, limits ------------------

def test_temp_directory_is_private_per_connection_and_removed_at_close(populated_store, tmp_path, monkeypatch):
    from tracekit.db.query import close

    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)                 # DuckDB's default would be ./.tmp here
    a, b = connect(populated_store), connect(populated_store)
    ta = Path(a.execute("SELECT current_setting('temp_directory')").fetchone()[0])
    tb = Path(b.execute("SELECT current_setting('temp_directory')").fetchone()[0])
    assert ta.parent != tb.parent and ta.parent.is_dir() and tb.parent.is_dir()
    assert oct(ta.parent.stat().st_mode & 0o777) == "0o700"
    allowed = a.execute("SELECT current_setting('allowed_directories')").fetchone()[0]
    assert not any(str(cwd) in d for d in allowed), allowed             # not ./.tmp
    assert {Path(d.rstrip("/")) for d in allowed} == {populated_store.resolve(), ta}
    close(a)
    assert not ta.parent.exists() and tb.parent.is_dir()
    del b
    import gc
    gc.collect()
    assert not tb.parent.exists()


def test_a_query_run_is_cancelled_from_another_thread(populated_store):
    from tracekit.core.errors import TracekitError
    from tracekit.db.query import QueryRun

    long = QueryRun(populated_store, "SELECT count(*) FROM range(1000000000000) WHERE random() < 0.5",
                    lambda rel: rel.fetchall(), timeout_s=0).start()
    # another query meanwhile, on its own connection: not held up by the long one, which
    # has no timeout and so is still running when the other's answer is in
    assert QueryRun(populated_store, "SELECT 42", lambda rel: rel.fetchall(), timeout_s=0).run() == [(42,)]
    assert not long.wait(0)
    long.cancel()
    assert long.wait(300), "the cancelled query is still running"
    assert isinstance(long.error, TracekitError) and str(long.error) == "query cancelled"


def test_a_query_run_times_out(populated_store):
    from tracekit.db.query import QueryRun

    run = QueryRun(populated_store, "SELECT count(*) FROM range(1000000000000) WHERE random() < 0.5",
                   lambda rel: rel.fetchall(), timeout_s=0.5, hints={"timeout": "the page's timeout"}).start()
    assert run.wait(300)           # the query alone would take hours
    assert str(run.error) == "query stopped after 0.5 s (the page's timeout)"


@pytest.mark.parametrize("query", [
    "EXPLAIN ANALYZE SELECT 1",
    "explain\n/* c */ ANALYSE select 1",
    "EXPLAIN (analyze) SELECT 1",
    "EXPLAIN (FORMAT json,ANALYZE) SELECT 1",
    "EXPLAIN DELETE FROM runs",
    "EXPLAIN PIVOT runs ON seed",
    "EXPLAIN",
])
def test_check_query_refuses_explain_but_of_one_select(populated_store, query):
    from tracekit.core.errors import TracekitError
    from tracekit.db.query import check_query

    con = connect(populated_store)
    with pytest.raises(TracekitError, match="EXPLAIN|syntax|Parser|only queries"):
        check_query(con, query)


def test_a_one_query_connection_defers_binding_and_gives_the_same_rows(runs_of_kinds):
    """connect(for_query=...) creates its views WITH (DEFER_BINDING) where DuckDB knows it:
    the same rows as a connection whose views were bound at creation."""
    from tracekit.db.query import close
    q = "SELECT * FROM flow_stats ORDER BY ALL"
    bound = connect(runs_of_kinds)
    one = connect(runs_of_kinds, for_query=q)
    try:
        if "is_bound" in {r[0] for r in one.execute("DESCRIBE SELECT * FROM duckdb_views()").fetchall()}:
            state = "SELECT is_bound FROM duckdb_views() WHERE view_name = 'flow_stats'"
            assert one.execute(state).fetchall() == [(False,)]
            assert bound.execute(state).fetchall() == [(True,)]
        assert one.execute(q).fetchall() == bound.execute(q).fetchall()
    finally:
        close(one)
        close(bound)


def test_a_duckdb_without_deferred_binding_gets_the_views_as_written():
    """Where DuckDB does not parse WITH (DEFER_BINDING) (a DuckDB before 2.0), each view is
    created as written, and no further one is tried deferred."""
    from tracekit.db.query import _create
    ran: list[str] = []

    class Old:
        def execute(self, sql):
            if "DEFER_BINDING" in sql:
                raise duckdb.ParserException("syntax error at or near WITH")
            ran.append(sql)

    defer = [True]
    a, b = "CREATE OR REPLACE VIEW a AS SELECT 1", "CREATE OR REPLACE VIEW b AS\nSELECT 2"
    _create(Old(), a, defer)
    assert defer == [False] and ran == [a]
    _create(Old(), b, defer)
    assert ran == [a, b]
    # a macro is never deferred
    defer = [True]
    _create(Old(), "CREATE OR REPLACE MACRO m(x) AS x", defer)
    assert defer == [True] and ran[-1] == "CREATE OR REPLACE MACRO m(x) AS x"


def test_the_hier_views_declared_columns_are_the_views_own():
    """In a store without runs with hierarchical addresses, hier_flows and hier_packets are
    defined as empty relations of the columns sqlfiles.HIER_VIEWS declares: those of the
    views themselves (bound over empty raw_* views, as the sql/ files define them)."""
    from tracekit.db.catalogue import create_catalogue_table
    from tracekit.db.sqlfiles import COMPUTED_VIEWS, HIER_VIEWS, RAW_VIEWS, _raw_view_sql, computed_view_sql, sql_files
    con = duckdb.connect()
    for name, columns in RAW_VIEWS:
        con.execute(_raw_view_sql(name, columns, []))
    for table in COMPUTED_VIEWS:
        con.execute(computed_view_sql(table, []))
    create_catalogue_table(con)
    for f in sql_files():
        con.execute(f.text)
    for name, columns in HIER_VIEWS.items():
        assert [(c, t) for c, t, *_ in con.execute(f"DESCRIBE SELECT * FROM {name}").fetchall()] == list(columns), name


def test_a_store_without_hier_runs_gets_empty_hier_views(runs_of_kinds):
    from tracekit.db.query import close
    con = connect(runs_of_kinds, for_query="SELECT * FROM flow_stats")
    try:
        (sql,) = con.execute("SELECT sql FROM duckdb_views() WHERE view_name = 'hier_packets'").fetchone()
        assert "WHERE false" in sql and "hier_events" not in sql
    finally:
        close(con)
