"""Reading a compacted store (tracekit.store.compacted, tracekit.db.query.read_plan): every
view answers as over the same store never compacted, with runs ingested and removed since
compaction, damaged files, and ingests, compactions and queries running at once."""
from __future__ import annotations

import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tracekit.db.compaction import compact, read_manifest
from tracekit.db.query import connect, read_plan
from tracekit.db.sqlfiles import BASE_NAMES, sql_files
from tracekit.ingest.pipeline import ingest_paths
from tracekit.store.columns import STUDY_FACTS
from tracekit.store.compacted import SMALL_TABLES, current_generation
from tracekit.store.store import Store

# real ns-2 traces of the session fixtures (tests/conftest.py), small: wired (one with
# annotations), a tcpvar trace, queue monitors, RED, wireless; two more ingested after compaction
FIRST = (("ns_traces", "wired_plain"), ("ns_traces", "wired_annotate"), ("ns_traces", "tcpvar"),
         ("ns_traces", "qmon_samples"), ("ns_traces", "red"), ("wild_traces", "wl_annot_new"))
LATER = (("ns_traces", "wired_tcphdr"), ("wild_traces", "cwnd_tcpvar"))


def _views() -> list[str]:
    # the study facts are stored by compaction alone: their raw_ view is empty before it (the
    # view over it, run_metric_facts, is compared)
    names = sorted(n for n in BASE_NAMES if n.startswith("raw_") and n[4:] not in STUDY_FACTS)
    return names + [f.name for f in sql_files() if f.kind == "view"]


def _norm(v):
    if isinstance(v, float):
        return None if math.isnan(v) else float(f"{v:.9g}")      # parallel sums differ in the last bits
    if isinstance(v, list):
        return tuple(_norm(x) for x in v)
    if isinstance(v, dict):
        return tuple((k, _norm(x)) for k, x in v.items())
    return v


def _answers(store: Path) -> dict[str, list]:
    con = connect(store)
    try:
        return {v: sorted((tuple(_norm(x) for x in r) for r in con.execute(f"SELECT * FROM {v}").fetchall()), key=repr)
                for v in _views()}
    finally:
        con.close()


def _assert_same(a: dict, b: dict) -> None:
    for v in a:
        assert a[v] == b[v], f"{v}: {len(a[v])} rows uncompacted, {len(b[v])} compacted"


@pytest.fixture(scope="module")
def traces(ns_traces, wild_traces) -> dict[str, list[Path]]:
    got = {"ns_traces": ns_traces, "wild_traces": wild_traces}
    return {"first": [got[a][b] for a, b in FIRST], "later": [got[a][b] for a, b in LATER]}


@pytest.fixture(scope="module")
def _template(tmp_path_factory, traces) -> Path:
    d = tmp_path_factory.mktemp("compacted-reads") / "store"
    res = ingest_paths(d, traces["first"], labels={"study": "first"})
    assert [r.status for r in res] == ["added"] * len(FIRST)
    return d


@pytest.fixture
def pair(_template, tmp_path) -> tuple[Path, Path]:
    """Two copies of one store; the second compacted."""
    a, b = tmp_path / "plain", tmp_path / "compacted"
    shutil.copytree(_template, a)
    shutil.copytree(_template, b)
    compact(Store(b))
    return a, b


def test_compacted_reads_come_from_the_compacted_files(pair):
    _, b = pair
    vf = read_plan(Store(b), {"raw_runs", "raw_flow_facts", "raw_annotations"})
    assert set(vf.compacted) >= {"runs", "flow_facts", "flow_run_facts"}
    # no per-run file of a small table is read: they come from the compacted files
    assert not any(vf.files.get(t) for t in SMALL_TABLES), {t: vf.files.get(t) for t in SMALL_TABLES}
    assert not any(vf.pending.values())


def test_the_compacted_study_facts_have_the_declared_columns(pair):
    import duckdb

    from tracekit.store.columns import RAW_COLUMNS

    _, b = pair
    gen = current_generation(b)
    assert gen is not None
    con = duckdb.connect()
    for table in STUDY_FACTS:
        got = con.execute(f"DESCRIBE SELECT * FROM read_parquet('{gen / (table + '.parquet')}')").fetchall()
        declared = [(c, con.execute(f"SELECT typeof(CAST(NULL AS {t}))").fetchall()[0][0]) for c, t in RAW_COLUMNS[table]]
        assert [(r[0], r[1]) for r in got] == [*declared, ("run_id", "VARCHAR")], table
        assert con.execute(f"SELECT count(*) FROM read_parquet('{gen / (table + '.parquet')}')").fetchall()[0][0] > 0


def test_every_view_answers_as_uncompacted(pair):
    a, b = pair
    want = _answers(a)
    assert sum(1 for v in want.values() if v) > 30        # the store exercises most views
    _assert_same(want, _answers(b))


