"""`tracekit report` on a store of real ns-2 runs (queue-influence, DropTail/RED x CBR 1/5 Mb/s,
seeds 1-2, 1 simulated second): the report's table numbers equal those computed here from
flow_stats rows with plain Python and scipy's Student t; the conditions name what was swept,
fixed and seeded; the file carries plotly.js and no external resource; Chromium with the
network blocked draws every chart; a bad selection is one line, exit 1 and no file."""
from __future__ import annotations

import math
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import NS

QUEUES = ["DropTail", "RED"]
CBR_MBPS = ["1", "5"]
SEEDS = [1, 2]
FIXED = {"duration": "1", "cbr_start": "0.3", "cbr_stop": "0.8"}


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    if not os.access(NS, os.X_OK):
        pytest.skip("ns-2 (/usr/bin/ns) is not installed")
    from tracekit.experiments.sweep import plan_sweep, run_sims

    d = tmp_path_factory.mktemp("report") / "store"
    specs = plan_sweep("queue-influence", [("queue", QUEUES), ("cbr_rate_mbps", CBR_MBPS)], SEEDS, FIXED)
    results = run_sims(specs, d, jobs=2)
    assert [r.status for r in results] == ["done"] * len(specs), [r.error for r in results if r.error]
    return d


@pytest.fixture(scope="module")
def report_file(store, tmp_path_factory):
    """The report written by the CLI (in process), with its stdout and stderr."""
    from typer.testing import CliRunner

    from tracekit.apps.cli import app

    out = tmp_path_factory.mktemp("report-out") / "report.html"
    res = CliRunner().invoke(app, ["report", "--where", "scenario=queue-influence", "-o", str(out), "--data", str(store)])
    assert res.exit_code == 0, res.stderr + repr(res.exception)
    return out, res.stdout, res.stderr


class _Tables(HTMLParser):
    """Rows of the comparison tables: (metric, per, level, n, mean, ci half-width)."""

    def __init__(self):
        super().__init__()
        self.rows: list[dict] = []
        self.table: dict | None = None
        self.row: dict | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and "comparison" in (a.get("class") or ""):
            self.table = a
        elif tag == "tr" and self.table is not None and a.get("class") == "group":
            self.row = {"metric": self.table["data-metric"], "per": self.table["data-per"],
                        "level": a["data-level"], "n": int(a["data-n"])}
            self.rows.append(self.row)
        elif tag == "td" and self.row is not None and "data-value" in a:
            cls = (a.get("class") or "").split()
            for k in ("mean", "ci", "sd"):
                if k in cls:
                    self.row[k] = float(a["data-value"])

    def handle_endtag(self, tag):
        if tag == "table":
            self.table, self.row = None, None


@pytest.fixture(scope="module")
def flow_rows(store) -> tuple[dict, list[dict]]:
    """The runs' labels {run_id: (queue, cbr_rate_mbps)} and the flow_stats rows as dicts."""
    from tracekit.db.query import connect

    con = connect(store)
    labels = {rid: (q, c) for rid, q, c in con.execute(
        "SELECT run_id, labels['queue'], labels['cbr_rate_mbps'] FROM runs WHERE trace_kind = 'wired'").fetchall()}
    cur = con.execute("SELECT * FROM flow_stats")
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    con.close()
    return labels, rows


def _independent(flow_rows, column: str) -> dict[tuple[str, str], list[float]]:
    """Per (queue, cbr_rate_mbps): the per-run values of a flow_stats column, each run's TCP
    flows averaged, straight from the view's rows."""
    labels, rows = flow_rows
    per_run: dict[str, list[float]] = {}
    for r in rows:
        if r["ptype"] == "tcp" and r[column] is not None and r["run_id"] in labels:
            per_run.setdefault(r["run_id"], []).append(r[column])
    out: dict[tuple[str, str], list[float]] = {}
    for rid, vals in per_run.items():
        out.setdefault(labels[rid], []).append(sum(vals) / len(vals))
    return out


