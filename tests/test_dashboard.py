"""The Streamlit dashboard, page by page, with Streamlit's AppTest on a store of real ns-2
runs: every page renders without an exception, and the numbers it shows are the ones the
views hold, queried here independently with tracekit.db.query.connect."""
from __future__ import annotations

import base64
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

from conftest import until  # noqa: E402
from tracekit.db.query import connect  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
APP = REPO / "dashboards" / "app.py"
NS = shutil.which("ns") or "/usr/bin/ns"
PAGES = ["overview", "compare", "sweep", "timeseries", "fairness", "throughput_delay", "distributions", "links", "sql"]


FID0 = "dumbbell-fid0"   # the scenario label of the runs whose two CBR flows share fid 0


def make_store(d: Path) -> Path:
    """25 short simulations: cbr-variants Reno/Vegas x CBR 3/9 Mb/s, cbr-fairness Reno-Vegas x
    CBR 3/9 and Reno-Reno at CBR 3, queue-influence DropTail/RED, manet AODV/DSDV/DSR; two seeds each, 2-15
    simulated seconds; one old-format manet run (AODV, seed 1: its flows have no fid); and
    tests/tcl/metrics_dumbbell.tcl with seeds 1 and 2, ingested as scenario dumbbell-fid0
    (Reno, Vegas, Sack and CBR flows, and two CBR flows that both keep fid 0, named CBR0)."""
    if not os.access(NS, os.X_OK):
        pytest.skip("ns-2 (/usr/bin/ns) is not installed")
    from tracekit.experiments.sweep import plan_sweep, run_sims

    specs = plan_sweep("cbr-variants", [("variant", ["Reno", "Vegas"]), ("cbr_rate_mbps", ["3", "9"])],
                       [1, 2], {"duration": "2"})
    specs += plan_sweep("cbr-fairness", [("pair", ["Reno-Vegas"]), ("cbr_rate_mbps", ["3", "9"])],
                        [1, 2], {"duration": "2"})
    specs += plan_sweep("cbr-fairness", [("pair", ["Reno-Reno"]), ("cbr_rate_mbps", ["3"])], [1, 2], {"duration": "2"})
    specs += plan_sweep("queue-influence", [("queue", ["DropTail", "RED"])], [1, 2],
                        {"duration": "3", "cbr_start": "1", "cbr_stop": "2"})
    # wireless: the MANET scenario under each routing protocol (fewer runs than cbr-variants,
    # which stays the sidebar's default scenario)
    specs += plan_sweep("manet", [("routing", ["AODV", "DSDV", "DSR"])], [1, 2],
                        {"duration": "15", "nodes": "10", "width_m": "500", "height_m": "500"})
    specs += plan_sweep("manet", [("routing", ["AODV"])], [1],
                        {"duration": "15", "nodes": "10", "width_m": "500", "height_m": "500", "trace_format": "old"})
    results = run_sims(specs, d, jobs=2)
    assert [r.status for r in results] == ["done"] * len(specs), [r.error for r in results if r.error]
    # a RED trace (ave_, curq_ of a Queue/RED link: tests/tcl/ingest_qmon.tcl), as a trace of
    # the queue-influence scenario (no bundled scenario writes one)
    subprocess.run([NS, str(REPO / "tests" / "tcl" / "ingest_qmon.tcl"), str(d.parent)], check=True,
                   capture_output=True, cwd=d.parent)
    subprocess.run([sys.executable, "-m", "tracekit", "ingest", str(d.parent / "red.tr"), "--data", str(d),
                    "--label", "scenario=queue-influence"], check=True, capture_output=True)
    for seed in (1, 2):
        trace = d.parent / f"fid0-{seed}.tr"
        subprocess.run([NS, str(REPO / "tests" / "tcl" / "metrics_dumbbell.tcl"), str(trace), str(seed)],
                       check=True, capture_output=True, cwd=d.parent)
        subprocess.run([sys.executable, "-m", "tracekit", "ingest", str(trace), "--data", str(d),
                        "--label", f"scenario={FID0}", "--label", f"seed={seed}",
                        "--flow-label", "0=CBR0", "--flow-label", "1=Reno", "--flow-label", "2=Vegas",
                        "--flow-label", "3=Sack", "--flow-label", "4=CBR"], check=True, capture_output=True)
    return d


@pytest.fixture(scope="session")
def dash_store(tmp_path_factory) -> Path:
    return make_store(tmp_path_factory.mktemp("dash") / "store")


@pytest.fixture(scope="session")
def con(dash_store):
    c = connect(dash_store)
    yield c
    c.close()


@pytest.fixture
def app(dash_store, monkeypatch):
    """The app on page `name`, after the sidebar's `scenario` choice."""
    monkeypatch.setenv("TRACEKIT_DATA", str(dash_store))

    def open_page(name: str = "overview", scenario: str | None = None) -> AppTest:
        at = AppTest.from_file(str(APP), default_timeout=180).run()
        assert not at.exception, at.exception[0].message
        if scenario:
            at.sidebar.selectbox(key="scenario").set_value(scenario).run()
        if name != "overview":
            at.switch_page(f"tk_pages/{name}.py").run()
        assert not at.exception, "\n".join(e.message + "\n" + "\n".join(e.stack_trace[-5:]) for e in at.exception)
        return at

    return open_page


def charts(at: AppTest) -> list[dict]:
    return [{"spec": json.loads(c.proto.spec), "config": json.loads(c.proto.config)} for c in at.get("plotly_chart")]


def frame(at: AppTest, *columns: str):
    """The page's dataframe that has these columns."""
    for d in at.dataframe:
        if set(columns) <= set(d.value.columns):
            return d.value
    raise AssertionError(f"no table with columns {columns}: {[list(d.value.columns) for d in at.dataframe]}")


def arr(v) -> np.ndarray:
    """A plotly JSON array: a list or plotly's base64 typed array {'dtype', 'bdata'}."""
    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
    return np.asarray(v, dtype=float)


def close(a, b) -> bool:
    if a is None or b is None or (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
        return (a is None or a != a) and (b is None or b != b)
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)


# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_with_charts(app, page):
    at = app(page)
    figs = charts(at)
    assert figs, f"{page}: no plotly chart"
    for f in figs:
        layout = f["spec"]["layout"]
        titled = [layout[k]["title"]["text"] for k in layout if k.startswith(("xaxis", "yaxis"))
                  and layout[k].get("title", {}).get("text")]
        assert titled, f"{page}: a chart without axis titles"
        opts = f["config"]["toImageButtonOptions"]
        assert opts["format"] == "png" and opts["filename"]
    assert at.main.get("download_button"), f"{page}: no CSV download"   # the sidebar has Download report


@pytest.mark.slow
@pytest.mark.parametrize("scenario", ["cbr-fairness", "queue-influence", FID0])
@pytest.mark.parametrize("page", PAGES[:-1])
def test_pages_render_for_other_scenarios_and_one_seed(app, page, scenario):
    at = app("overview", scenario)
    at.sidebar.selectbox(key=f"seed-{scenario}").set_value(1).run()
    at.switch_page(f"tk_pages/{page}.py").run()
    assert not at.exception, at.exception[0].message


def test_overview_shows_flow_stats_with_names(app, con):
    at = app("overview")
    shown = frame(at, "run_id", "fid", "name", "throughput_kbps")
    want = con.sql("SELECT s.* FROM flow_stats s JOIN runs r USING (run_id) "
                   "WHERE r.scenario = 'cbr-variants' AND s.name IN ('Reno', 'Vegas')").df()
    assert len(shown) == len(want) == 8
    merged = shown.merge(want, on=["run_id", "fid"], suffixes=("", "_view"))
    assert len(merged) == len(want)
    for col in ("throughput_kbps", "goodput_kbps", "p95_delay_ms", "pdr", "drop_rate", "sent_pkts"):
        assert all(close(a, b) for a, b in zip(merged[col], merged[f"{col}_view"])), col
    assert (merged["name"] == merged["name_view"]).all()
    assert at.metric[0].value == str(con.sql("SELECT count(*) FROM runs").fetchall()[0][0])