def test_runs_ingested_and_removed_since_compaction(pair, traces):
    a, b = pair
    before = {p.name for p in (a / "runs").iterdir()}
    res = ingest_paths(a, traces["later"], labels={"study": "later"})
    assert [r.status for r in res] == ["added"] * len(LATER)
    for p in (a / "runs").iterdir():           # the same runs (their records hold when they were ingested)
        if p.name not in before:
            shutil.copytree(p, b / "runs" / p.name)
    manifest = read_manifest(Store(b))
    assert manifest is not None
    gone = sorted(manifest["run_ids"])[0]          # a compacted run
    for d in (a, b):
        subprocess.run([sys.executable, "-m", "tracekit", "rm", gone, "--yes", "--data", str(d)], check=True,
                       capture_output=True)
    vf = read_plan(Store(b), {"raw_runs"})
    assert vf.exclude == [gone] and len(vf.files["runs"]) == len(LATER)
    _assert_same(_answers(a), _answers(b))


def _labels_of(store: Path, **kw) -> dict[str, str | None]:
    con = connect(store, **kw)
    try:
        return dict(con.execute("SELECT run_id, labels['study'] FROM runs").fetchall())
    finally:
        con.close()


def test_a_compacted_run_relabelled_or_ingested_again_is_read_as_it_is_now(pair, traces):
    a, b = pair
    relabel, again = traces["first"][0], traces["first"][1]
    # new labels for a compacted run; another one removed and ingested with other labels
    # (an on-period too: run_metric_facts, which compaction stores, depends on it)
    (r,) = ingest_paths(b, [relabel], labels={"study": "relabelled", "cbr_start": "0.2", "cbr_stop": "0.9"})
    assert r.status == "duplicate" and r.run_id is not None
    again_id = ingest_paths(b, [again], labels={"study": "first"})[0].run_id
    assert again_id is not None
    subprocess.run([sys.executable, "-m", "tracekit", "rm", again_id, "--yes", "--data", str(b)], check=True,
                   capture_output=True)
    assert ingest_paths(b, [again], labels={"study": "again"})[0].status == "added"
    # the plain store: the same run files, never compacted
    shutil.rmtree(a / "runs")
    shutil.copytree(b / "runs", a / "runs")
    for kw in ({}, {"run_ids": [r.run_id, again_id]}):
        got = _labels_of(b, **kw)
        assert got[r.run_id] == "relabelled" and got[again_id] == "again", kw
        assert got == {k: v for k, v in _labels_of(a).items() if k in got}
    want = _answers(a)
    assert any(row[0] == r.run_id and row[6] == "onperiod_flow_stats" for row in want["run_metric_facts"])
    _assert_same(want, _answers(b))
    # the next compaction covers the changed records and drops their markers; the one after
    # takes the study facts of the previous generation
    for _ in range(2):
        compact(Store(b))
        assert not list((b / "compacted" / "changed").iterdir())
        assert _labels_of(b) == _labels_of(a)
        vf = read_plan(Store(b), {"raw_runs", "raw_run_metric_facts"})
        assert not vf.files.get("runs") and not vf.exclude and not vf.pending["run_metric_facts"]
        _assert_same(want, _answers(b))


def test_run_ids_selection_over_compacted_runs(pair):
    a, b = pair
    ids = sorted(p.name[7:] for p in (a / "runs").iterdir())[1:3]
    for q in ("SELECT run_id, count(*) FROM flow_stats GROUP BY ALL", "SELECT run_id FROM runs",
              "SELECT run_id, count(*) FROM events GROUP BY ALL"):
        got = [sorted(connect(d, run_ids=ids).execute(q).fetchall()) for d in (a, b)]
        assert got[0] == got[1] and {r[0] for r in got[0]} <= set(ids), q


def test_damaged_compacted_file_is_left_out_with_one_warning(pair, capfd):
    a, b = pair
    gen = current_generation(b)
    assert gen is not None
    f = gen / "flow_facts.parquet"
    with open(f, "r+b") as fh:
        fh.truncate(f.stat().st_size - 10)
    import tracekit.db.query as q

    q._warned_generation.clear()
    got = connect(b).execute("SELECT count(*), sum(rx_bytes) FROM flow_stats").fetchall()
    assert got == connect(a).execute("SELECT count(*), sum(rx_bytes) FROM flow_stats").fetchall()
    err = capfd.readouterr().err
    assert err.count("compacted files not used") == 1 and "flow_facts.parquet" in err
    out = subprocess.run([sys.executable, "-m", "tracekit", "verify", "--data", str(b)], capture_output=True, text=True)
    assert out.returncode == 1 and "flow_facts.parquet" in out.stdout and "tracekit compact" in out.stdout
    compact(Store(b))                                 # the next compaction writes a whole generation
    assert subprocess.run([sys.executable, "-m", "tracekit", "verify", "--data", str(b)], capture_output=True).returncode == 0