@pytest.mark.parametrize("metric", ["throughput_kbps", "mean_delay_ms"])
def test_table_numbers_equal_an_independent_computation(report_file, flow_rows, metric):
    from scipy import stats

    path, _, _ = report_file
    parser = _Tables()
    parser.feed(path.read_text())
    rows = [r for r in parser.rows if r["metric"] == metric]
    expected = _independent(flow_rows, metric)
    assert len(rows) == len(expected) == len(QUEUES) * len(CBR_MBPS)
    for r in rows:
        cbr = r["per"].removeprefix("cbr_rate_mbps=")
        vals = expected[(r["level"], str(float(cbr)))]
        n = len(vals)
        mean = sum(vals) / n
        sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (n - 1))
        assert r["n"] == n == len(SEEDS)
        assert r["mean"] == pytest.approx(mean, rel=1e-9)
        assert r["sd"] == pytest.approx(sd, rel=1e-6, abs=1e-12)
        assert r["ci"] == pytest.approx(stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n), rel=1e-6, abs=1e-12)


def test_verdict_p_value_is_welchs(report_file, flow_rows):
    """The first throughput verdict's p (as printed) is scipy's Welch test on the same runs."""
    from scipy import stats

    path, _, _ = report_file
    text = path.read_text()
    m = re.search(r'<table class="comparison" data-metric="throughput_kbps" data-per="cbr_rate_mbps=(\S+?)">.*?'
                  r'<p class="verdict (\w+)".*?</p>', text, re.S)
    assert m, "no throughput verdict"
    kind, cbr = m.group(2), m.group(1)
    vals = _independent(flow_rows, "throughput_kbps")
    a, b = vals[("DropTail", str(float(cbr)))], vals[("RED", str(float(cbr)))]
    p = stats.ttest_ind(a, b, equal_var=False).pvalue
    verdict = re.sub(r"<[^>]+>", "", m.group(0).split('<p class="verdict')[1])
    assert kind in ("difference", "no_difference"), verdict      # two seeds per group: Welch's test applies
    assert (kind == "difference") == (p < 0.05)
    shown = re.search(r"p (?:=|<) ([0-9.]+)", verdict)
    assert shown, verdict
    assert (p < 0.001) if "p < 0.001" in verdict else float(shown.group(1)) == pytest.approx(p, abs=0.0006)


def test_conditions_come_first_and_say_what_was_run(report_file):
    path, stdout, stderr = report_file
    text = path.read_text()
    assert text.index("Conditions") < text.index("Comparison tables") < text.index("Figure 1.")
    conditions = text[text.index("Conditions"):text.index("Comparison tables")]
    assert "queue = DropTail, RED" in conditions
    assert "cbr_rate_mbps = 1.0, 5.0 Mb/s" in conditions
    assert "2 distinct (1-2); 2 per configuration, 4 configurations" in conditions
    assert re.search(r'data-param="duration"><td>duration</td><td>1.0</td><td>s</td>', conditions)
    assert "A seed varies RED" in conditions
    assert "2.35" in conditions                         # ns -version of the machine
    from tracekit import __version__

    assert f"runs ingested by {__version__}" in conditions
    assert "tracekit: report:" in stderr                # progress
    assert re.match(r"wrote .*report\.html \(\d+\.\d MB; 1 scenario\(s\), \d+ figures\)", stdout)


def _expected_figures() -> int:
    # throughput, mean delay, p95 delay, drop rate against cbr_rate_mbps (Jain: one TCP flow per
    # run, undefined), throughput vs delay, one delay CDF per CBR rate
    return 4 + 1 + len(CBR_MBPS)


def test_file_is_self_contained(report_file):
    from plotly.offline import get_plotlyjs

    path, _, _ = report_file
    text = path.read_text()
    assert get_plotlyjs()[:2000] in text                # plotly.js written into the file
    assert not re.search(r"<script[^>]*\bsrc\s*=", text, re.I)
    assert not re.search(r"<link[^>]*\bhref\s*=", text, re.I)
    assert text.count('<figure class="report-figure"') == _expected_figures()
    assert not [p for p in path.parent.iterdir() if p.name != path.name]    # no temporary file left


CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)


def test_chromium_offline_draws_every_chart(report_file):
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed")
    api = pytest.importorskip("playwright.sync_api")
    path, _, _ = report_file
    n = _expected_figures()
    requested: list[str] = []
    errors: list[str] = []
    with api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            ctx = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})

            def route(r):
                if r.request.url.startswith("file:"):
                    r.continue_()
                else:
                    requested.append(r.request.url)
                    r.abort()

            ctx.route("**/*", route)
            page = ctx.new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(path.as_uri())
            page.wait_for_function(
                f"() => document.querySelectorAll('.js-plotly-plot').length === {n} && "
                "[...document.querySelectorAll('.js-plotly-plot')].every(d => d.querySelector('.main-svg .trace'))",
                timeout=60_000)
            assert page.locator(".js-plotly-plot").count() == n
            # every chart drew its data: a trace group in each plot area
            assert page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot')]"
                                 ".filter(d => d.querySelector('.main-svg .trace')).length") == n
        finally:
            browser.close()
    assert not requested, requested
    assert not errors, errors


