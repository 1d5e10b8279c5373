"""sql/catalogue.toml against the views it describes, and sql/'s declared dependencies against
the SQL text: every view's columns are the catalogue's list (both ways, in order), every metric
points at a real column, each file's `-- uses:` line names exactly what its SQL references, and
every metric value on real ns-2 runs passes the checks the catalogue declares."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tracekit.db import catalogue
from tracekit.core.errors import TracekitError
from tracekit.ingest.pipeline import ingest_paths
from tracekit.db.query import BASE_NAMES, _ordered, connect, sql_dir, sql_files

TCL = Path(__file__).resolve().parent / "tcl"
NS = shutil.which("ns") or "/usr/bin/ns"
needs_ns = pytest.mark.skipif(not os.access(NS, os.X_OK), reason="ns-2 (/usr/bin/ns) is not installed")

TABLE_MACRO_ARGS = {"throughput_series": "(0.5)", "flow_stats_window": "(0.0, 1.0)"}
INTERNAL = {"flow_stats_in"}     # the table macro behind flow_stats*: not a user view


def user_views():
    return [f for f in sql_files() if f.kind != "macro" and f.name not in INTERNAL]


def columns(con, f) -> list[str]:
    args = TABLE_MACRO_ARGS.get(f.name, "")
    return [d[0] for d in con.execute(f"SELECT * FROM {f.name}{args} LIMIT 0").description]


@pytest.fixture(scope="module")
def empty(tmp_path_factory):
    return connect(tmp_path_factory.mktemp("cat") / "store")


def test_every_view_has_the_catalogued_columns(empty):
    views = catalogue.views()
    for f in user_views():
        assert f.name in views, f"{f.rel}: no [views.{f.name}] in sql/catalogue.toml"
        assert columns(empty, f) == views[f.name].column_names, f"{f.name}: columns differ from the catalogue"
    assert set(views) == {f.name for f in user_views()}, "the catalogue lists views that do not exist"


def test_metrics_point_at_catalogued_columns():
    views = catalogue.views()
    raw = catalogue._read(str(catalogue.catalogue_path()))["views"]
    for m in catalogue.metrics().values():
        assert m.source_view in views, m.name
        assert m.source_column in views[m.source_view].column_names, m.name
        col = next(c for c in views[m.source_view].columns if c.name == m.source_column)
        if "columns" in raw[m.source_view]:      # not a view that borrows another's list
            assert col.metric == m.name, f"{m.source_view}.{m.source_column} should name metric {m.name}"
    # and a column that names a metric holds it: the metric's source column, in its source view
    # or in a view of a subset of its rows (wireless_flow_stats holds flow_stats' wireless rows)
    for v in views.values():
        for c in v.columns:
            if c.metric:
                assert catalogue.metric(c.metric).source_column == c.name, f"{v.name}.{c.name}"


def test_every_metric_has_what_the_ui_needs():
    for m in catalogue.metrics().values():
        assert m.title and m.unit and m.description and m.level in catalogue.LEVELS, m.name
    for name in ("pdr", "jain_index", "run_pdr"):
        m = catalogue.metric(name)
        assert (m.min, m.max) == (0.0, 1.0), name
    for name in ("throughput_kbps", "goodput_kbps", "active_throughput_kbps", "onperiod_throughput_kbps"):
        assert catalogue.metric(name).min == 0.0
        assert catalogue.metric(name).check(-1.0) is not None and catalogue.metric(name).check(None) is None
    assert catalogue.metric("in_flight_pkts").check(None) is not None       # declared not nullable


def _code(text: str) -> str:
    """The SQL without comments and string literals."""
    text = re.sub(r"--[^\n]*", " ", text)
    return re.sub(r"'(?:[^']|'')*'", "''", text)


def test_uses_lines_name_exactly_what_the_sql_references():
    files = sql_files()
    names = {f.name: f.kind for f in files}
    for f in files:
        code = _code(f.text)
        used = set()
        for name, kind in names.items():
            if name == f.name:
                continue
            pat = rf"\b{name}\s*\(" if kind != "view" else rf"\b{name}\b(?!\s*\()"
            if re.search(pat, code):
                used.add(name)
        used |= {b for b in BASE_NAMES if re.search(rf"\b{b}\b", code)}
        assert set(f.uses) == used, f"{f.rel}: '-- uses:' says {sorted(f.uses)}, the SQL uses {sorted(used)}"


def test_files_load_in_dependency_order():
    seen = set(BASE_NAMES)
    for f in sql_files():
        assert set(f.uses) <= seen, f"{f.rel} loads before {sorted(set(f.uses) - seen)}"
        seen.add(f.name)


def _tree(tmp_path: Path, files: dict) -> str:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return str(tmp_path)


def test_a_cycle_or_an_unknown_name_is_a_one_line_error(tmp_path):
    cyc = _tree(tmp_path / "c", {
        "metrics/a.sql": "-- a: x\n-- uses: b\nCREATE OR REPLACE VIEW a AS SELECT * FROM b",
        "metrics/b.sql": "-- b: x\n-- uses: a\nCREATE OR REPLACE VIEW b AS SELECT * FROM a",
    })
    with pytest.raises(TracekitError, match=r"cycle: (a -> b -> a|b -> a -> b)$"):
        _ordered(cyc, ())
    unknown = _tree(tmp_path / "u", {"metrics/a.sql": "-- a: x\n-- uses: nope\nCREATE OR REPLACE VIEW a AS SELECT 1"})
    with pytest.raises(TracekitError, match=r"^sql/metrics/a.sql: uses unknown view or macro 'nope'$"):
        _ordered(unknown, ())
    bare = _tree(tmp_path / "n", {"staging/a.sql": "-- a: x\nCREATE OR REPLACE VIEW a AS SELECT 1"})
    with pytest.raises(TracekitError, match=r"no '-- uses:' header line"):
        _ordered(bare, ())
    ok = _tree(tmp_path / "o", {
        "metrics/z.sql": "-- z\n-- uses: a\nCREATE OR REPLACE VIEW z AS SELECT * FROM a",
        "staging/a.sql": "-- a\n-- uses: raw_events\nCREATE OR REPLACE VIEW a AS SELECT * FROM raw_events",
    })
    assert [f.name for f in _ordered(ok, ())] == ["a", "z"]


def test_sql_dir_has_only_layer_folders():
    root = sql_dir()
    assert not list(root.glob("*.sql")), "views live in sql/<layer>/, not at the top"
    assert {p.name for p in root.iterdir() if p.is_dir()} <= {"staging", "intermediate", "metrics", "macros"}


# ---------------------------------------------------------------------------------------
# Every metric value of real ns-2 runs (wired, a starved flow with a CBR on-period, wireless)
# passes its catalogued checks, and every catalogued metric is seen with a value.

def _run(script: str, out: Path, *args: str) -> Path:
    proc = subprocess.run([NS, str(TCL / script), *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


@needs_ns
def test_metric_values_on_real_runs_pass_their_checks(tmp_path):
    data = tmp_path / "store"
    runs = [
        (_run("metrics_dumbbell.tcl", tmp_path / "db.tr", str(tmp_path / "db.tr"), "1"),
         {"scenario": "dumbbell", "seed": "1"}, {1: "Reno", 2: "Vegas", 3: "Sack", 4: "CBR"}),
        (_run("metrics_starved.tcl", tmp_path / "st.tr", str(tmp_path / "st.tr")),
         {"scenario": "starved", "seed": "1", "stop_s": "5.0", "cbr_start": "0.5", "cbr_stop": "4.0"},
         {1: "Reno", 2: "CBR", 3: "Ping"}),
        (_run("wireless.tcl", tmp_path / "wl.tr", "new", "AODV", str(tmp_path / "wl.tr")),
         {"scenario": "manet", "seed": "1"}, {}),
    ]
    for path, labels, names in runs:
        (res,) = ingest_paths(data, [path], labels=labels, flow_labels=names)
        assert res.status == "added", res.message
    con = connect(data)
    got = con.execute("SELECT metric, value FROM run_metrics").fetchall()
    problems = [p for m, v in got if (p := catalogue.metric(m).check(v))]
    assert not problems, problems[:10]
    seen = {m for m, v in got if v is not None}
    assert seen == set(catalogue.metrics()), f"never seen with a value: {set(catalogue.metrics()) - seen}"
    # the views themselves, not only run_metrics: every flow-level metric column of flow_stats
    for m in catalogue.metrics("flow").values():
        args = TABLE_MACRO_ARGS.get(m.source_view, "")
        for (v,) in con.execute(f"SELECT {m.source_column} FROM {m.source_view}{args}").fetchall():
            assert m.check(v) is None, (m.name, v)


def test_docs_metric_table_is_current():
    """docs/metrics.md is generated from the catalogue: no second list of metrics to drift."""
    doc = Path(__file__).resolve().parents[1] / "docs" / "metrics.md"
    assert doc.read_text() == catalogue.metrics_markdown(), "run: python -m tracekit.db.catalogue > docs/metrics.md"