def test_damaged_per_packet_file_of_a_compacted_run(pair, capfd):
    a, b = pair
    run_dir = next(p for p in sorted((b / "runs").iterdir()) if list(p.glob("events-*.parquet")))
    victim = sorted(run_dir.glob("events-*.parquet"))[0]
    with open(victim, "r+b") as fh:
        fh.truncate(victim.stat().st_size // 2)
    shutil.rmtree(a / "runs" / run_dir.name)                # the plain store without that run
    # a query of per-packet data skips the damaged run whole, with a warning naming it
    q = "SELECT run_id, count(*) FROM events GROUP BY ALL"
    assert sorted(connect(b).execute(q).fetchall()) == sorted(connect(a).execute(q).fetchall())
    assert f"run {run_dir.name[7:]} is damaged ({victim.name}" in capfd.readouterr().err


def test_views_over_many_files_read_them_in_lists_of_list_chunk(pair, monkeypatch):
    """A raw_* view over more files than LIST_CHUNK reads them as a UNION ALL of lists: the
    same rows as one list."""
    import tracekit.db.sqlfiles as sqlfiles

    a, _ = pair
    q = "SELECT * FROM raw_runs UNION ALL BY NAME SELECT * FROM raw_events"
    want = sorted(map(repr, connect(a).execute(q).fetchall()))
    monkeypatch.setattr(sqlfiles, "LIST_CHUNK", 2)
    con = connect(a)
    (sql,) = con.execute("SELECT sql FROM duckdb_views() WHERE view_name = 'raw_runs'").fetchall()[0]
    assert sql.count("read_parquet") >= 3
    assert sorted(map(repr, con.execute(q).fetchall())) == want


def _tiny_trace(path: Path, k: int) -> None:
    """A wired trace of one CBR packet sent 0 -> 1 and received, at a time of its own (its
    own content, so its own run)."""
    t = 0.1 + k / 1000
    path.write_text(f"+ {t:.6f} 0 1 cbr 210 ------- 1 0.0 1.0 0 {k}\n"
                    f"- {t:.6f} 0 1 cbr 210 ------- 1 0.0 1.0 0 {k}\n"
                    f"r {t + 0.01:.6f} 0 1 cbr 210 ------- 1 0.0 1.0 0 {k}\n")


def test_ingest_compact_and_query_at_once_lose_and_duplicate_nothing(tmp_path):
    """Ingests (one process per trace), compactions and queries run at the same time: every
    query sees each run once, never fewer runs than a query before it, and at the end every
    run ingested is there once, compacted or not."""
    import threading

    store = tmp_path / "store"
    n = 24
    traces = []
    for k in range(n):
        traces.append(tmp_path / f"t{k:03d}.tr")
        _tiny_trace(traces[-1], k)
    tk = [sys.executable, "-m", "tracekit"]
    subprocess.run([*tk, "ingest", str(traces[0]), "--data", str(store)], check=True, capture_output=True)
    done = threading.Event()
    errors: list[str] = []

    def ingest():
        for t in traces[1:]:
            r = subprocess.run([*tk, "ingest", str(t), "--data", str(store)], capture_output=True, text=True)
            if r.returncode != 0:
                errors.append(f"ingest: {r.stderr}")
        done.set()

    def compactions():
        while not done.is_set():
            r = subprocess.run([*tk, "compact", "--data", str(store)], capture_output=True, text=True)
            if r.returncode != 0:
                errors.append(f"compact: {r.stderr}")

    seen: list[int] = []

    def queries():
        while not done.is_set():
            con = connect(store)
            try:
                runs, distinct, flows = con.execute(
                    "SELECT count(*), count(DISTINCT run_id), (SELECT count(*) FROM flow_stats) FROM runs").fetchall()[0]
            finally:
                con.close()
            if runs != distinct or flows != runs:
                errors.append(f"query: {runs} run rows, {distinct} runs, {flows} flows")
            if seen and runs < seen[-1]:
                errors.append(f"query: {runs} runs after {seen[-1]}")
            seen.append(runs)

    threads = [threading.Thread(target=f) for f in (ingest, compactions, queries)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=600)
    assert not errors, errors[:3]
    assert len(seen) >= 3 and current_generation(store) is not None
    compact(Store(store))
    for d in (store,):
        con = connect(d)
        assert con.execute("SELECT count(*), count(DISTINCT run_id) FROM runs").fetchone() == (n, n)
        assert con.execute("SELECT count(*), sum(rx_bytes) FROM flow_stats").fetchone() == (n, 210 * n)


def test_a_generation_of_another_layout_is_never_read(pair, capfd):
    """A compacted generation written by another version of tracekit compact (its manifest's
    layout) is not read: one warning, the per-run files answer, and tracekit compact
    upgrades the store in place."""
    import json

    import tracekit.db.query as q

    a, b = pair
    gen = current_generation(b)
    assert gen is not None
    m = json.loads((gen / "manifest.json").read_text())
    m["layout"] = 0
    (gen / "manifest.json").write_text(json.dumps(m))
    q._warned_generation.clear()
    vf = read_plan(Store(b), {"raw_runs", "raw_flow_facts"})
    assert vf.compacted == {} and len(vf.files["runs"]) == len(FIRST)
    assert "written by another version of tracekit compact" in capfd.readouterr().err
    compact(Store(b))
    assert set(read_plan(Store(b), {"raw_runs"}).compacted) >= {"runs"}
    assert connect(b).execute("SELECT count(*) FROM flow_stats").fetchall() == connect(a).execute(
        "SELECT count(*) FROM flow_stats").fetchall()