def test_compare_shows_replication_stats(app, con):
    at = app("compare")
    rep = con.sql("SELECT * FROM replication_stats WHERE scenario = 'cbr-variants' "
                  "AND config LIKE '%cbr_rate_mbps=3.0,%' AND (name IS NULL OR name <> 'CBR')").df()
    table = frame(at, "flow", "metric", "mean", "ci95_half_width", "n_runs", "config")
    assert set(table["config"]) == set(rep["config"])   # pinned to the first CBR rate, 3 Mb/s
    got = table[table["metric"] == "throughput_kbps"].merge(
        rep[rep["metric"] == "throughput_kbps"], left_on=["config", "flow"], right_on=["config", "name"])
    assert len(got) == len(rep[(rep["metric"] == "throughput_kbps")]) >= 2
    assert all(close(a, b) for a, b in zip(got["mean_x"], got["mean_y"]))
    assert all(close(a, b) for a, b in zip(got["ci95_half_width_x"], got["ci95_half_width_y"]))
    # the verdict: one line per variant, with the view's mean (markdown: it wraps at 800 px)
    tp = rep[(rep["metric"] == "throughput_kbps")]
    lines = next(m.value for m in at.markdown if m.value.startswith("- **")).splitlines()
    assert sorted(ln.split("**")[1] for ln in lines) == sorted(tp["name"])
    for n, m in zip(tp["name"], tp["mean"]):
        assert any(ln.startswith(f"- **{n}**: {m:,.1f} kbit/s") for ln in lines), (n, m, lines)
    # bars: the throughput chart's bar heights and whiskers are those means and half-widths
    fig = next(f["spec"] for f in charts(at) if f["spec"]["layout"]["title"]["text"].startswith("Throughput"))
    heights = sorted(float(y) for t in fig["data"] for y in arr(t["y"]))
    assert np.allclose(heights, sorted(tp["mean"]))


def test_sweep_lines_are_replication_means(app, con):
    at = app("sweep")
    table = frame(at, "variant", "cbr_rate_mbps", "mean", "ci95_half_width", "config")
    rep = con.sql("SELECT config, name, mean, ci95_half_width FROM replication_stats "
                  "WHERE scenario = 'cbr-variants' AND metric = 'throughput_kbps' AND name <> 'CBR'").df()
    got = table.merge(rep, left_on=["config", "variant"], right_on=["config", "name"])
    assert len(got) == len(rep) == len(table) >= 4
    assert all(close(a, b) for a, b in zip(got["mean_x"], got["mean_y"]))
    fig = charts(at)[0]["spec"]
    assert fig["layout"]["xaxis"]["title"]["text"] == "cbr_rate_mbps (Mb/s)"
    assert fig["layout"]["yaxis"]["title"]["text"] == "Throughput (kbit/s)"
    means = [t for t in fig["data"] if t.get("fill") != "toself" and not t["name"].endswith(" (runs)")]
    plotted = np.concatenate([arr(t["y"]) for t in means])
    assert np.allclose(sorted(plotted), sorted(rep["mean"]))


def test_time_series_are_the_views(app, con):
    at = app("timeseries")
    shown = frame(at, "run_id", "shown_as", "sim_id")
    assert 1 <= len(shown) <= 4
    figs = {f["spec"]["layout"]["title"]["text"]: f["spec"] for f in charts(at)}
    tp = next(v for k, v in figs.items() if k.startswith("Throughput per flow"))
    ids = list(shown["run_id"])
    series = con.execute("SELECT run_id, fid, kbps FROM throughput_series(0.5) WHERE list_contains(?, run_id) "
                         "AND name IN ('Reno', 'Vegas') ORDER BY run_id, fid, t", [ids]).df()
    want = sorted(tuple(g["kbps"]) for _, g in series.groupby(["run_id", "fid"]))
    got = sorted(tuple(float(v) for v in arr(t["y"])) for t in tp["data"])
    assert len(got) == len(want) and all(np.allclose(a, b) for a, b in zip(got, want))
    # cwnd_: the cwnd trace run of the same simulation (sim_id), held to the end of the run
    cw = next(v for k, v in figs.items() if k.startswith("Congestion window"))
    tcpvar = con.execute("SELECT r.run_id FROM runs r WHERE r.trace_kind = 'tcpvar' AND r.labels['sim_id'] IN "
                         "(SELECT labels['sim_id'] FROM runs WHERE list_contains(?, run_id))", [ids]).df()["run_id"]
    cwnd = con.execute("SELECT value FROM tcp_vars WHERE var = 'cwnd_' AND list_contains(?, run_id)",
                       [list(tcpvar)]).df()["value"]
    plotted = np.concatenate([arr(t["y"]) for t in cw["data"]])
    assert len(plotted) == len(cwnd) + len(cw["data"])   # plus one closing point per flow
    assert set(np.round(plotted, 6)) == set(np.round(cwnd, 6))
    assert cw["layout"]["yaxis"]["title"]["text"] == "Congestion window (packets)"
    q = next(v for k, v in figs.items() if k.startswith("Queue length"))
    assert sum(len(arr(t["y"])) for t in q["data"]) == con.execute(
        "SELECT count(*) FROM queue_samples WHERE run_id IN (SELECT run_id FROM runs WHERE trace_kind = "
        "'queue_monitor' AND labels['sim_id'] IN (SELECT labels['sim_id'] FROM runs WHERE list_contains(?, run_id)))",
        [ids]).fetchall()[0][0]


def test_time_series_bin_width(app, con):
    at = app("timeseries")
    at.select_slider(key="ts-bin").set_value(1.0).run()
    assert not at.exception
    ids = list(frame(at, "run_id", "shown_as")["run_id"])
    tp = next(f["spec"] for f in charts(at) if f["spec"]["layout"]["title"]["text"].startswith("Throughput per flow (1 s"))
    n = con.execute("SELECT count(*) FROM throughput_series(1.0) WHERE list_contains(?, run_id) "
                    "AND name IN ('Reno', 'Vegas')", [ids]).fetchall()[0][0]
    assert sum(len(arr(t["y"])) for t in tp["data"]) == n


def test_fairness_shows_jain_and_throughput(app, con):
    at = app("fairness", "cbr-fairness")
    table = frame(at, "pairing", "flow", "metric", "mean", "ci95_half_width", "config")
    rep = con.sql("SELECT config, name, fid, metric, mean, ci95_half_width FROM replication_stats "
                  "WHERE scenario = 'cbr-fairness' AND metric IN ('jain_index', 'throughput_kbps') "
                  "AND (name IS NULL OR name IN ('Reno', 'Vegas')) AND mean IS NOT NULL").df()
    assert len(table) == len(rep) >= 6
    jain = table[table["metric"] == "jain_index"].merge(rep[rep["metric"] == "jain_index"], on="config")
    assert len(jain) == len(rep[rep["metric"] == "jain_index"]) >= 2
    assert all(close(a, b) for a, b in zip(jain["mean_x"], jain["mean_y"]))
    assert set(table["pairing"]) == {"Reno-Vegas", "Reno-Reno"}
    titles = [f["spec"]["layout"]["title"]["text"] for f in charts(at)]
    assert any("Jain" in t for t in titles) and any("throughput" in t for t in titles)
    # the throughput chart shows both pairings: its title names neither alone (issue 15)
    tp_title = next(t for t in titles if t.startswith("Each flow's throughput"))
    assert tp_title.startswith("Each flow's throughput in each of the 2 pairings"), tp_title
    at.sidebar.multiselect(key="param-cbr-fairness-pair").set_value(["Reno-Vegas"]).run()
    titles = [f["spec"]["layout"]["title"]["text"] for f in charts(at)]
    assert any(t.startswith("Each flow's throughput: Reno-Vegas") for t in titles), titles