@pytest.mark.parametrize("args, message", [
    (["--where", "scenario=no-such-scenario"], "no runs with a seed match the selection (scenario=no-such-scenario)"),
    (["--experiment", "cbr-exp1"], "none of experiment cbr-exp1's"),
    (["--where", "scenario"], "must look like KEY=VALUE"),
])
def test_bad_selection_is_one_line_and_no_file(store, tmp_path, tracekit_inproc, args, message):
    out = tmp_path / "r.html"
    res = tracekit_inproc("report", *args, "-o", out, data=store)
    assert res.returncode == 1, res
    errors = [ln for ln in res.stderr.splitlines() if not ln.startswith("tracekit: report:")]
    assert len(errors) == 1 and errors[0].startswith("tracekit: error: ") and message in errors[0], res.stderr
    assert list(tmp_path.iterdir()) == []


def test_unwritable_output_fails_before_the_work(store, tmp_path, tracekit_inproc):
    res = tracekit_inproc("report", "-o", tmp_path / "missing" / "r.html", data=store)
    assert res.returncode == 1
    assert res.stderr.strip() == f"tracekit: error: {tmp_path / 'missing'}: no such directory (for the report r.html)"
    assert "tracekit: report:" not in res.stderr


def test_without_plotly_one_line_names_the_extra(store, tmp_path, tracekit_inproc, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "plotly", None)        # import plotly fails, as when not installed
    res = tracekit_inproc("report", "-o", tmp_path / "r.html", data=store)
    assert res.returncode == 1
    assert res.stderr.strip() == "tracekit: error: tracekit report draws with plotly: pip install 'tracekit[dashboard]'"
    assert list(tmp_path.iterdir()) == []


def test_dashboard_report_download_is_the_cli_report(store, report_file):
    """dash_data.report_html (the sidebar's Download report) gives the report the CLI wrote,
    its figures and table numbers; a scenario without runs gives a page saying why."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "dashboards"))
    try:
        import dash_data as dd
    finally:
        sys.path.pop(0)
    status = dd.store_status(store)
    got = dd.report_html(status, "queue-influence").decode()
    cli = report_file[0].read_text()
    assert got.count('<figure class="report-figure"') == cli.count('<figure class="report-figure"') == _expected_figures()
    values = lambda t: [float(v) for v in re.findall(r'data-value="([^"]+)"', t)]    # noqa: E731
    assert values(got) and values(got) == pytest.approx(values(cli), rel=1e-9)   # DuckDB's parallel sums: last bits
    assert dd.report_html(status, "queue-influence") is dd.report_html(status, "queue-influence")     # kept
    bad = dd.report_html(status, "no-such-scenario").decode()
    assert "tracekit report: error: no runs with a seed match the selection (scenario=no-such-scenario)" in bad


def test_the_paper_section_lists_every_claim_of_the_experiment(store):
    """With an experiment a paper names, the report sets the paper beside the store's runs
    (tracekit reproduce's evaluate, no simulation run): one row per claim the paper files make
    about it, counted here from the files themselves."""
    import tomllib

    from tracekit.apps.report import _reproduce, _reproduce_html
    from tracekit.analysis.reproduce import PAPERS_DIR

    claims = [c for f in sorted(PAPERS_DIR.glob("*.toml")) for c in tomllib.loads(f.read_text()).get("claims", [])
              if c.get("experiment") == "cbr-exp3"]
    assert claims
    res = _reproduce(store, "cbr-exp3", True, lambda msg: None)
    assert res.n_runs == 0                  # none of its simulations is in this store: nothing is run
    text = _reproduce_html(res)
    assert text.count("<tr><td>") == len(claims) + sum(1 for r in res.rows)
    assert "Set beside the paper: experiment cbr-exp3 (quick version)" in text
    import html

    assert "0 of the experiment's 12 simulations are in the store" in html.unescape(text)
