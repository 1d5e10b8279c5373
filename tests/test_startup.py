"""What `tracekit sql` needs to start fast (issue 16): the stored columns in DuckDB's words
without Arrow (tracekit.store.columns, checked against the Arrow schemas and against what DuckDB
reads from real parts), only the views a query can name (checked against the sql/ headers
read here with a plain regex, and against a connection with every view), and no polars,
pyarrow or numpy imported on the way (read from `python -X importtime`)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tracekit.store.columns import RAW_COLUMNS, STUDY_FACTS
from tracekit.db.query import close, connect, sql_dir
from tracekit.store.schema import FACTS, RUNS, TABLES, duck_type

HEAVY = ("polars", "pyarrow", "numpy", "pandas", "pydantic")


def test_columns_are_the_arrow_schemas_in_duckdb_types():
    # the study facts are written by DuckDB at compaction, not from an Arrow schema
    # (tests/test_compacted_reads.py checks their compacted file against these columns)
    assert list(RAW_COLUMNS) == ["runs", *TABLES, *FACTS, *STUDY_FACTS]
    for name, schema in [("runs", RUNS), *TABLES.items(), *FACTS.items()]:
        assert RAW_COLUMNS[name] == tuple((f.name, duck_type(f.type)) for f in schema), name


def test_columns_are_what_duckdb_reads_from_the_parts(populated_store):
    """The declared types against DuckDB's own reading of a real part of each table present."""
    con = duckdb.connect()
    seen = 0
    for name, columns in RAW_COLUMNS.items():
        parts = sorted(populated_store.glob(f"runs/run_id=*/{'run.parquet' if name == 'runs' else name + '-*.parquet'}"))
        if not parts:
            continue
        got = [(r[0], r[1]) for r in con.execute(f"DESCRIBE SELECT * FROM read_parquet('{parts[0]}', hive_partitioning = false)").fetchall()]
        # the declared type as DuckDB spells it (it quotes struct field names)
        declared = [(c, con.execute(f"SELECT typeof(CAST(NULL AS {t}))").fetchall()[0][0]) for c, t in columns]
        assert got == declared, name
        seen += 1
    assert seen >= 2          # runs and events at least


def _uses() -> dict[str, set[str]]:
    out = {}
    for p in sql_dir().glob("*/*.sql"):
        m = re.search(r"^--\s*uses:(.*)$", p.read_text(), re.MULTILINE)
        assert m is not None, p
        out[p.stem] = {u.strip() for u in m.group(1).split(",") if u.strip()}
    return out


def _closure(name: str, uses: dict[str, set[str]]) -> set[str]:
    seen, todo = set(), [name]
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo.extend(uses.get(n, ()))
    return seen


def _defined(con) -> set[str]:
    views = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    macros = {r[0] for r in con.execute("SELECT function_name FROM duckdb_functions() WHERE function_type IN ('macro', 'table_macro') "
                                        "AND NOT internal").fetchall()}
    tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    return views | macros | tables


@pytest.mark.parametrize("view", ["flow_stats", "rtt", "runs"])
def test_a_query_gets_its_views_and_what_they_use(populated_store, view):
    uses = _uses()
    want = _closure(view, uses)
    con = connect(populated_store, for_query=f"SELECT * FROM {view.upper()} ORDER BY ALL")
    full = connect(populated_store)
    try:
        assert _defined(con) == want
        assert len(_defined(full)) > len(want)
        q = f"SELECT * FROM {view} ORDER BY ALL"
        if view == "runs":
            q = "SELECT run_id, n_events FROM runs ORDER BY ALL"
        assert con.execute(q).fetchall() == full.execute(q).fetchall()
    finally:
        close(con)
        close(full)


def test_words_in_comments_name_nothing_and_strings_do(populated_store):
    con = connect(populated_store, for_query="SELECT 1 -- FROM flow_stats\n/* rtt */")
    try:
        assert _defined(con) == set()
    finally:
        close(con)
    con = connect(populated_store, for_query="SELECT count(*) FROM query_table('flow_stats')")
    try:
        assert con.execute("SELECT count(*) FROM query_table('flow_stats')").fetchall()[0][0] > 0
    finally:
        close(con)


def _imported(args: list[str]) -> tuple[set[str], subprocess.CompletedProcess]:
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "tracekit", *args], capture_output=True, text=True, timeout=120)
    mods = {ln.split("|")[-1].strip() for ln in p.stderr.splitlines() if ln.startswith("import time:")}
    assert len(mods) > 50, p.stderr[-2000:]        # the import log was read
    return mods, p


@pytest.mark.parametrize("query", ["SELECT 1", "SELECT count(*) AS n FROM flow_stats"])
def test_the_sql_command_imports_no_dataframe_library(populated_store, query):
    mods, p = _imported(["sql", query, "--data", str(populated_store), "--format", "csv"])
    assert p.returncode == 0, p.stderr[-2000:]
    assert "duckdb" in mods and "tracekit.db.query" in mods
    assert [m for m in HEAVY if m in mods] == []
    assert p.stdout.splitlines()[0] in ("1", "n")