def _flows_of(con, scenario: str) -> list[dict]:
    return rows_of(con, "SELECT f.*, r.labels['routing'] AS routing, r.labels['trace_format'] AS trace_format, "
                        f"r.seed FROM flow_stats f JOIN runs r USING (run_id) WHERE r.scenario = '{scenario}'")


def _plain_means(flows: list[dict], group) -> dict:
    """Per group: (flows, mean throughput, mean p95 delay) of the flows with both, by hand."""
    out: dict = {}
    for f in flows:
        if f["throughput_kbps"] is None or f["p95_delay_ms"] is None:
            continue
        out.setdefault(group(f), []).append(f)
    return {g: (len(fs), sum(f["throughput_kbps"] for f in fs) / len(fs), sum(f["p95_delay_ms"] for f in fs) / len(fs))
            for g, fs in out.items()}


def test_throughput_delay_points_and_means(app, con):
    at = app("throughput_delay")
    means = frame(at, "variant", "condition", "flows", "mean_throughput_kbps", "mean_p95_delay_ms")
    # one mean per variant and CBR rate, over the seeds: never across CBR rates (issue 15)
    flows = [f for f in rows_of(con, "SELECT f.*, r.labels['cbr_rate_mbps'] AS cbr FROM flow_stats f JOIN runs r "
                                     "USING (run_id) WHERE r.scenario = 'cbr-variants'") if f["ptype"] == "tcp"]
    want = _plain_means(flows, lambda f: (f["name"], f"cbr_rate_mbps={f['cbr']}"))
    assert len(means) == len(want) == 4
    for _, m in means.iterrows():
        n, tp, d = want[(m["variant"], m["condition"])]
        assert m["flows"] == n == 2
        assert close(m["mean_throughput_kbps"], tp) and close(m["mean_p95_delay_ms"], d)
    fig = charts(at)[0]["spec"]
    assert fig["layout"]["xaxis"]["title"]["text"] == "95th-percentile delay (ms)"  # the catalogue title, with its unit
    assert fig["layout"]["xaxis"]["autorange"] == "reversed"        # better is up and right
    assert "better is up and right" in fig["layout"]["title"]["text"]
    xs = np.concatenate([arr(t["x"]) for t in fig["data"] if not t["name"].endswith("mean over seeds")])
    pts = con.sql("SELECT p95_delay_ms FROM flow_stats s JOIN runs r USING (run_id) "
                  "WHERE r.scenario = 'cbr-variants' AND s.ptype = 'tcp'").df()["p95_delay_ms"]
    assert np.allclose(sorted(xs), sorted(pts))


def test_throughput_delay_counts_flows_sharing_fid_0_once(app, con):
    """Two CBR flows share fid 0 in each dumbbell-fid0 run: the CBR0 mean is over 2 flows a
    run (4 in all), not the 8 a join on (run_id, fid) makes of them."""
    at = app("overview", FID0)
    at.sidebar.multiselect(key=f"names-{FID0}").set_value(["CBR0", "Reno", "Vegas"]).run()
    at.switch_page("tk_pages/throughput_delay.py").run()
    assert not at.exception, at.exception[0].message
    means = frame(at, "variant", "flows", "mean_throughput_kbps")
    assert set(means["condition"]) == {""}          # nothing varies but the seed
    flows = [f for f in _flows_of(con, FID0) if f["name"] in ("CBR0", "Reno", "Vegas")]
    assert sum(1 for f in flows if f["name"] == "CBR0" and f["fid"] == 0) == 4
    want = _plain_means(flows, lambda f: f["name"])
    assert want["CBR0"][0] == 4
    got = {m["variant"]: m for _, m in means.iterrows()}
    assert set(got) == set(want)
    for g, (n, tp, d) in want.items():
        assert got[g]["flows"] == n and close(got[g]["mean_throughput_kbps"], tp) and close(got[g]["mean_p95_delay_ms"], d)


def test_throughput_delay_on_an_old_format_wireless_run(app, con):
    """Old-format wireless flows have no fid (NULL): they are joined on their addresses and
    every one of them is counted once."""
    at = app("overview", "manet")
    at.sidebar.multiselect(key="param-manet-trace_format").set_value(["old"]).run()
    at.switch_page("tk_pages/throughput_delay.py").run()
    assert not at.exception, at.exception[0].message
    means = frame(at, "variant", "flows", "mean_throughput_kbps", "mean_p95_delay_ms")
    old = [f for f in _flows_of(con, "manet") if f["trace_format"] == "old"]
    assert old and all(f["fid"] is None for f in old)
    usable = [f for f in old if f["throughput_kbps"] is not None and f["p95_delay_ms"] is not None]
    assert int(means["flows"].sum()) == len(usable) >= 2
    assert close(float((means["flows"] * means["mean_throughput_kbps"]).sum()), sum(f["throughput_kbps"] for f in usable))
    # each old-format flow is its own group (no name without a fid): its own values
    by_value = sorted((round(f["throughput_kbps"], 9), round(f["p95_delay_ms"], 9)) for f in usable)
    assert sorted((round(a, 9), round(b, 9)) for a, b in zip(means["mean_throughput_kbps"], means["mean_p95_delay_ms"])) == by_value


def test_pages_render_on_old_format_wireless_runs(app):
    for page in WIRELESS_PAGES:
        at = app("overview", "manet")
        at.sidebar.multiselect(key="param-manet-trace_format").set_value(["old"]).run()
        at.switch_page(f"tk_pages/{page}.py").run()
        assert not at.exception, (page, at.exception[0].message)


@pytest.mark.parametrize("page", PAGES)
def test_pages_render_on_flows_sharing_fid_0(app, page):
    at = app(page, FID0)
    assert not at.exception, at.exception[0].message


def test_compare_verdict_is_welch_on_the_runs(app, con):
    """The compare page's verdict at CBR 3 Mb/s: Reno against Vegas with Welch's t-test on
    the per-run throughput of flow_stats (scipy here), n = 2 each."""
    from scipy import stats

    at = app("compare")
    text = next(m.value for m in at.markdown if m.value.startswith("**Verdict**"))
    flows = [f for f in rows_of(con, "SELECT f.*, r.labels['cbr_rate_mbps'] AS cbr FROM flow_stats f "
                                     "JOIN runs r USING (run_id) WHERE r.scenario = 'cbr-variants'")
             if f["cbr"] == "3.0" and f["name"] in ("Reno", "Vegas")]
    reno = [f["throughput_kbps"] for f in flows if f["name"] == "Reno"]
    vegas = [f["throughput_kbps"] for f in flows if f["name"] == "Vegas"]
    assert len(reno) == len(vegas) == 2
    p = stats.ttest_ind(reno, vegas, equal_var=False).pvalue
    best, other = ("Reno", "Vegas") if sum(reno) > sum(vegas) else ("Vegas", "Reno")
    gap = abs(sum(reno) - sum(vegas)) / 2
    if p < 0.05:
        assert f"{best} is higher than {other} by {gap:,.1f} kbit/s" in text
    else:
        assert f"no significant difference between {best} and {other}" in text
    assert ("p < 0.001" if p < 0.001 else f"p = {p:.3f}") in text and "n = 2 each" in text


