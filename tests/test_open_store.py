"""The store stays open (issue 38): plain DuckDB and polars, without tracekit, read every table
of a store and get the rows `tracekit sql` gets.

The store has compacted runs, a run ingested after the compaction, and a compacted run removed
since (its rows are still in the compacted files). The reader code below is written as
docs/store-layout.md ("Reading without tracekit") shows it; nothing from tracekit is imported,
tracekit runs only as the `tracekit` command.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import duckdb
import polars as pl
import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_traces"
NS = shutil.which("ns") or "/usr/bin/ns"

# the tables compacted into compacted/gen-<N>/<table>.parquet (tracekit/store/compacted.py)
SMALL = ("runs", "node_addrs", "annotations", "flow_facts", "flow_run_facts")
# per table, a numeric column to sum
SUMMED = {
    "runs": "n_events", "events": "size", "wireless_events": "size", "wireless_movements": "line_no",
    "tcp_vars": "line_no", "queue_samples": "line_no", "annotations": "line_no", "node_addrs": "line_no",
    "flow_facts": "fid", "packet_facts": "size", "flow_run_facts": "sent_pkts",
}


@pytest.fixture(scope="module")
def store(tmp_path_factory, tracekit_cli) -> Path:
    """Seven runs compacted (a wired packet trace, its TCP variables and queue samples; a
    wireless one and its TCP variables; hierarchical addresses; `v` annotations when ns-2 is
    here), three ingested after, and the compacted wired packet run removed."""
    d = tmp_path_factory.mktemp("open_store")
    data = d / "store"
    first = [SAMPLES / "cbr-fairness" / "Reno-Reno-seed1", SAMPLES / "manet" / "AODV-seed1",
             ROOT / "tests" / "data" / "wired_hier.tr"]
    if os.access(NS, os.X_OK):
        proc = subprocess.run([NS, str(ROOT / "tests" / "tcl" / "ingest_wired.tcl"), "wired_annotate.tr", "annotate"],
                              cwd=d, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        first.append(d / "wired_annotate.tr")
    for args in (["ingest", *first], ["compact"], ["ingest", SAMPLES / "cbr-fairness" / "Vegas-Vegas-seed1"]):
        res = tracekit_cli(*args, data=data)
        assert res.returncode == 0, res.stderr
    res = tracekit_cli("sql", "SELECT run_id FROM runs WHERE source LIKE '%Reno-Reno-seed1/packets%'", "-f", "csv", data=data)
    assert res.returncode == 0, res.stderr
    removed = res.stdout.split()[-1]
    res = tracekit_cli("rm", removed, "--yes", data=data)
    assert res.returncode == 0, res.stderr
    return data


@pytest.fixture(scope="module")
def tables(store) -> list[str]:
    """The tables with at least one per-run file in the store."""
    names = {p.name for p in (store / "runs").glob("run_id=*/*.parquet")}
    return [t for t in SUMMED if any(n == "run.parquet" if t == "runs" else n.startswith(t + "-") for n in names)]


@pytest.fixture(scope="module")
def tracekit_answer(store, tables, tracekit_cli) -> dict[str, tuple[int, int]]:
    """(rows, sum of the table's numeric column) of each table, as `tracekit sql` answers."""
    query = " UNION ALL ".join(f"SELECT '{t}' AS t, count(*) AS n, CAST(sum({SUMMED[t]}) AS BIGINT) AS s FROM {t}"
                               for t in tables)
    res = tracekit_cli("sql", query, "-f", "json", data=store)
    assert res.returncode == 0, res.stderr
    return {r["t"]: (r["n"], r["s"]) for r in json.loads(res.stdout)}


def test_store_has_what_the_readers_must_handle(store, tables, tracekit_answer):
    gen = (store / "compacted" / "CURRENT").read_text().strip()
    compacted = json.loads((store / "compacted" / gen / "manifest.json").read_text())["run_ids"]
    live = [p.name.removeprefix("run_id=") for p in (store / "runs").glob("run_id=*")]
    assert len(set(compacted) - set(live)) == 1            # one compacted run removed
    assert len(set(live) - set(compacted)) == 3            # three ingested after compaction
    expected = {"runs", "events", "wireless_events", "wireless_movements", "tcp_vars", "queue_samples",
                "node_addrs", "flow_facts", "packet_facts", "flow_run_facts"}
    if os.access(NS, os.X_OK):
        expected.add("annotations")
    assert expected <= set(tables)
    assert all(n > 0 for n, _ in tracekit_answer.values())


# -- the readers, as the docs show them ------------------------------------------------


def per_run_glob(store: Path, table: str) -> str:
    """The per-run files of a table: run.parquet for the run records, <table>-*.parquet else."""
    name = "run.parquet" if table == "runs" else f"{table}-*.parquet"
    return f"{store}/runs/run_id=*/{name}"


def duckdb_per_run(store: Path, table: str, column: str) -> tuple[int, int]:
    """Every live run's own files (compacted or not: a compacted run keeps them)."""
    con = duckdb.connect()
    row = con.execute(f"""
        SELECT count(*), CAST(sum({column}) AS BIGINT)
        FROM read_parquet('{per_run_glob(store, table)}', hive_partitioning = true, hive_types = {{'run_id': VARCHAR}})
    """).fetchone()
    assert row is not None
    return row[0], row[1]


def duckdb_compacted(store: Path, table: str, column: str) -> tuple[int, int]:
    """The compacted file's rows of the live runs, and the own files of the runs not compacted."""
    con = duckdb.connect()
    con.execute(f"SET VARIABLE gen = '{store}/compacted/' || trim((SELECT content FROM read_text('{store}/compacted/CURRENT')), chr(10))")
    row = con.execute(f"""
        SELECT count(*), CAST(sum({column}) AS BIGINT) FROM (
            SELECT * FROM read_parquet(getvariable('gen') || '/{table}.parquet')
            WHERE run_id IN (SELECT regexp_extract(file, 'run_id=([^/]+)/', 1) FROM glob('{store}/runs/run_id=*/run.parquet'))
            UNION ALL BY NAME
            SELECT * FROM read_parquet('{per_run_glob(store, table)}', hive_partitioning = true, hive_types = {{'run_id': VARCHAR}})
            WHERE run_id NOT IN (SELECT unnest(run_ids) FROM read_json(getvariable('gen') || '/manifest.json'))
        )
    """).fetchone()
    assert row is not None
    return row[0], row[1]


def polars_per_run(store: Path, table: str, column: str) -> tuple[int, int]:
    lf = pl.scan_parquet(per_run_glob(store, table), hive_partitioning=True, hive_schema={"run_id": pl.String})
    row = lf.select(pl.len(), pl.col(column).cast(pl.Int64).sum()).collect().row(0)
    return row[0], row[1]


def polars_compacted(store: Path, table: str, column: str) -> tuple[int, int]:
    """The docs' form: the runs ingested since listed first, so only their own files are opened."""
    gen = store / "compacted" / (store / "compacted" / "CURRENT").read_text().strip()
    compacted = set(json.loads((gen / "manifest.json").read_text())["run_ids"])
    live = {p.name.removeprefix("run_id=") for p in (store / "runs").glob("run_id=*")}
    name = "run.parquet" if table == "runs" else f"{table}-*.parquet"
    since = [f for r in sorted(live - compacted) for f in sorted((store / "runs" / f"run_id={r}").glob(name))]
    lf = pl.concat([
        pl.scan_parquet(gen / f"{table}.parquet").filter(pl.col("run_id").is_in(sorted(live & compacted))),
        *([pl.scan_parquet(since, hive_partitioning=True, hive_schema={"run_id": pl.String})] if since else []),
    ])
    row = lf.select(pl.len(), pl.col(column).cast(pl.Int64).sum()).collect().row(0)
    return row[0], row[1]


READERS = {"duckdb": duckdb_per_run, "polars": polars_per_run}
COMPACTED_READERS = {"duckdb": duckdb_compacted, "polars": polars_compacted}


@pytest.mark.parametrize("engine", sorted(READERS))
def test_per_run_files_give_tracekits_rows(store, tables, tracekit_answer, engine):
    read = READERS[engine]
    assert {t: read(store, t, SUMMED[t]) for t in tables} == tracekit_answer


@pytest.mark.parametrize("engine", sorted(COMPACTED_READERS))
def test_compacted_files_and_runs_since_give_tracekits_rows(store, tables, tracekit_answer, engine):
    read = COMPACTED_READERS[engine]
    small = [t for t in tables if t in SMALL]
    assert set(small) == set(SMALL) - ({"annotations"} if "annotations" not in tables else set())
    assert {t: read(store, t, SUMMED[t]) for t in small} == {t: tracekit_answer[t] for t in small}


def test_compacted_file_alone_is_not_the_answer(store, tracekit_answer):
    """The compacted file still has the removed run and lacks the runs ingested since: read
    alone, it is wrong, and the per-run files with it count the compacted runs twice."""
    gen = (store / "compacted" / "CURRENT").read_text().strip()
    con = duckdb.connect()
    alone = con.execute(f"SELECT count(*) FROM read_parquet('{store}/compacted/{gen}/runs.parquet')").fetchone()
    both = con.execute(f"""SELECT count(*) FROM (
        SELECT run_id FROM read_parquet('{store}/compacted/{gen}/runs.parquet') UNION ALL
        SELECT run_id FROM read_parquet('{store}/runs/run_id=*/run.parquet', hive_partitioning = true))""").fetchone()
    assert alone is not None and both is not None
    assert alone[0] != tracekit_answer["runs"][0]
    assert both[0] > tracekit_answer["runs"][0]


# -- the docs' examples, run as they are written --------------------------------------


def docs_examples() -> list[tuple[str, str]]:
    """(language, code) of each fenced block of docs/store-layout.md's "Reading without
    tracekit" section."""
    text = (ROOT / "docs" / "store-layout.md").read_text()
    section = text.split("## Reading without tracekit", 1)[1]
    return re.findall(r"```(sql|python)\n(.*?)```", section, flags=re.S)


def table_read(code: str) -> str:
    """The table an example reads: from its first `<table>-*.parquet` or run(s).parquet."""
    m = re.search(r"(\w+)-\*\.parquet|(runs?)\.parquet", code)
    assert m is not None, code
    return m.group(1) or "runs"


def test_docs_examples_run_and_give_tracekits_rows(store, tracekit_answer, monkeypatch):
    """Each DuckDB and polars example of the docs, from the directory that holds store/,
    gives the rows tracekit gives. The Spark example needs pyspark and Java: it is run by
    hand, with benchmarks/read_with_spark.py (docs: "Engines tried")."""
    examples = docs_examples()
    assert {lang for lang, _ in examples} == {"sql", "python"} and len(examples) >= 4
    monkeypatch.chdir(store.parent)
    ran = 0
    for lang, code in examples:
        table = table_read(code)
        if lang == "sql":
            rows = duckdb.connect().execute(code).fetchall()     # several statements: the last one's rows
            assert len(rows) == tracekit_answer[table][0], code
            ran += 1
        elif "pyspark" not in code:
            names: dict = {}
            exec(code, names)
            frames = [v for k, v in names.items() if k == table and isinstance(v, pl.LazyFrame)]
            assert len(frames) == 1, code
            assert frames[0].select(pl.len()).collect().item() == tracekit_answer[table][0], code
            ran += 1
    assert ran >= 4