def test_ingest_with_paths_and_labels_imports_no_pydantic(tmp_path):
    """typer coerces a List[str] argument or option (ingest's paths, --label) through pydantic;
    tracekit's plain coercion gives typer's list without it (0.08 s of an ingest's start)."""
    trace = tmp_path / "t.tr"
    trace.write_text("+ 0.1 0 1 cbr 1000 ------- 1 0.0 1.0 0 0\n- 0.1 0 1 cbr 1000 ------- 1 0.0 1.0 0 0\n"
                     "r 0.2 0 1 cbr 1000 ------- 1 0.0 1.0 0 0\n")
    mods, p = _imported(["ingest", str(trace), "--data", str(tmp_path / "store"), "-l", "variant=Reno", "--label", "seed=3",
                         "--flow-label", "1=cbr"])
    assert p.returncode == 0, p.stderr[-2000:]
    assert "pydantic" not in mods and "tracekit.ingest.pipeline" in mods
    got = subprocess.run([sys.executable, "-m", "tracekit", "sql", "SELECT seed, n_events FROM runs",
                          "--data", str(tmp_path / "store"), "--format", "csv"], capture_output=True, text=True, timeout=60)
    assert got.stdout.splitlines()[1:] == ["3,3"], got.stdout + got.stderr


def test_help_imports_no_dataframe_library_nor_duckdb():
    mods, p = _imported(["--help"])
    assert p.returncode == 0 and "sql" in p.stdout
    assert [m for m in (*HEAVY, "duckdb") if m in mods] == []


def test_the_columns_module_imports_nothing_heavy():
    p = subprocess.run([sys.executable, "-c", "import sys, tracekit.store.columns, tracekit.store.store, tracekit.db.query; "
                        f"print([m for m in {HEAVY!r} if m in sys.modules])"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"


def _typers_own(annotation, value):
    """What typer's own (pydantic) coercion makes of value, or the exception's type name."""
    from typer._coercion import build_runtime_param, resolve_type_descriptor
    from typer.models import OptionInfo

    try:
        return build_runtime_param(resolve_type_descriptor(annotation, OptionInfo()))._coerce_value(value, param=None, ctx=None)
    except Exception as e:   # noqa: BLE001 - the error's kind is the answer
        return type(e).__name__


def test_plain_option_values_are_typers_own():
    from typing import List, Optional

    from tracekit.apps.cli import RowFormat
    from tracekit.apps.cliparams import _UNDECIDED, plain_value
    from typer.models import OptionInfo

    cases = [(int, ["0", "-3", "12", "1_000", "007", "+5", " 4", "1.0", "x", "99999999999999999999"]),
             (Optional[float], ["1.5", "-0.25", "1e400", "1e-3", "2", "inf", "nan", ".5", "5.", "0x10", "abc"]),
             (str, ["a", "", " x ", "SELECT 1"]),
             (RowFormat, ["csv", "json", "table", "CSV", "xml", ""]),
             (Optional[Path], ["a/b", "", "/tmp", "-"]),
             (List[str], [("a", "b"), ["x"], (), ("a", 1), "a", ("-l", "k=v", ""), None]),
             (Optional[List[str]], [("a",), None])]
    decided = 0
    for annotation, values in cases:
        for v in values:
            got = plain_value(annotation, OptionInfo(), v)
            if got is _UNDECIDED:
                continue
            want = _typers_own(annotation, v)
            assert (type(got), got) == (type(want), want), (annotation, v)
            decided += 1
    assert decided >= 22


def test_typos_still_get_typers_message(populated_store):
    p = subprocess.run([sys.executable, "-m", "tracekit", "sql", "SELECT 1", "--data", str(populated_store), "--threads", "x"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert "Invalid value for '--threads'" in p.stderr and "valid integer" in p.stderr


def test_a_query_that_reads_no_run_does_not_walk_the_store(populated_store):
    """A damaged run (its run.parquet gone) is named by a query that reads the runs, not by
    one that reads none."""
    run = next((populated_store / "runs").iterdir())
    (run / "run.parquet").unlink()
    args = [sys.executable, "-m", "tracekit", "sql", "--data", str(populated_store), "--format", "csv"]
    quiet = subprocess.run([*args, "SELECT 1 AS x"], capture_output=True, text=True, timeout=60)
    assert quiet.returncode == 0 and quiet.stdout.split() == ["x", "1"] and "warning" not in quiet.stderr
    loud = subprocess.run([*args, "SELECT count(*) AS n FROM runs"], capture_output=True, text=True, timeout=60)
    assert loud.returncode == 0 and loud.stdout.split() == ["n", "0"]
    assert "warning" in loud.stderr and run.name.split("=", 1)[1] in loud.stderr
