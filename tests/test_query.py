"""The raw_* views over the store's Parquet parts (tracekit.query): they name each file and
declare their columns, so they must still read exactly what the files hold. The reference is
a plain DuckDB read of the same files by glob with union_by_name (how the views read the
store before), written out here."""
from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest

from tracekit.ingest import ingest_paths
from tracekit.query import connect, run_query, store_files
from tracekit.schema import RUNS, TABLES
from tracekit.store import Store


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