def test_sql_page_runs_read_only_queries(app, con, dash_store):
    at = app("sql")
    # the list of views names every view sql/ defines on the connection, with its columns
    # (not the plumbing tracekit.db.query defines itself: raw_* and the stored facts' *_computed)
    from tracekit.db.sqlfiles import BASE_NAMES

    listed = " ".join(m.value for m in at.markdown)
    defined = {r[0] for r in con.sql("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    assert "packet_facts" in defined and "packet_facts_computed" in BASE_NAMES
    for view in defined - BASE_NAMES - {v for v in defined if v.startswith("raw_")}:
        assert f"**{view}**" in listed, f"the SQL page does not list {view}"
    assert "`throughput_kbps`" in listed and "`jain_index`" in listed
    # the whole flow key: flows share fid 0, old-format wireless flows have none
    q = "SELECT run_id, fid, throughput_kbps FROM flow_stats ORDER BY run_id, fid, src_node, src_port, dst_node, dst_port"
    at.text_area(key="sql-text").input(q)
    at.button[0].click().run()
    assert not at.exception
    got = frame(at, "run_id", "fid", "throughput_kbps")
    want = con.sql(q).df()
    assert len(got) == len(want) and np.allclose(got["throughput_kbps"], want["throughput_kbps"], equal_nan=True)
    assert charts(at), "no quick chart"
    before = sorted(p.name for p in dash_store.rglob("*"))
    for bad in ("CREATE TABLE t AS SELECT 1", f"COPY (SELECT 1) TO '{dash_store}/x.csv'",
                "SELECT * FROM read_csv('/etc/passwd')", "DROP VIEW flow_stats"):
        at.text_area(key="sql-text").input(bad)
        at.button[0].click().run()
        assert not at.exception, bad
        assert at.error, f"no error shown for {bad!r}"
    assert sorted(p.name for p in dash_store.rglob("*")) == before
    # the views are intact afterwards
    at.text_area(key="sql-text").input("SELECT count(*) AS n FROM flow_stats")
    at.button[0].click().run()
    assert frame(at, "n")["n"].iloc[0] == con.sql("SELECT count(*) FROM flow_stats").fetchall()[0][0]


LONG_QUERY = "SELECT count(*) AS n FROM range(1000000000000) WHERE random() < 0.5"


def _typed(at: AppTest, query: str, timeout_s: float | None = None) -> AppTest:
    at.text_area(key="sql-text").input(query)
    if timeout_s is not None:
        at.number_input(key="sql-timeout").set_value(timeout_s)
    at.button[0].click().run()
    assert not at.exception, at.exception[0].message
    return at


def test_sql_page_refuses_explain_analyze_and_sessions_share_nothing(app, con, dash_store):
    """Session A's EXPLAIN ANALYZE UPDATE changed what session B saw (issue 13): now refused,
    and each typed query runs on its own connection, so B sees the views as they are."""
    a, b = app("sql"), app("sql")
    q = "SELECT round(sum(throughput_kbps), 6) AS total_kbps, count(*) AS n FROM flow_stats"
    want = con.sql(q).fetchall()[0]
    before = sorted((p.name, p.stat().st_size) for p in dash_store.rglob("*"))
    for bad in ("EXPLAIN ANALYZE UPDATE flow_stats SET throughput_kbps = 0",
                "explain /* x */ analyse CREATE OR REPLACE VIEW fairness AS SELECT 1 AS jain_index",
                "EXPLAIN (ANALYZE) DROP VIEW flow_stats",
                f"EXPLAIN ANALYZE COPY (SELECT 1 AS x) TO '{dash_store}/x.parquet' (FORMAT parquet)"):
        _typed(a, bad)
        assert a.error and "EXPLAIN" in a.error[0].value, bad
    _typed(b, q)
    got = frame(b, "total_kbps", "n")
    assert (got["total_kbps"].iloc[0], got["n"].iloc[0]) == pytest.approx(want)
    assert sorted((p.name, p.stat().st_size) for p in dash_store.rglob("*")) == before


def test_sql_page_long_query_times_out_without_holding_up_another_session(app):
    import threading

    def queries() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "tracekit-query" and t.is_alive()]

    a, b = app("sql"), app("sql")
    assert until(lambda: not queries(), 60), "another test's query still runs"
    # A's timeout is far longer than B's whole run can take on a loaded machine, and B's
    # answer must come while A's query still runs: a state, not two clock readings
    t = threading.Thread(target=_typed, args=(a, LONG_QUERY, 30))
    t.start()
    assert until(lambda: len(queries()) == 1, 120), "A's query never started"
    [a_query] = queries()
    _typed(b, "SELECT 42 AS answer")
    assert frame(b, "answer")["answer"].tolist() == [42]
    assert a_query.is_alive() and t.is_alive(), "B's answer came only after A's query ended"
    t.join(300)
    assert not t.is_alive()
    assert a.error and a.error[0].value == "query stopped after 30 s (the page's timeout)"
    # A's page is usable afterwards (no timeout: connecting alone may take long under load)
    _typed(a, "SELECT 7 AS x", timeout_s=0)
    assert not a.error, a.error[0].value
    assert frame(a, "x")["x"].tolist() == [7]


def test_sql_page_query_stops_with_its_script_run(app):
    """A's SELECT count(*) FROM range(1e12) kept a core busy after A's browser had gone (issue
    13): a stopped script run (here AppTest's own timeout stops it, as a session ending, a
    rerun or the Cancel button does) interrupts its query."""
    import threading

    def queries() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "tracekit-query" and t.is_alive()]

    assert until(lambda: not queries(), 60), "another test's query still runs"
    at = app("sql")
    at.text_area(key="sql-text").input(LONG_QUERY)
    at.number_input(key="sql-timeout").set_value(0)           # no timeout of its own
    with pytest.raises(RuntimeError, match="timed out"):
        at.button[0].click().run(timeout=8)
    assert until(lambda: not queries(), 120), "the query runs on after its script run stopped"
    # (Cancel's click is such a rerun; AppTest cannot click while a run is going on)
    _typed(at, "SELECT 1 AS one")
    assert frame(at, "one")["one"].tolist() == [1]


def test_svg_download_format(app):
    at = app("compare")
    at.sidebar.button_group(key="image_format").set_value("SVG").run()
    for f in charts(at):
        assert f["config"]["toImageButtonOptions"]["format"] == "svg"


@pytest.mark.parametrize("kind", ["missing", "empty"])
def test_empty_or_missing_store_explains_how_to_fill_it(tmp_path, monkeypatch, kind):
    d = tmp_path / "store"
    if kind == "empty":
        from tracekit.store.store import Store
        Store(d, create=True)
    monkeypatch.setenv("TRACEKIT_DATA", str(d))
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    assert not at.exception
    for page in PAGES[1:] + ["papers"]:
        at.switch_page(f"tk_pages/{page}.py").run()
        assert not at.exception
    code = "\n".join(c.value for c in at.code)
    assert "tracekit sweep" in code and "tracekit run" in code and "tracekit ingest" in code
    assert str(d) in code


def test_not_a_store_is_a_message(tmp_path, monkeypatch):
    (tmp_path / "x.txt").write_text("not a store")
    monkeypatch.setenv("TRACEKIT_DATA", str(tmp_path))
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    assert not at.exception
    assert any("not a tracekit store" in w.value for w in at.warning)


def test_launch_command_and_app_path(tmp_path):
    from tracekit.apps import dashboard

    assert dashboard.app_path() == APP or dashboard.app_path().name == "app.py"
    cmd = dashboard.command(tmp_path, 8765)
    assert cmd[:4] == [sys.executable, "-m", "streamlit", "run"]
    assert cmd[cmd.index("--server.address") + 1] == "127.0.0.1"
    assert cmd[cmd.index("--server.port") + 1] == "8765"
    assert cmd[cmd.index("--server.headless") + 1] == "true"
    assert cmd[-2:] == ["--data", str(tmp_path.resolve())]
    # no port given: none passed, Streamlit binds its 8501 or the next free one itself
    assert "--server.port" not in dashboard.command(tmp_path, None)
    with_papers = dashboard.command(tmp_path, 8765, papers_dir=tmp_path / "papers")
    assert with_papers[-4:] == ["--data", str(tmp_path.resolve()), "--papers", str((tmp_path / "papers").resolve())]


def test_launch_announces_the_port_streamlit_bound(tmp_path, capsys):
    """launch passes Streamlit's output on and announces the address Streamlit printed (the
    port it bound), not one chosen beforehand."""
    import io

    from tracekit.apps import dashboard

    welcome = (b"\n  You can now view your Streamlit app in your browser.\n\n"
               b"  URL: http://127.0.0.1:40123\n\n  URL: http://127.0.0.1:40999\n")
    dashboard._relay(io.BytesIO(welcome), tmp_path)
    out, err = capsys.readouterr()
    assert out == welcome.decode()
    assert err == f"tracekit dashboard: http://127.0.0.1:40123  (store: {tmp_path}; Ctrl-C stops it)\n"


def test_papers_page_with_the_bundled_paper_files(app, dash_store):
    """The Papers page over the bundled paper files (tracekit/experiments/papers/): every
    paper experiment they name is listed, with no result in this store (none saved)."""
    from tracekit.analysis import reproduce as rp

    at = app("papers")
    papers = rp.load_papers()
    if not papers:
        assert any("No paper file" in i.value for i in at.info)
        return
    overview = frame(at, "paper", "experiment", "result")
    assert sorted(zip(overview["paper"], overview["experiment"])) == sorted(
        (p.id, e) for p in papers.values() for e in p.experiments)
    assert overview["result"].isna().all() and not (dash_store / "reproduce").exists()


def test_dashboard_module_does_not_import_streamlit():
    out = subprocess.run([sys.executable, "-c", "import sys, tracekit.apps.dashboard; "
                          "print(any(m.split('.')[0] in ('streamlit', 'plotly') for m in sys.modules))"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


# ---------------------------------------------------------------------------------------
# wireless runs (the manet scenario of the fixture store)

WIRELESS_PAGES = PAGES[:-1] + ["wireless"]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [None, 1])
@pytest.mark.parametrize("page", WIRELESS_PAGES)
def test_pages_render_for_wireless_runs(app, page, seed):
    at = app("overview", "manet")
    if seed:
        at.sidebar.selectbox(key="seed-manet").set_value(seed).run()
    at.switch_page(f"tk_pages/{page}.py").run()
    assert not at.exception, at.exception[0].message
    if page in ("overview", "compare", "sweep", "timeseries", "throughput_delay", "wireless"):
        assert charts(at), f"{page}: no chart for wireless runs"


def test_sidebar_names_the_routing_protocol(app):
    at = app("overview", "manet")
    labels = [m.label for m in at.sidebar.multiselect]
    assert "Routing protocol" in labels and "Queue type" not in labels
    assert sorted(at.sidebar.multiselect(key="queues-manet").value) == ["AODV", "DSDV", "DSR"]


def test_fairness_on_manet_names_no_pairing(app, con):
    """A MANET run has one TCP flow among CBR flows and no pair or variant label: nothing is
    paired, so the Fairness page shows each flow's throughput per routing protocol without
    calling the lone TCP flow a pairing (it titled the chart "Each flow's throughput: TCP 1"
    and drew one x category, "TCP 1"). The bars are the flows' mean throughputs over the seeds
    (the page pins trace_format to new)."""
    at = app("fairness", "manet")
    (fig,) = [f["spec"] for f in charts(at) if f["spec"]["layout"]["title"]["text"].startswith("Each flow's throughput")]
    assert fig["layout"]["title"]["text"].split("<br>")[0] == "Each flow's throughput"
    assert fig["layout"]["xaxis"]["title"]["text"] == "Flow"
    rep = rows_of(con, "SELECT f.name, r.labels['routing'] AS routing, avg(f.throughput_kbps) AS mean "
                       "FROM flow_stats f JOIN runs r USING (run_id) WHERE r.scenario = 'manet' "
                       "AND r.labels['trace_format'] = 'new' GROUP BY ALL")
    names = {r["name"] for r in rep}
    assert "TCP 1" in names and len(names) >= 2
    got = {(t["name"], x): y for t in fig["data"] for x, y in zip(t["x"], arr(t["y"]))}
    assert set(got) == {(r["routing"], r["name"]) for r in rep}
    assert all(close(got[(r["routing"], r["name"])], r["mean"]) for r in rep)
    table = frame(at, "flow", "queue", "metric", "mean")
    assert "pairing" not in table.columns and set(table["flow"]) == names


def _wireless_runs(con):
    """The new-format manet runs: the Wireless page pins trace_format to its first value, new."""
    return rows_of(con, "SELECT w.*, r.labels['routing'] AS routing, r.seed FROM wireless_run_stats w "
                        "JOIN runs r USING (run_id) WHERE r.scenario = 'manet' AND r.labels['trace_format'] = 'new'")


def rows_of(con, sql: str) -> list[dict]:
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def test_wireless_page_compares_routing_protocols(app, con):
    """The bars are each protocol's mean over the seeds of wireless_run_stats (pdr, nrl, ...),
    whiskers the Student t 95% half-width: recomputed here from the per-run rows."""
    from scipy import stats

    at = app("wireless", "manet")
    runs = _wireless_runs(con)
    assert {r["routing"] for r in runs} == {"AODV", "DSDV", "DSR"}
    by_title = {f["spec"]["layout"]["title"]["text"]: f for f in charts(at)}
    for metric, column, title in (("run_pdr", "pdr", "Packet delivery ratio (all flows)"),
                                  ("nrl", "nrl", "Normalised routing load"),
                                  ("run_mean_delay_ms", "mean_delay_ms", "Mean end-to-end delay")):
        fig = next(f for t, f in by_title.items() if t.startswith(title))
        got = {}
        for tr in fig["spec"]["data"]:
            (x,) = tr["x"]
            got[x] = (float(arr(tr["y"])[0]), float(arr(tr["error_y"]["array"])[0]),
                      float(arr(tr["error_y"]["arrayminus"])[0]))
        for proto in ("AODV", "DSDV", "DSR"):
            vals = [r[column] for r in runs if r["routing"] == proto and r[column] is not None]
            assert vals, (proto, column)
            n = len(vals)
            mean = sum(vals) / n
            assert close(got[proto][0], mean), (metric, proto)
            if n > 1:     # the interval, clipped to the metric's range (a ratio's ends at 1, all at 0)
                half = stats.t.ppf(0.975, n - 1) * float(np.std(vals, ddof=1)) / math.sqrt(n)
                top = min(mean + half, 1.0) if column == "pdr" else mean + half
                assert math.isclose(got[proto][1], top - mean, rel_tol=1e-6, abs_tol=1e-12), (metric, proto)
                assert math.isclose(got[proto][2], mean - max(mean - half, 0.0), rel_tol=1e-6, abs_tol=1e-12)
    # the verdict under the delivery-ratio chart: the best two protocols, Welch on the runs
    pdr = {p: [r["pdr"] for r in runs if r["routing"] == p and r["pdr"] is not None] for p in ("AODV", "DSDV", "DSR")}
    a, b = sorted(pdr, key=lambda p: -sum(pdr[p]) / len(pdr[p]))[:2]
    line = next(c.value for c in at.caption if c.value.startswith("Verdict") and "delivered / sent" in c.value)
    if len(set(pdr[a])) == 1 and pdr[a] == pdr[b]:
        assert "identical" in line
    else:
        p = stats.ttest_ind(pdr[a], pdr[b], equal_var=False).pvalue
        assert ("p < 0.001" if p < 0.001 else f"p = {p:.3f}") in line and a in line and b in line


def test_wireless_drops_chart_is_drops_per_run(app, con):
    at = app("wireless", "manet")
    fig = next(f for f in charts(at) if f["spec"]["layout"]["title"]["text"].startswith("Drops per run"))
    drops = rows_of(con, "SELECT d.*, r.labels['routing'] AS routing FROM wireless_drops d JOIN runs r USING (run_id) "
                         "WHERE r.scenario = 'manet' AND r.labels['trace_format'] = 'new'")
    n_runs = {p: sum(1 for r in _wireless_runs(con) if r["routing"] == p) for p in ("AODV", "DSDV", "DSR")}
    want: dict = {}
    for d in drops:
        k = (d["routing"], f"{d['layer']} {d['reason'] or '(none)'}")
        want[k] = want.get(k, 0) + d["drops"]
    got = {}
    for tr in fig["spec"]["data"]:
        for x, y in zip(tr["x"], arr(tr["y"])):
            got[(tr["name"], x)] = float(y)
    assert got and set(got) == set(want)
    for k, total in want.items():
        assert close(got[k], total / n_runs[k[0]]), k


def test_wireless_page_opens_on_the_wireless_runs(app):
    """The sidebar's default scenario is wired (the most runs): the Wireless page picks the
    scenario with wireless runs instead of saying there are none (issue 15); a wired
    scenario chosen afterwards on it says so."""
    at = app("wireless")
    assert at.sidebar.selectbox(key="scenario").value == "manet"
    assert not any("No wireless runs" in i.value for i in at.info) and charts(at)
    at.sidebar.selectbox(key="scenario").set_value("cbr-variants").run()
    assert any("No wireless runs" in i.value for i in at.info)


# ---------------------------------------------------------------------------------------
# issue 15: what a researcher found wrong


def _t_half(vals: list[float]) -> float:
    from scipy import stats

    n = len(vals)
    return float(stats.t.ppf(0.975, n - 1) * np.std(vals, ddof=1) / math.sqrt(n))


def test_compare_pools_the_seeds_of_manet_flows(app, con):
    """A MANET flow ('CBR 1') has other end points in every seed, so replication_stats has a
    row per seed; the Compare page pools them per routing protocol and flow name: one bar per
    (protocol, flow), its height the mean over seeds of flow_stats' pdr (plain Python here),
    its whiskers the Student t interval (scipy) clipped to [0, 1]."""
    at = app("compare", "manet")
    fig = next(f["spec"] for f in charts(at) if f["spec"]["layout"]["title"]["text"].startswith("Packet delivery ratio"))
    flows = rows_of(con, "SELECT f.name, f.pdr, r.labels['routing'] AS routing FROM flow_stats f JOIN runs r "
                         "USING (run_id) WHERE r.scenario = 'manet' AND r.labels['trace_format'] = 'new'")
    want: dict = {}
    for f in flows:
        if f["pdr"] is not None:
            want.setdefault((f["routing"], f["name"]), []).append(f["pdr"])
    got = {}
    for tr in fig["data"]:
        ys, plus, minus = arr(tr["y"]), arr(tr["error_y"]["array"]), arr(tr["error_y"]["arrayminus"])
        for i, x in enumerate(tr["x"]):
            assert (tr["name"], x) not in got, f"two bars for {tr['name']} {x}: seeds not pooled"
            got[(tr["name"], x)] = (float(ys[i]), float(plus[i]), float(minus[i]))
    assert set(got) == set(want) and len(want) >= 9
    for k, vals in want.items():
        assert len(vals) == 2, k                       # seeds 1 and 2
        mean, half = sum(vals) / 2, _t_half(vals)
        y, plus, minus = got[k]
        assert close(y, mean), k
        assert math.isclose(plus, min(mean + half, 1.0) - mean, abs_tol=1e-9), k
        assert math.isclose(minus, mean - max(mean - half, 0.0), abs_tol=1e-9), k
        assert y + plus <= 1.0 + 1e-12 and y - minus >= -1e-12
    title = fig["layout"]["title"]["text"]
    assert "n = 2: wide interval" in title and "clipped to [0, 1]" in title


def test_exported_titles_state_the_conditions(app, con):
    """Every chart of the Compare page carries, in its own title (so in the PNG or SVG the
    camera saves), the scenario, the pinned condition, the seeds and what the whiskers are."""
    at = app("compare")
    seeds = sorted(r[0] for r in con.sql("SELECT DISTINCT seed FROM runs WHERE scenario = 'cbr-variants'").fetchall())
    for f in charts(at):
        title = f["spec"]["layout"]["title"]["text"]
        assert "scenario cbr-variants" in title and "cbr_rate_mbps=3.0" in title, title
        assert f"{len(seeds)} seeds (1-2)" in title and "whiskers: 95% CI of the mean" in title, title
        # the title sits below the modebar's strip (pad), inside a top margin that holds it
        layout = f["spec"]["layout"]
        assert (1 - layout["title"]["y"]) * layout["height"] >= 45 and layout["title"]["yanchor"] == "top"
        assert layout["margin"]["t"] >= 90 + 17 * title.count("<sup>")


def test_time_series_keeps_runs_colours_by_variant_and_shares_the_time_axis(app, con):
    at = app("timeseries")
    key = "ts-runs-cbr-variants"
    runs = rows_of(con, "SELECT run_id, labels['variant'] AS variant, labels['cbr_rate_mbps'] AS cbr, seed, t_end "
                        "FROM runs WHERE scenario = 'cbr-variants' AND trace_kind = 'wired'")
    pick = sorted(r["run_id"] for r in runs if r["cbr"] == "9.0" and r["seed"] == 2)
    at.multiselect(key=key).set_value(pick).run()
    at.sidebar.selectbox(key="scenario").set_value("queue-influence").run()
    assert at.multiselect(key="ts-runs-queue-influence").value, "the run picker is empty after a scenario change"
    at.sidebar.selectbox(key="scenario").set_value("cbr-variants").run()
    assert sorted(at.multiselect(key=key).value) == pick, "the runs chosen before the change are lost"
    figs = {f["spec"]["layout"]["title"]["text"].split("<br>")[0]: f["spec"] for f in charts(at)}
    assert len(figs) == 3
    t_end = max(r["t_end"] for r in runs if r["run_id"] in pick)
    for title, fig in figs.items():
        assert fig["layout"]["xaxis"]["range"] == pytest.approx([0, t_end]), title
    # colours: each variant its own, the same as on the Compare page
    compare = charts(app("compare"))
    bar_colour = {t["name"] if t["name"] in ("Reno", "Vegas") else t["x"][0]: t["marker"]["color"]
                  for t in compare[0]["spec"]["data"]}
    variant = {r["run_id"]: r["variant"] for r in runs}
    for fig in (v for k, v in figs.items() if not k.startswith("Queue")):
        for t in fig["data"]:
            name = next(n for n in ("Reno", "Vegas", "CBR") if n in t["name"])
            if name in bar_colour:
                assert t["line"]["color"] == bar_colour[name], (t["name"], t["line"]["color"])
    q = next(v for k, v in figs.items() if k.startswith("Queue"))
    assert {t["line"]["color"] for t in q["data"]} == {bar_colour[variant[r]] for r in pick}


def test_sql_page_example_joins_runs_and_now_works(app, con):
    """The example query filters flow_stats by scenario through runs (flow_stats has none),
    its numbers are those of the store; the sidebar says its filters do not apply;
    SELECT now() (TIMESTAMPTZ, which DuckDB hands to Python through pytz) works."""
    at = app("sql")
    assert "JOIN runs" in at.text_area(key="sql-text").value and "cbr-variants" in at.text_area(key="sql-text").value
    got = frame(at, "name", "flows", "mean_throughput_kbps")
    flows = rows_of(con, "SELECT f.name, f.throughput_kbps FROM flow_stats f JOIN runs r USING (run_id) "
                         "WHERE r.scenario = 'cbr-variants'")
    for _, row in got.iterrows():
        vals = [f["throughput_kbps"] for f in flows if f["name"] == row["name"]]
        assert row["flows"] == len(vals) and close(row["mean_throughput_kbps"], sum(vals) / len(vals))
    assert any("do not apply to the SQL page" in w.value for w in at.sidebar.info)
    assert frame(at, "view", "columns") is not None
    _typed(at, "SELECT now() AS t, TIMESTAMPTZ '2020-01-02 03:04:05+00' AS t0")
    assert not at.error
    assert str(frame(at, "t", "t0")["t0"].iloc[0]).startswith("2020-01-02 03:04:05")
    import duckdb
    assert duckdb.sql("SELECT TIMESTAMPTZ '2020-01-02 03:04:05+00'").fetchall()   # fetchall needs pytz


# ---------------------------------------------------------------------------------------
# issue 15: what was missing


def _trace_colours(figs: list[dict], name: str) -> set[str]:
    out = set()
    for f in figs:
        for t in f["spec"]["data"]:
            if t.get("name", "").split(" (")[0].split(":")[0] == name:
                c = (t.get("line") or {}).get("color") or (t.get("marker") or {}).get("color")
                if isinstance(c, str):
                    out.add(c)
    return out


def test_one_colour_per_variant_on_every_page(app):
    """Reno and Vegas keep one colour each on every page that draws them, and differ."""
    at = app("compare")
    seen: dict = {"Reno": set(), "Vegas": set()}
    for page in ("compare", "sweep", "timeseries", "throughput_delay", "distributions"):
        at.switch_page(f"tk_pages/{page}.py").run()
        assert not at.exception, page
        figs = charts(at)
        if page == "compare":         # one colour per bar: the x value names the variant
            figs = [{"spec": {"data": [{"name": x, "marker": t["marker"]} for t in f["spec"]["data"] for x in t["x"]]}}
                    for f in figs]
        for n in seen:
            got = _trace_colours(figs, n)
            assert got, (page, n)
            seen[n] |= got
    assert len(seen["Reno"]) == 1 and len(seen["Vegas"]) == 1 and seen["Reno"] != seen["Vegas"], seen


def test_identical_series_are_marked_not_hidden(app):
    import plotly.graph_objects as go
    sys.path.insert(0, str(APP.parent))
    import dash_ui

    fig = go.Figure([go.Scatter(x=[0, 1, 2], y=[1.0, 2.0, 3.0], name="Tahoe", mode="lines"),
                     go.Scatter(x=[0, 1, 2], y=[1.0, 2.0, 3.0], name="Reno", mode="lines"),
                     go.Scatter(x=[0, 1, 2], y=[1.0, 2.0, 3.5], name="Vegas", mode="lines"),
                     go.Scatter(x=[2, 0, 1], y=[3.0, 1.0, 2.0], name="Newreno", mode="markers")])  # same points
    assert dash_ui.mark_identical(fig) == [["Tahoe", "Reno", "Newreno"]]
    names = [t.name for t in fig.data]
    assert names == ["Tahoe (= Reno, Newreno)", "Reno (= Tahoe, Newreno)", "Vegas", "Newreno (= Tahoe, Reno)"]
    assert fig.data[0].line.dash != fig.data[1].line.dash and fig.data[2].line.dash is None
    assert fig.data[3].marker.symbol not in (None, "circle")
    empty = go.Figure([go.Scatter(x=[], y=[], name="retransmission (0)"), go.Scatter(x=[], y=[], name="dropped (0)")])
    assert dash_ui.mark_identical(empty) == []          # two empty traces hide nothing
    # on a page: a manet run traced in both formats is one simulation, its cwnd_ twice
    at = app("timeseries", "manet")
    cw = next(f["spec"] for f in charts(at) if f["spec"]["layout"]["title"]["text"].startswith("Congestion window"))
    marked = [t["name"] for t in cw["data"] if " (= " in t["name"]]
    assert len(marked) == 2, [t["name"] for t in cw["data"]]
    assert any(c.value.startswith("Identical series") for c in at.caption)


def _quantile(v: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), by hand."""
    v = sorted(v)
    pos = q * (len(v) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def test_distributions_are_the_packets_delays(app, con):
    """The delay CDF and percentiles, pooled per variant, over the delivered data packets of
    the page's runs (CBR 3 Mb/s pinned); the box plot's points are flow_stats values."""
    at = app("distributions")
    pk = rows_of(con, "SELECT f.name, (p.t_recv - p.t_sent) * 1000 AS d FROM packets p JOIN flow_stats f "
                      "ON f.run_id = p.run_id AND f.fid = p.fid AND f.src_node = p.src_node AND f.dst_node = p.dst_node "
                      "AND f.src_port = p.src_port AND f.dst_port = p.dst_port JOIN runs r ON r.run_id = p.run_id "
                      "WHERE r.scenario = 'cbr-variants' AND r.labels['cbr_rate_mbps'] = '3.0' "
                      "AND p.t_recv IS NOT NULL AND f.name IN ('Reno', 'Vegas')")
    stats = frame(at, "group", "packets", "p50_ms", "p95_ms", "p99_ms", "max_ms")
    assert set(stats["group"]) == {"Reno", "Vegas"}
    for _, r in stats.iterrows():
        v = [p["d"] for p in pk if p["name"] == r["group"]]
        assert r["packets"] == len(v) > 100
        for q, col in ((0.5, "p50_ms"), (0.95, "p95_ms"), (0.99, "p99_ms"), (1.0, "max_ms")):
            assert math.isclose(r[col], _quantile(v, q), rel_tol=1e-9), (r["group"], col)
    cdf = next(f["spec"] for f in charts(at) if "CDF" in f["spec"]["layout"]["title"]["text"])
    for t in cdf["data"]:
        ys = arr(t["y"])
        assert ys[-1] == 1.0 and np.all(np.diff(ys) > 0) and np.all(np.diff(arr(t["x"])) >= 0)
    box = next(f["spec"] for f in charts(at) if "box" in f["spec"]["layout"]["title"]["text"])
    got = sorted(float(y) for t in box["data"] for y in arr(t["y"]))
    want = sorted(r[0] for r in con.sql(
        "SELECT f.throughput_kbps FROM flow_stats f JOIN runs r USING (run_id) WHERE r.scenario = 'cbr-variants' "
        "AND r.labels['cbr_rate_mbps'] = '3.0' AND f.name IN ('Reno', 'Vegas')").fetchall())
    assert np.allclose(got, want)


def test_links_page_drops_queues_rtt_and_time_sequence(app, con):
    at = app("links")
    run = at.selectbox(key="links-run-cbr-variants").value
    per_run = rows_of(con, "SELECT f.run_id, sum(f.dropped_pkts) AS d FROM flow_stats f JOIN runs r USING (run_id) "
                           "WHERE r.scenario = 'cbr-variants' AND f.name IN ('Reno', 'Vegas') GROUP BY 1")
    assert {r["run_id"]: r["d"] for r in per_run}[run] == max(r["d"] for r in per_run)   # the most drops first
    figs = {f["spec"]["layout"]["title"]["text"].split("<br>")[0]: f["spec"] for f in charts(at)}
    events = rows_of(con, f"SELECT event, time, from_node, to_node, ptype, fid, src_node, src_port, dst_node, dst_port, "
                          f"seq, pkt_id FROM events WHERE run_id = '{run}' ORDER BY line_no")
    flows = rows_of(con, f"SELECT fid, name, src_node, src_port, dst_node, dst_port, ptype FROM flow_stats "
                         f"WHERE run_id = '{run}'")
    name_of = {(f["fid"], f["src_node"], f["src_port"], f["dst_node"], f["dst_port"]): f["name"] for f in flows}
    drops = [e for e in events if e["event"] == "d"]
    # drops per flow: the flow's data packets' drops, summed over the bins
    dr = figs["Drops per flow over time"]
    per = {t["name"]: float(arr(t["y"]).sum()) for t in dr["data"]}
    for name in {f["name"] for f in flows}:
        n = sum(1 for e in drops if e["ptype"] != "ack"
                and name_of.get((e["fid"], e["src_node"], e["src_port"], e["dst_node"], e["dst_port"])) == name)
        assert per.get(name, 0.0) == n, (name, per)
    assert sum(per.values()) == len(drops) and len(drops) > 0
    # per link: queue_delay's numbers and the drops on the link
    links = frame(at, "link", "queued_pkts", "mean_queue_delay_ms", "drops")
    qd = {(r["from_node"], r["to_node"]): r for r in rows_of(con, f"SELECT * FROM queue_delay WHERE run_id = '{run}'")}
    for _, r in links.iterrows():
        a, b = map(int, r["link"].split("→"))
        assert r["drops"] == sum(1 for e in drops if (e["from_node"], e["to_node"]) == (a, b))
        if (a, b) in qd:
            assert r["queued_pkts"] == qd[(a, b)]["pkts"] and close(r["mean_queue_delay_ms"], qd[(a, b)]["mean_ms"])
    # RTT over time: the rtt_samples of the run; their mean is the rtt view's
    rtt = figs["Round-trip time of each sampled segment (rtt_samples)"]
    ys = np.concatenate([arr(t["y"]) for t in rtt["data"]])
    (n, mean_ms), = con.sql(f"SELECT samples, mean_ms FROM rtt WHERE run_id = '{run}' AND fid = 1").fetchall()
    assert len(ys) == n and math.isclose(float(ys.mean()), mean_ms, rel_tol=1e-9)
    # time-sequence graph of the TCP flow: retransmission markers = the view's count; drops = its d events
    ts = figs[next(k for k in figs if k.startswith("Time-sequence graph"))]
    by = {t["name"].split(" (")[0]: t for t in ts["data"]}
    (rx,), = con.sql(f"SELECT retransmitted_pkts FROM retransmissions WHERE run_id = '{run}' AND fid = 1").fetchall()
    assert len(arr(by["retransmission"]["y"])) == rx
    tcp_key = next(k for k, v in name_of.items() if k[0] == 1)
    want_drops = [e for e in drops if e["ptype"] == "tcp" and (e["fid"], e["src_node"], e["src_port"], e["dst_node"],
                                                               e["dst_port"]) == tcp_key]
    assert sorted(arr(by["dropped"]["y"]).tolist()) == sorted(e["seq"] for e in want_drops)
    rx_table = frame(at, "run", "name", "retransmitted_pkts")
    assert set(rx_table["run_id"]) == {r[0] for r in con.sql(
        "SELECT run_id FROM runs WHERE scenario = 'cbr-variants' AND trace_kind = 'wired'").fetchall()}


def test_links_page_red_average_queue(app, con):
    at = app("links", "queue-influence")
    red = next(f["spec"] for f in charts(at) if f["spec"]["layout"]["title"]["text"].startswith("RED's average queue"))
    n = con.sql("SELECT count(*) FROM red_vars v JOIN runs r USING (run_id) WHERE r.scenario = 'queue-influence' "
                "AND (v.var LIKE 'ave%' OR v.var LIKE 'curq%')").fetchall()[0][0]
    assert n > 0 and sum(len(arr(t["y"])) for t in red["data"]) == n
    assert "not of this run" in red["layout"]["title"]["text"]


def _position(lines: list[dict], t: float) -> tuple[float, float]:
    """A node at time t from its M lines, by hand: the last line at or before t (else the
    first line's start), moving towards its destination at its speed until it arrives."""
    past = [m for m in lines if m["time"] <= t]
    if not past:
        return lines[0]["x"], lines[0]["y"]
    m = past[-1]
    dx, dy = m["dest_x"] - m["x"], m["dest_y"] - m["y"]
    dist = math.hypot(dx, dy)
    if dist == 0 or m["speed_mps"] * (t - m["time"]) >= dist:
        return m["dest_x"], m["dest_y"]
    f = m["speed_mps"] * (t - m["time"]) / dist
    return m["x"] + f * dx, m["y"] + f * dy


def test_wireless_map_positions_and_forwarding(app, con):
    at = app("wireless", "manet")
    run = at.selectbox(key="wireless-run").value
    moves = rows_of(con, f"SELECT * FROM wireless_movements WHERE run_id = '{run}' ORDER BY node, time, line_no")
    assert moves
    fwd = {r["node"]: r["fwd_data_pkts"] + r["fwd_routing_pkts"]
           for r in rows_of(con, f"SELECT * FROM node_forwarding WHERE run_id = '{run}'")}
    for t in (0.0, 9.0):
        at.slider(key=f"wireless-t-{run}").set_value(t).run()
        fig = next(f["spec"] for f in charts(at) if f["spec"]["layout"]["title"]["text"].startswith("Node positions"))
        (tr,) = fig["data"]
        nodes = [int(x) for x in tr["text"]]
        for i, node in enumerate(nodes):
            x, y = _position([m for m in moves if m["node"] == node], t)
            assert math.isclose(float(arr(tr["x"])[i]), x, abs_tol=1e-9) and math.isclose(float(arr(tr["y"])[i]), y, abs_tol=1e-9)
            assert float(arr(tr["marker"]["color"])[i]) == fwd.get(node, 0)
    assert any(m["time"] <= 9.0 and m["speed_mps"] > 0 for m in moves), "no node moved before 9 s: a weak test"


def test_time_series_draws_a_sampled_cwnd_file_beside_the_agents_cwnd(tmp_path, monkeypatch):
    """A two-column `time value` file (a Tcl proc's cwnd samples: the series view), ingested
    with the packet trace's sim_id and var=cwnd, is drawn in the cwnd chart as it was written,
    beside the agents' own cwnd_ trace of that simulation."""
    from tracekit.ingest.pipeline import ingest_paths

    store = tmp_path / "store"
    sample = REPO / "sample_traces" / "reno-vs-vegas" / "DropTail-seed1"
    ingest_paths(store, [sample / "packets.tr.zst", sample / "cwnd.tr.zst"])
    c = connect(store)
    [(packet_run, sim)] = c.execute("SELECT run_id, labels['sim_id'] FROM runs WHERE trace_kind = 'wired'").fetchall()
    c.close()
    samples = [(0.1, 1.0), (0.2, 2.0), (0.3, 4.0), (0.4, 8.0), (0.5, 4.0)]     # written by hand
    f = tmp_path / "cwnd_reno.txt"
    f.write_text("".join(f"{t} {v}\n" for t, v in samples))
    [r] = ingest_paths(store, [f], labels={"sim_id": sim, "var": "cwnd", "flow": "Reno"})
    assert r.status == "added"
    monkeypatch.setenv("TRACEKIT_DATA", str(store))
    at = AppTest.from_file(str(APP), default_timeout=180).run()
    at.sidebar.selectbox(key="scenario").set_value("reno-vs-vegas").run()
    at.switch_page("tk_pages/timeseries.py").run()
    assert not at.exception, at.exception[0].message
    assert at.multiselect(key="ts-runs-reno-vs-vegas").value == [packet_run]
    cwnd = next(f["spec"] for f in charts(at) if f["spec"]["layout"]["title"]["text"].startswith("Congestion window"))
    names = [t["name"] for t in cwnd["data"]]
    sampled = [t for t in cwnd["data"] if t["name"] == "sampled cwnd Reno"]
    assert len(sampled) == 1, names
    xs, ys = sampled[0]["x"], sampled[0]["y"]
    xs = xs if isinstance(xs, list) else list(np.frombuffer(base64.b64decode(xs["bdata"]), dtype=xs["dtype"]))
    ys = ys if isinstance(ys, list) else list(np.frombuffer(base64.b64decode(ys["bdata"]), dtype=ys["dtype"]))
    assert [(float(x), float(y)) for x, y in zip(xs, ys)] == samples
    assert len(names) >= 3     # the agents' own cwnd_ of Reno and Vegas are still drawn
    colour = {t["name"]: t["line"]["color"] for t in cwnd["data"]}
    assert colour["sampled cwnd Reno"] == next(v for k, v in colour.items() if k != "sampled cwnd Reno" and "Reno" in k)
